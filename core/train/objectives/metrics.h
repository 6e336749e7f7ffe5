#pragma once
// Keras metrics, accumulated over an epoch. Their state is a few doubles so that replicas and
// MPI processes can sum it (mergeable: total and count, or AUC's confusion counts).

#include "io/error.h"
#include "train/model/float_tensor.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sluice::train {

class Metric
{
public:
    virtual ~Metric() = default;
    virtual std::string name() const = 0; // as reported: "accuracy", "mae", "mse", "auc"
    // Accumulates a batch; weights empty (all 1) or B values (Keras weights metrics by sample weight).
    virtual void update(const FloatTensor &pred, const FloatTensor &target, std::span<const float> weights) = 0;
    virtual double result() const = 0;
    virtual void reset() = 0;
    // The accumulated state, to be summed elementwise across replicas/processes.
    virtual std::vector<double> state() const = 0;
    virtual void setState(std::span<const double> state) = 0;
};

// name: "accuracy" (resolved like Keras from the loss: binary for binary_crossentropy (threshold
// 0.5, or 0 with from_logits), sparse for sparse_categorical_crossentropy, categorical for
// categorical_crossentropy), "binary_accuracy", "categorical_accuracy",
// "sparse_categorical_accuracy", "mae", "mse", "auc" (binary, 200 thresholds as Keras; sigmoid
// applied when the loss is from_logits).
Result<std::unique_ptr<Metric>> createMetric(const std::string &name, const std::string &lossName, bool fromLogits);
const std::vector<std::string> &knownMetrics();

} // namespace sluice::train
