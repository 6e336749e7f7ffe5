#pragma once
// Keras losses. A loss compares one model output with its target feature, sample by sample:
// the per-sample loss is the mean over every non-batch element (Keras's mean over the last axis,
// then over time steps for sequences), so a weighted batch loss is sum_i w_i * loss_i / B with B
// the GLOBAL batch size (compute_average_loss semantics) — the trainer passes 1/B as `scale`.

#include "io/error.h"
#include "train/model/float_tensor.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sluice::train {

class Loss
{
public:
    virtual ~Loss() = default;
    virtual std::string name() const = 0;

    // Whether predictions of per-sample shape `pred` can be scored against targets of per-sample
    // shape `target` (no batch dimension). The error's reason says what was expected.
    virtual Status checkShapes(const Shape &pred, const Shape &target) const = 0;

    // pred [B, ...], target [B, ...] (class indices as floats for the sparse loss), weights
    // empty (all 1) or B values. Writes perSample[i] = loss_i (unweighted, B values) and, when
    // dPred is not null, dPred = d(scale * sum_i w_i * loss_i)/dPred (resized like pred).
    virtual void compute(const FloatTensor &pred, const FloatTensor &target, std::span<const float> weights, float scale,
                         std::span<float> perSample, FloatTensor *dPred) const = 0;
    // The options it was made with, resolved: {"from_logits", "delta", "label_smoothing"} (the
    // CUDA backend's loss kernels take the same).
    virtual nlohmann::json options() const = 0;
};

// {"loss": "mse"} or {"loss": {"name": "huber", "delta": 1.0}} or a name with options given in
// `options` ({"from_logits": true, "delta": 1.0, "label_smoothing": 0}). Names: mse
// (mean_squared_error), mae (mean_absolute_error), huber, binary_crossentropy,
// categorical_crossentropy, sparse_categorical_crossentropy.
Result<std::unique_ptr<Loss>> createLoss(const nlohmann::json &spec, const nlohmann::json &options = nlohmann::json::object());
const std::vector<std::string> &knownLosses();

// Keras class_weight: multiplies each sample's weight by the weight of its class — the target's
// value for binary / sparse targets (rounded), its argmax for one-hot targets. Classes missing
// from the map weigh 1. `weights` has B values (start from 1s or from a sample-weight feature).
void applyClassWeights(const FloatTensor &target, const std::vector<std::pair<std::int64_t, float>> &classWeights, std::span<float> weights);

} // namespace sluice::train
