#pragma once
// Keras Discretization's adapt, step for step: each batch is summarized (sorted, every
// step-th value kept with weight step), merged into the running summary and compressed to
// about 1/epsilon weighted points; the bin boundaries are that summary compressed to num_bins
// points, the last dropped (keras/src/layers/preprocessing/discretization.py: summarize,
// merge_summaries, compress_summary, get_bin_boundaries). Not exact quantiles: Keras's
// approximation, reproduced in the same float32/float64 steps so that the boundaries, and so
// the bucket of every value, are Keras's.
//
// One difference is possible: numpy's argsort does not keep tied values in their order, and
// where tied summary points carry different weights Keras's result depends on the order numpy
// happens to give. Here ties keep their order (a stable sort).
//
// Threading: one summary per adapt pass; not shared.

#include <cstdint>
#include <vector>

namespace sluice::pipeline {

class QuantileSummary
{
public:
    explicit QuantileSummary(double epsilon) : m_epsilon(epsilon) {}

    // One Keras update_state: the values of one batch (one element of the adapted dataset),
    // already float32 as Keras makes them; NaN is the caller's to refuse.
    void update(std::vector<float> batch);
    bool empty() const { return m_summary.values.empty(); }
    // Keras's finalize_state: num_bins - 1 boundaries (fewer when there are few values, as Keras).
    std::vector<float> binBoundaries(std::int64_t numBins) const;

private:
    struct Points
    {
        std::vector<float> values, weights; // a summary: sorted values and their weights
    };
    static Points compress(Points summary, double epsilon);

    double m_epsilon;
    Points m_summary;
};

} // namespace sluice::pipeline
