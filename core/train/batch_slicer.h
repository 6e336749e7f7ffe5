#pragma once
// Cuts a pipeline batch (an Element whose features have the batch first) into the fp32 slices
// the replicas train on: the model inputs, the targets, and per-row weights (a sample-weight
// feature times Keras class weights). Any numeric dtype converts to fp32.

#include "io/error.h"
#include "train/replica.h"

#include <optional>
#include <utility>
#include <vector>

namespace sluice::pipeline {
struct Element;
}

namespace sluice::train {

struct SampleWeighting
{
    std::optional<std::size_t> sampleWeightFeature;              // element index of a feature of B values
    std::vector<std::pair<std::int64_t, float>> classWeights;    // Keras class_weight (single output)
};

// Rows in the batch (its first feature's leading dimension); an error when features disagree.
Result<std::int64_t> batchRows(const Model &model, const pipeline::Element &batch);

// Fills `slice` with rows [begin, end) of `batch`; reuses its buffers.
void sliceBatch(const Model &model, const pipeline::Element &batch, const SampleWeighting &weighting, std::int64_t begin, std::int64_t end,
                BatchSlice &slice);

// Splits `rows` as tf.distribute splits a global batch over `parts` replicas: as evenly as
// possible, the first (rows % parts) replicas taking one more row. Returns parts+1 boundaries.
std::vector<std::int64_t> splitRows(std::int64_t rows, int parts);

} // namespace sluice::train
