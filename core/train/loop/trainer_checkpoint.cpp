#include "train/loop/trainer_impl.h"

#include "train/loop/checkpoint.h"

#include <filesystem>

namespace sluice::train {

namespace {

// Whether a checkpoint's metric states are one per metric of these replicas, each of the size
// the metric keeps: restoring them must not read past a state that a damaged file shortened.
bool metricStatesFit(std::vector<std::unique_ptr<Replica>> &reps, const nlohmann::json &states)
{
    std::size_t k = 0;
    for (auto &rep : reps)
        for (auto &out : rep->metrics())
            for (auto &m : out)
                if (k >= states.size() || states[k++].size() != m->state().size())
                    return false;
    return true;
}

} // namespace

Status Trainer::Impl::saveCheckpointAt(int epoch, std::int64_t batchInEpoch, std::int64_t stepInEpoch, const std::vector<std::uint64_t> &passCounters)
{
    if (options.checkpointDir.empty() || reducer->processIndex() != 0)
        return Status::success();
    if (auto s = syncFromGpu(); !s.ok())
        return s;
    std::error_code ec;
    std::filesystem::create_directories(options.checkpointDir, ec);
    // Metric states of the epoch so far: training, and the batches held out for validation.
    auto metricStates = [](std::vector<std::unique_ptr<Replica>> &reps) {
        nlohmann::json states = nlohmann::json::array();
        for (auto &rep : reps)
            for (auto &out : rep->metrics())
                for (auto &m : out)
                    states.push_back(m->state());
        return states;
    };
    CheckpointState state;
    state.step = step;
    state.epoch = epoch;
    state.batchInEpoch = batchInEpoch;
    state.stepInEpoch = stepInEpoch;
    state.passCounters = passCounters;
    if (validation)
        state.validationPassCounters = validation->passCounters();
    state.trainTotals = train.toJson();
    state.heldTotals = held.toJson();
    state.metricStates = metricStates(replicas);
    state.heldMetricStates = metricStates(validationReplicas);
    state.replicas = replicas.size();
    state.workers = workers();
    state.parameters = model->parameterCount();
    const std::string path = checkpointPath(options.checkpointDir, step);
    if (auto s = saveCheckpoint(path, *model, weights, optimizer->slots(), state); !s.ok())
        return s;
    pruneCheckpoints(options.checkpointDir, config.checkpoint.keep);
    emit(events::Checkpoint{step, epoch, path});
    return Status::success();
}

Result<CheckpointState> Trainer::Impl::resumeFromCheckpoint()
{
    const auto candidates = listCheckpoints(options.checkpointDir);
    if (candidates.empty())
        return Error::notFound(options.checkpointDir, "no checkpoint to resume from");
    std::string problems;
    for (const auto &path : candidates) {
        auto state = loadCheckpoint(path, *model, weights, optimizer->slots());
        if (!state) {
            // A checkpoint is written atomically, but a damaged disk or a hand edit is possible:
            // fall back to the one before (its weights and slots are read over these).
            problems += "\n  " + state.error().message();
            continue;
        }
        if (state->replicas != replicas.size() || state->workers != workers())
            return Error::invalid(path, "was written by a run with " + std::to_string(state->replicas) + " replicas x " +
                                            std::to_string(state->workers) + " processes; resume with the same numbers");
        if (!metricStatesFit(replicas, state->metricStates) ||
            (!state->heldMetricStates.empty() && !metricStatesFit(validationReplicas, state->heldMetricStates))) {
            problems += "\n  " + Error::corrupt(path, "its metric states do not fit this model's metrics").message();
            continue;
        }
        if (!problems.empty()) // said, so that a damaged checkpoint is never passed over in silence
            emit(events::Notice{"resuming from " + path + ", the newest checkpoint that could be read:" + problems});
        emit(events::Resumed{path, state->step});
        return state;
    }
    return Error::corrupt(options.checkpointDir, "no checkpoint could be read:" + problems);
}

} // namespace sluice::train
