#pragma once
// Synchronous data-parallel training of a project's model on its pipeline (docs/architecture.md, decision 7):
// each global batch is split over the local replicas (oneTBB tasks), their gradients are summed
// by a GradientReducer (in-process, MPI), losses are averaged over the global batch, and every
// replica applies the same update. Reports through an event callback (JSON objects, the same
// ones `sluice run --json` prints), writes checkpoints, resumes from them.
//
// Threading: run() on one thread; requestCancel() from any thread (a signal handler may set
// the flag given in the options instead).

#include "events/run_status.h"
#include "events/run_events.h"
#include "io/error.h"
#include "project/project.h"
#include "train/distribute/gradient_reducer.h"
#include "train/model/model.h"
#include "train/loop/training_config.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sluice::train {

struct TrainerOptions
{
    std::string checkpointDir;  // empty: no checkpoints
    bool resume = false;        // continue from the newest checkpoint in checkpointDir
    std::function<void(const events::Event &)> onEvent; // called on the training thread
    const std::atomic<bool> *cancelFlag = nullptr;       // polled between steps
    // Called on the training thread before each step's batch is requested. It may block: the
    // workbench pauses a run by waiting here (and must return when the run is cancelled).
    std::function<void()> betweenSteps;
    GradientReducer *reducer = nullptr;                  // null: in-process replicas only
    double stepEventInterval = 0.25;                     // seconds between step events (bounded rate)
    double statsEventInterval = 1.0;                     // seconds between pipeline stats events
};

using sluice::RunStatus; // events/run_status.h
using sluice::runStatusName;

struct RunOutcome
{
    RunStatus status = RunStatus::Ok;
    std::optional<Error> error;
    std::int64_t steps = 0;
    int epochs = 0;
};

class Trainer
{
public:
    // Builds the pipeline(s) and the model and checks that they fit; errors are bad input.
    static Result<std::unique_ptr<Trainer>> create(const Project &project, const TrainingConfig &config, TrainerOptions options);
    ~Trainer();

    RunOutcome run();
    void requestCancel();

    const Model &model() const;
    const std::vector<float> &weights() const;
    const TrainingConfig &config() const;

private:
    Trainer();
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace sluice::train
