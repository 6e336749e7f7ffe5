#pragma once
// One replica of a mirrored model: its own activations, layer scratch, gradient buffer and
// epoch metrics over the shared, immutable Model and the shared weights. The trainer runs one
// Replica per slice of the global batch (each a oneTBB task), then all-reduces the gradients.
//
// Threading: a Replica is used by one task at a time; the Model and the weights it reads are
// shared read-only during a step.

#include "train/model.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace sluice::train {

// The rows of a global batch one replica works on, as fp32.
struct BatchSlice
{
    std::int64_t rows = 0;
    std::int64_t globalRowOffset = 0;
    std::vector<FloatTensor> inputs;  // per model input
    std::vector<FloatTensor> targets; // per model output
    std::vector<float> weights;       // per row (sample weight x class weight); empty: all 1
};

struct SliceResult
{
    // Per output: sum over rows of weight_i * loss_i (not yet divided by the batch size).
    std::vector<double> outputLossSums;
    bool finite = true;
};

class Replica
{
public:
    // Without `withGradients` the replica has no gradient buffer (validation, or metrics only
    // for a GPU replica) and runs forward only.
    explicit Replica(const Model &model, bool withGradients = true);
    ~Replica();

    // Forward over `slice`; with `backward`, also the gradients of
    //   scale * sum_outputs loss_weight * sum_i w_i * loss_i
    // into gradients() (zeroed first). Metrics (when `updateMetrics`) accumulate.
    SliceResult run(const PassContext &ctx, std::span<const float> weights, const BatchSlice &slice, float scale, bool backward, bool updateMetrics);

    std::vector<float> &gradients() { return m_gradients; }
    // Output of node `index` from the last run (for tests and predictions).
    const FloatTensor &activation(std::size_t index) const { return m_activations[index]; }

    // Epoch metrics: per output, per metric name.
    std::vector<std::vector<std::unique_ptr<Metric>>> &metrics() { return m_metrics; }
    void resetMetrics();

private:
    const Model &m_model;
    std::vector<FloatTensor> m_activations;  // per node
    std::vector<FloatTensor> m_dActivations; // per node
    std::vector<FloatTensor> m_dScratch;     // per input slot: a layer's dInput before adding (fan-out)
    std::vector<LayerState> m_states;        // per node
    std::vector<float> m_gradients;
    std::vector<float> m_lossScratch;
    std::vector<std::vector<std::unique_ptr<Metric>>> m_metrics;
};

} // namespace sluice::train
