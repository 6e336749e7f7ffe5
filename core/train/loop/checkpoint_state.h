#pragma once
// The training state a checkpoint holds beside the weights (its "state" entry, JSON as uint8):
// where the run was (step, epoch, position in the epoch, the pipelines' pass counters), the
// epoch's running totals and metric states, and the replicas x processes that wrote it. Written
// and read here alone, so that the keys are named once for both directions, and read with every
// key's type checked: a damaged state is an error naming the checkpoint and the key (the trainer
// then falls back to the checkpoint before), never an exception.

#include "io/error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::train {

struct CheckpointState
{
    std::int64_t step = 0;
    int epoch = 0;
    std::int64_t batchInEpoch = 0; // batches of the epoch read so far (validation ones included)
    std::int64_t stepInEpoch = 0;  // training steps of the epoch taken so far
    std::vector<std::uint64_t> passCounters, validationPassCounters;
    // Totals of the epoch so far: {"rows": number, "output_loss": [number...]}.
    nlohmann::json trainTotals = nlohmann::json::object(), heldTotals = nlohmann::json::object();
    // Each metric's state, in replica, output, metric order: [[number...]...].
    nlohmann::json metricStates = nlohmann::json::array(), heldMetricStates = nlohmann::json::array();
    std::size_t replicas = 0;
    int workers = 0;
    std::size_t parameters = 0;

    nlohmann::json toJson() const;
    // The state read from a checkpoint's JSON; errors are Corrupt and name `path` and the key.
    static Result<CheckpointState> fromJson(const nlohmann::json &j, const std::string &path);
};

} // namespace sluice::train
