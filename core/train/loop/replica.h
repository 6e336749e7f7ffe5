#pragma once
// One replica of a mirrored model: its own activations, layer scratch, gradient buffer and
// epoch metrics over the shared, immutable Model and the shared weights. The trainer runs one
// Replica per slice of the global batch (each a oneTBB task), then all-reduces the gradients.
//
// Threading: a Replica is used by one task at a time; the Model and the weights it reads are
// shared read-only during a step.

#include "train/model/model.h"

#include <cstdint>
#include <memory>
#include <optional>
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
    // A layer refused its input (an Embedding id out of range): the pass stopped there.
    std::optional<Error> error;
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
    // With synchronized layers (Layer::syncCount()) in training, a replica alone is the whole
    // batch: their sums are its own. Several replicas go through start()/resume() instead.
    SliceResult run(const PassContext &ctx, std::span<const float> weights, const BatchSlice &slice, float scale, bool backward, bool updateMetrics);

    // The same run in steps, for models with synchronized layers: start() runs up to the first
    // such layer (or to the end); while waiting(), localSums() is this replica's part of the
    // sums, and resume() hands over the sums over every replica and process and runs on to the
    // next one. Every replica stops at the same layers in the same order, an empty slice too
    // (its sums are zeros). `slice` and `weights` must outlive the run.
    void start(const PassContext &ctx, std::span<const float> weights, const BatchSlice &slice, float scale, bool backward, bool updateMetrics);
    // Forward only, without losses or metrics (a model built for predictions may lack targets,
    // ModelBuildOptions::targetsOptional); the outputs are then activation(output.node).
    // ctx.training should be false: inference, as Keras's predict.
    SliceResult predict(const PassContext &ctx, std::span<const float> weights, const BatchSlice &slice);
    bool waiting() const { return m_waiting; }
    std::span<const double> localSums() const { return m_sums; }
    void resume(std::span<const double> globalSums);
    const SliceResult &result() const { return m_result; }

    std::vector<float> &gradients() { return m_gradients; }
    // Zeroes the gradient buffer for a step without rows: the dense ranges, and only the rows of
    // row-sparse tables that the last step used (the rest of them is zero already). Whoever adds
    // other rows into this buffer (an all-reduce into it) must say so with setTouchedRows, as
    // reduceGradients does, or they would stay in the next step's gradient.
    void clearGradients();
    // Per Model::rowSparseParameters(): the sorted, distinct rows this replica's last backward
    // added to (the rest of that table's gradient is zero).
    const std::vector<std::vector<std::int64_t>> &touchedRows() const { return m_rows; }
    // After an all-reduce into this replica's buffer: the rows it now holds (reduceGradients).
    void setTouchedRows(const std::vector<std::vector<std::int64_t>> &rows) { m_rows = rows; }
    // Output of node `index` from the last run (for tests and predictions).
    const FloatTensor &activation(std::size_t index) const { return m_activations[index]; }

    // Epoch metrics: per output, per metric name.
    std::vector<std::vector<std::unique_ptr<Metric>>> &metrics() { return m_metrics; }
    void resetMetrics();

private:
    void runOn();             // forward, losses and backward from the cursor to the next wait or the end
    void computeLosses();
    void backwardNode(std::size_t i, std::span<const double> syncedSums);
    bool synchronizedAt(std::size_t i) const;
    // Node i's weights and inputs (a model input is read from the slice).
    void gatherOperands(std::size_t i, std::vector<const float *> &paramPtrs, std::vector<const FloatTensor *> &inputPtrs) const;

    const Model &m_model;
    std::vector<bool> m_reachesLoss; // per node: its output gets a gradient in backward (static)
    // The run under way (start()/resume()).
    PassContext m_ctx;
    std::span<const float> m_weights;
    const BatchSlice *m_slice = nullptr;
    float m_scale = 0;
    bool m_backward = false, m_updateMetrics = false;
    bool m_forwardOnly = false; // predict(): no losses
    enum class Phase { Forward, Backward, Done } m_phase = Phase::Done;
    std::size_t m_cursor = 0; // the node to run next (backward: counting down, one past it)
    bool m_waiting = false;
    std::vector<double> m_sums;
    SliceResult m_result;
    std::vector<FloatTensor> m_activations;  // per node
    std::vector<FloatTensor> m_dActivations; // per node
    std::vector<char> m_hasGradient;         // per node: m_dActivations holds this step's gradient
    std::vector<FloatTensor> m_dScratch;     // per input slot: a layer's dInput before adding (fan-out)
    std::vector<LayerState> m_states;        // per node
    std::vector<float> m_gradients;
    std::vector<std::vector<std::int64_t>> m_rows; // per row-sparse parameter
    std::vector<float> m_lossScratch;
    std::vector<std::vector<std::unique_ptr<Metric>>> m_metrics;
};

// The sums every replica stopped with at a synchronized layer (all at the same one), added in
// replica order: the same total whatever the threads. The caller adds the other processes'.
std::vector<double> sumOfLocalSums(std::span<const std::unique_ptr<Replica>> replicas);

} // namespace sluice::train
