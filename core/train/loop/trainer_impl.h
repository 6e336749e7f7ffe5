#pragma once
// The Trainer's private state and steps, shared by trainer.cpp (building, replicas, validation),
// trainer_checkpoint.cpp (checkpoints, resume) and trainer_loop.cpp (the epoch loop).

#include "pipeline/engine/pipeline.h"
#include "train/loop/batch_slicer.h"
#include "train/loop/checkpoint_state.h"
#include "train/gpu/gpu_engine.h"
#include "train/objectives/optimizer.h"
#include "train/loop/replica.h"
#include "train/loop/trainer.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>

namespace sluice::train {

struct TrainingArena;

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// Running sums of an epoch (training or validation), mergeable across processes.
struct Totals
{
    double rows = 0;
    std::vector<double> outputLoss; // per output: sum of w_i * loss_i

    double loss(const Model &model) const
    {
        double total = 0;
        for (std::size_t o = 0; o < outputLoss.size(); ++o)
            total += double(model.outputs()[o].lossWeight) * outputLoss[o];
        return rows > 0 ? total / rows : 0;
    }
    nlohmann::json toJson() const { return {{"rows", rows}, {"output_loss", outputLoss}}; }
    void fromJson(const nlohmann::json &j)
    {
        rows = j.value("rows", 0.0);
        if (j.contains("output_loss") && j["output_loss"].size() == outputLoss.size())
            outputLoss = j["output_loss"].get<std::vector<double>>();
    }
    void reset(std::size_t outputs)
    {
        rows = 0;
        outputLoss.assign(outputs, 0.0);
    }
};


struct Trainer::Impl
{
    Project project;
    TrainingConfig config;
    TrainerOptions options;
    std::unique_ptr<GradientReducer> ownReducer;
    GradientReducer *reducer = nullptr;
    std::unique_ptr<pipeline::Pipeline> pipeline, validation;
    std::unique_ptr<Model> model;
    std::unique_ptr<Optimizer> optimizer;
    std::unique_ptr<LearningRateSchedule> schedule;
    std::vector<float> weights;
    // The CPU backend's replicas; with a GPU engine they only hold the metrics of the GPU replicas.
    std::vector<std::unique_ptr<Replica>> replicas, validationReplicas;
    std::unique_ptr<GpuEngine> gpu;   // null: the CPU backend
    std::string deviceDescription;    // run_start's "device"
    std::string deviceNote;           // said once at the start: why GPUs asked for are not used
    std::vector<std::string> startNotes; // the pipelines' build notes and settings without effect, said once at the start
    std::vector<BatchSlice> slices;
    SampleWeighting weighting;
    std::unique_ptr<TrainingArena> arena; // defined in trainer.cpp: core headers never include oneTBB
    std::atomic<bool> cancel{false};
    std::string shardingPolicy = "none";

    std::int64_t step = 0;
    Totals train, held; // held: validation split batches
    Clock::time_point lastStepEvent{}, lastStatsEvent{};
    Clock::time_point runStart = Clock::now(); // step events' "time_s": the charts line steps up with time

    explicit Impl(Project p); // both in trainer.cpp, where TrainingArena is complete

    void emit(const events::Event &event) const
    {
        if (options.onEvent)
            options.onEvent(event);
    }
    bool cancelRequested() const { return cancel.load() || (options.cancelFlag && options.cancelFlag->load()); }
    int replicaCount() const { return int(replicas.size()); }
    int workers() const { return reducer->processCount(); }

    // Forward (+ backward) of `batch` split over the local replicas; local sums in `totals`.
    Result<SliceResult> runBatch(const pipeline::Element &batch, std::int64_t rows, double globalRows, bool training,
                                 std::vector<std::unique_ptr<Replica>> &reps);
    // The GPU engine's pass over `batch` cut at `bounds` (null: over `slices`, which hold no
    // rows), with the contexts runBatch gives the CPU replicas.
    Result<SliceResult> runOnGpu(const pipeline::Element *batch, std::span<const std::int64_t> bounds, bool training, float scale,
                                 std::vector<std::unique_ptr<Replica>> &reps);
    // Brings the GPUs' weights and optimizer state into `weights` and the optimizer's slots.
    Status syncFromGpu();
    Status saveCheckpointAt(int epoch, std::int64_t batchInEpoch, std::int64_t stepInEpoch, const std::vector<std::uint64_t> &passCounters);
    Result<CheckpointState> resumeFromCheckpoint();
    Result<nlohmann::json> metricValues(std::vector<std::unique_ptr<Replica>> &reps, const std::string &prefix, bool acrossProcesses);
    Status evaluateValidationNode(Totals &totals);

    // Runs `work` in the training arena, where replicas and products find their workers.
    void inArena(const std::function<void()> &work);
    // After a step's batch is agreed on: forward/backward on the local rows (none: zero
    // gradients), the finiteness guard, the all-reduce and the update. Returns the global
    // per-output loss sums.
    Result<std::vector<double>> trainStep(const std::optional<pipeline::Element> &batch, std::int64_t rows, double globalRows, int epoch);
    // Step and stats events, at their bounded rates.
    void reportProgress(int epoch, std::int64_t batchInEpoch, double epochRows, Clock::time_point epochStart, double batchLoss, double lr);
    // The epoch_end event: training figures, validation (a node, or the held-out batches).
    Result<events::EpochEnd> epochEndEvent(int epoch, std::int64_t heldEvery, double epochRows, Clock::time_point epochStart);
    // Fresh running totals and metric states for an epoch (training and held-out validation).
    void resetEpoch();
    void restoreMetricStates(const nlohmann::json &train, const nlohmann::json &held);
    ~Impl();
};

} // namespace sluice::train
