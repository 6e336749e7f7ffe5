#include "train/trainer.h"

#include "pipeline/pipeline.h"
#include "train/batch_slicer.h"
#include "train/checkpoint.h"
#include "train/cpu/gemm.h"
#include "train/optimizer.h"
#include "train/replica.h"
#include "train/worker_sharding.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <cmath>
#include <filesystem>

namespace sluice::train {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t)
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

} // namespace

const char *runStatusName(RunStatus status)
{
    switch (status) {
    case RunStatus::Ok: return "ok";
    case RunStatus::Failed: return "failed";
    case RunStatus::Cancelled: return "cancelled";
    }
    return "failed";
}

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
    std::vector<std::unique_ptr<Replica>> replicas, validationReplicas;
    std::vector<BatchSlice> slices;
    SampleWeighting weighting;
    std::unique_ptr<oneapi::tbb::task_arena> arena;
    std::atomic<bool> cancel{false};
    std::string shardingPolicy = "none";

    std::int64_t step = 0;
    Totals train, held; // held: validation split batches
    Clock::time_point lastStepEvent{}, lastStatsEvent{};

    Impl(Project p) : project(std::move(p)) {}

    void emit(nlohmann::json event) const
    {
        if (options.onEvent)
            options.onEvent(event);
    }
    bool cancelRequested() const { return cancel.load() || (options.cancelFlag && options.cancelFlag->load()); }
    int replicaCount() const { return int(replicas.size()); }
    int workers() const { return reducer->processCount(); }

    // Forward (+ backward) of `batch` split over the local replicas; local sums in `totals`.
    SliceResult runBatch(const pipeline::Element &batch, std::int64_t rows, double globalRows, bool training,
                         std::vector<std::unique_ptr<Replica>> &reps);
    Status saveCheckpointAt(int epoch, std::int64_t batchInEpoch, std::int64_t stepInEpoch, const std::vector<std::uint64_t> &passCounters);
    Result<nlohmann::json> resumeFromCheckpoint();
    nlohmann::json metricValues(std::vector<std::unique_ptr<Replica>> &reps, const std::string &prefix, bool acrossProcesses);
    Status evaluateValidationNode(Totals &totals);
};

Trainer::Trainer() = default;
Trainer::~Trainer() = default;

void Trainer::requestCancel() { m_impl->cancel = true; }
const Model &Trainer::model() const { return *m_impl->model; }
const std::vector<float> &Trainer::weights() const { return m_impl->weights; }
const TrainingConfig &Trainer::config() const { return m_impl->config; }

Result<std::unique_ptr<Trainer>> Trainer::create(const Project &project, const TrainingConfig &config, TrainerOptions options)
{
    std::unique_ptr<Trainer> trainer(new Trainer());
    trainer->m_impl = std::make_unique<Impl>(project);
    Impl &impl = *trainer->m_impl;
    impl.config = config;
    impl.options = std::move(options);
    if (impl.options.reducer) {
        impl.reducer = impl.options.reducer;
    } else {
        impl.ownReducer = makeInProcessReducer();
        impl.reducer = impl.ownReducer.get();
    }
    if (project.model.is_null())
        return Error::invalid("model", "the project has no \"model\" to train");

    auto output = impl.project.outputNode();
    if (!output)
        return Error::invalid("pipeline", output.error().reason);
    if (globalBatchNode(impl.project, *output).empty())
        return Error::invalid("pipeline", "the output node '" + *output + "' does not batch its elements: add a batch stage before it, as " +
                                              "model.fit(dataset) needs batches");
    if (impl.workers() > 1) {
        auto plan = shardForWorker(impl.project, *output, impl.workers(), impl.reducer->processIndex());
        if (!plan)
            return plan.error();
        impl.shardingPolicy = plan->policy;
    }
    pipeline::PipelineOptions popts;
    popts.seed = config.seed;
    popts.threads = config.threads;
    auto pipe = pipeline::Pipeline::build(impl.project, popts);
    if (!pipe)
        return pipe.error();
    impl.pipeline = std::move(*pipe);
    impl.pipeline->setConsumerAttached(true);
    if (config.validationNode) {
        if (globalBatchNode(project, *config.validationNode).empty())
            return Error::invalid("training.validation.node", "'" + *config.validationNode + "' does not batch its elements: add a batch stage");
        popts.outputNode = config.validationNode;
        auto val = pipeline::Pipeline::build(project, popts); // validation is not sharded: every worker evaluates all of it
        if (!val)
            return val.error();
        impl.validation = std::move(*val);
    }

    auto model = Model::build(project.model, impl.pipeline->elementSpec());
    if (!model)
        return model.error();
    impl.model = std::move(*model);
    if (impl.validation) {
        // The validation data must bind the same features with the same shapes.
        auto check = Model::build(project.model, impl.validation->elementSpec());
        if (!check)
            return Error::invalid("training.validation.node", "the model does not fit its elements: " + check.error().message());
    }
    const auto &spec = impl.pipeline->elementSpec();
    if (config.sampleWeightFeature) {
        auto index = spec.find(*config.sampleWeightFeature);
        if (!index)
            return Error::invalid("training.sample_weight", "no feature '" + *config.sampleWeightFeature + "' in the pipeline's output (it has: " +
                                                                 spec.names() + ")");
        const auto &shape = spec.features[*index].shape;
        if (shape.size() > 2 || (shape.size() == 2 && shape[1] != 1))
            return Error::invalid("training.sample_weight", "feature '" + *config.sampleWeightFeature + "' must hold one weight per sample");
        impl.weighting.sampleWeightFeature = *index;
    }
    if (!config.classWeights.empty()) {
        if (impl.model->outputs().size() != 1)
            return Error::invalid("training.class_weight", "needs a model with one output, as in Keras (use sample_weight for several)");
        impl.weighting.classWeights = config.classWeights;
    }

    auto schedule = createSchedule(config.optimizer.contains("learning_rate") ? config.optimizer["learning_rate"]
                                                                              : nlohmann::json(config.optimizer.value("type", "") == "sgd" ? 0.01 : 0.001));
    if (!schedule)
        return Error::invalid("training.optimizer", schedule.error().message());
    impl.schedule = std::move(*schedule);
    nlohmann::json optSpec = config.optimizer;
    optSpec.erase("global_clipnorm");
    auto optimizer = createOptimizer(optSpec, impl.model->parameterCount());
    if (!optimizer)
        return Error::invalid("training", optimizer.error().message());
    impl.optimizer = std::move(*optimizer);

    impl.arena = std::make_unique<oneapi::tbb::task_arena>(config.threads > 0 ? config.threads : int(oneapi::tbb::info::default_concurrency()));
    cpu::useSingleThreadedBlas();
    for (int r = 0; r < config.replicas; ++r) {
        impl.replicas.push_back(std::make_unique<Replica>(*impl.model));
        impl.validationReplicas.push_back(std::make_unique<Replica>(*impl.model));
    }
    impl.slices.resize(std::size_t(config.replicas));
    impl.train.reset(impl.model->outputs().size());
    impl.held.reset(impl.model->outputs().size());

    if (config.initialWeights) {
        impl.weights.assign(impl.model->parameterCount(), 0.0f);
        if (auto s = impl.model->loadWeights(*config.initialWeights, impl.weights); !s.ok())
            return Error::invalid("training.initial_weights", s.error().message());
    } else {
        auto w = impl.model->initialWeights(config.seed);
        if (!w)
            return w.error();
        impl.weights = std::move(*w);
    }
    return trainer;
}

SliceResult Trainer::Impl::runBatch(const pipeline::Element &batch, std::int64_t rows, double globalRows, bool training,
                                    std::vector<std::unique_ptr<Replica>> &reps)
{
    const auto bounds = splitRows(rows, int(reps.size()));
    std::vector<SliceResult> results(reps.size());
    const float scale = globalRows > 0 ? float(1.0 / globalRows) : 0.0f;
    // Sharded element by element, local row j of worker w is row j * W + w of the global batch.
    const std::int64_t stride = workers(), rank = reducer->processIndex();
    arena->execute([&] {
        oneapi::tbb::parallel_for(std::size_t(0), reps.size(), [&](std::size_t r) {
            BatchSlice &slice = slices[r];
            sliceBatch(*model, batch, weighting, bounds[r], bounds[r + 1], slice);
            PassContext ctx;
            ctx.training = training;
            ctx.seed = config.seed;
            ctx.step = std::uint64_t(step);
            ctx.globalRowOffset = bounds[r] * stride + rank;
            ctx.globalRowStride = stride;
            if (training && slice.rows == 0)
                std::fill(reps[r]->gradients().begin(), reps[r]->gradients().end(), 0.0f);
            results[r] = reps[r]->run(ctx, weights, slice, scale, training, true);
        });
    });
    SliceResult total;
    total.outputLossSums.assign(model->outputs().size(), 0.0);
    for (const auto &r : results) {
        for (std::size_t o = 0; o < r.outputLossSums.size(); ++o)
            total.outputLossSums[o] += r.outputLossSums[o];
        total.finite = total.finite && r.finite;
    }
    return total;
}

nlohmann::json Trainer::Impl::metricValues(std::vector<std::unique_ptr<Replica>> &reps, const std::string &prefix, bool acrossProcesses)
{
    nlohmann::json values = nlohmann::json::object();
    const auto &outputs = model->outputs();
    for (std::size_t o = 0; o < outputs.size(); ++o) {
        for (std::size_t m = 0; m < outputs[o].metrics.size(); ++m) {
            auto &first = *reps[0]->metrics()[o][m];
            std::vector<double> state = first.state();
            for (std::size_t r = 1; r < reps.size(); ++r) {
                const auto other = reps[r]->metrics()[o][m]->state();
                for (std::size_t k = 0; k < state.size(); ++k)
                    state[k] += other[k];
            }
            if (acrossProcesses)
                (void)reducer->sumAcrossProcesses(state);
            first.setState(state);
            const std::string name = outputs.size() == 1 ? first.name() : outputs[o].name + "_" + first.name();
            values[prefix + name] = first.result();
        }
    }
    return values;
}

Status Trainer::Impl::saveCheckpointAt(int epoch, std::int64_t batchInEpoch, std::int64_t stepInEpoch, const std::vector<std::uint64_t> &passCounters)
{
    if (options.checkpointDir.empty() || reducer->processIndex() != 0)
        return Status::success();
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
    const nlohmann::json metrics = metricStates(replicas), heldMetrics = metricStates(validationReplicas);
    nlohmann::json state{{"format", "sluice-checkpoint"},
                         {"version", 1},
                         {"step", step},
                         {"epoch", epoch},
                         {"batch_in_epoch", batchInEpoch},
                         {"step_in_epoch", stepInEpoch},
                         {"pass_counters", passCounters},
                         {"validation_pass_counters", validation ? validation->passCounters() : std::vector<std::uint64_t>{}},
                         {"train_totals", train.toJson()},
                         {"held_totals", held.toJson()},
                         {"metric_states", metrics},
                         {"held_metric_states", heldMetrics},
                         {"replicas", replicas.size()},
                         {"workers", workers()},
                         {"parameters", model->parameterCount()}};
    const std::string path = checkpointPath(options.checkpointDir, step);
    if (auto s = saveCheckpoint(path, *model, weights, optimizer->slots(), state); !s.ok())
        return s;
    pruneCheckpoints(options.checkpointDir, config.checkpoint.keep);
    emit({{"event", "checkpoint"}, {"step", step}, {"epoch", epoch}, {"path", path}});
    return Status::success();
}

Result<nlohmann::json> Trainer::Impl::resumeFromCheckpoint()
{
    const auto candidates = listCheckpoints(options.checkpointDir);
    if (candidates.empty())
        return Error::notFound(options.checkpointDir, "no checkpoint to resume from");
    std::string problems;
    for (const auto &path : candidates) {
        auto state = loadCheckpoint(path, *model, weights, optimizer->slots());
        if (!state) {
            // A checkpoint is written atomically, but a damaged disk or a hand edit is possible:
            // fall back to the one before.
            problems += "\n  " + state.error().message();
            continue;
        }
        if (state->value("replicas", std::size_t(0)) != replicas.size() || state->value("workers", 0) != workers())
            return Error::invalid(path, "was written by a run with " + std::to_string(state->value("replicas", 0)) + " replicas x " +
                                            std::to_string(state->value("workers", 0)) + " processes; resume with the same numbers");
        emit({{"event", "resumed"}, {"path", path}, {"step", state->value("step", 0)}});
        return state;
    }
    return Error::corrupt(options.checkpointDir, "no checkpoint could be read:" + problems);
}

Status Trainer::Impl::evaluateValidationNode(Totals &totals)
{
    validation->restart();
    for (auto &rep : validationReplicas)
        rep->resetMetrics();
    totals.reset(model->outputs().size());
    for (std::int64_t s = 0; config.validationSteps < 0 || s < config.validationSteps; ++s) {
        auto next = validation->next();
        if (!next)
            return next.error();
        if (!*next)
            break;
        auto rows = batchRows(*model, **next);
        if (!rows)
            return rows.error();
        const auto result = runBatch(**next, *rows, double(*rows), false, validationReplicas);
        totals.rows += double(*rows);
        for (std::size_t o = 0; o < result.outputLossSums.size(); ++o)
            totals.outputLoss[o] += result.outputLossSums[o];
    }
    return Status::success();
}

RunOutcome Trainer::run()
{
    Impl &impl = *m_impl;
    const Model &model = *impl.model;
    RunOutcome outcome;
    auto fail = [&](Error e) {
        outcome.status = RunStatus::Failed;
        outcome.error = std::move(e);
        impl.emit({{"event", "run_end"}, {"status", "failed"}, {"error", outcome.error->message()}, {"step", impl.step}});
        return outcome;
    };

    int startEpoch = 0;
    std::int64_t skipBatches = 0, resumedStepInEpoch = 0;
    std::vector<std::uint64_t> resumeCounters;
    nlohmann::json resumeMetrics, resumeHeldMetrics;
    if (impl.options.resume) {
        auto state = impl.resumeFromCheckpoint();
        if (!state)
            return fail(state.error());
        impl.step = state->value("step", std::int64_t(0));
        startEpoch = state->value("epoch", 0);
        skipBatches = state->value("batch_in_epoch", std::int64_t(0));
        resumedStepInEpoch = state->value("step_in_epoch", std::int64_t(0));
        resumeCounters = (*state)["pass_counters"].get<std::vector<std::uint64_t>>();
        if (impl.validation)
            impl.validation->setPassCounters((*state)["validation_pass_counters"].get<std::vector<std::uint64_t>>());
        impl.train.fromJson((*state)["train_totals"]);
        impl.held.fromJson((*state)["held_totals"]);
        resumeMetrics = (*state)["metric_states"];
        resumeHeldMetrics = state->value("held_metric_states", nlohmann::json::array());
    } else if (auto s = impl.reducer->broadcastFromFirst(impl.weights); !s.ok()) {
        return fail(s.error());
    }

    std::int64_t parameters = 0;
    for (const auto &p : model.parameters())
        parameters += std::int64_t(p.count);
    impl.emit({{"event", "run_start"},
               {"model", model.summary()},
               {"parameters", parameters},
               {"replicas", impl.replicaCount()},
               {"processes", impl.workers()},
               {"reducer", impl.reducer->name()},
               {"sharding", impl.shardingPolicy},
               {"optimizer", impl.optimizer->name()},
               {"epochs", impl.config.epochs},
               {"start_step", impl.step},
               {"start_epoch", startEpoch}});

    const std::int64_t heldEvery = impl.config.validationSplit > 0 ? std::max<std::int64_t>(2, std::llround(1.0 / impl.config.validationSplit)) : 0;
    double fullGlobalBatch = 0;
    for (int epoch = startEpoch; epoch < impl.config.epochs; ++epoch) {
        const bool resuming = epoch == startEpoch && impl.options.resume;
        impl.pipeline->restart();
        if (resuming && !impl.pipeline->setPassCounters(resumeCounters))
            return fail(Error::invalid(impl.options.checkpointDir, "the checkpoint was written for another pipeline"));
        const std::vector<std::uint64_t> epochCounters = impl.pipeline->passCounters();
        if (!resuming) {
            impl.train.reset(model.outputs().size());
            impl.held.reset(model.outputs().size());
            for (auto &rep : impl.replicas)
                rep->resetMetrics();
            for (auto &rep : impl.validationReplicas)
                rep->resetMetrics();
        } else {
            auto restore = [](std::vector<std::unique_ptr<Replica>> &reps, const nlohmann::json &states) {
                std::size_t k = 0;
                for (auto &rep : reps)
                    for (auto &out : rep->metrics())
                        for (auto &m : out)
                            if (states.is_array() && k < states.size())
                                m->setState(states[k++].get<std::vector<double>>());
            };
            restore(impl.replicas, resumeMetrics);
            restore(impl.validationReplicas, resumeHeldMetrics);
        }
        const auto epochStart = Clock::now();
        double epochRows = 0;
        std::int64_t batchInEpoch = 0, stepInEpoch = resuming ? resumedStepInEpoch : 0;
        std::int64_t skip = resuming ? skipBatches : 0;
        bool localEnded = false;
        for (;;) {
            if (impl.config.stepsPerEpoch > 0 && stepInEpoch >= impl.config.stepsPerEpoch && skip == 0)
                break;
            std::optional<pipeline::Element> batch;
            if (!localEnded) {
                auto next = impl.pipeline->next();
                if (!next) {
                    if (impl.cancelRequested() && impl.pipeline->cancelled())
                        break;
                    return fail(next.error());
                }
                batch = std::move(*next);
                localEnded = !batch;
            }
            std::int64_t rows = 0;
            if (batch) {
                auto r = batchRows(model, *batch);
                if (!r)
                    return fail(r.error());
                rows = *r;
            }
            // Every process takes the same path: agree on the global batch and on cancelling.
            std::vector<double> agree{double(rows), batch ? 1.0 : 0.0, impl.cancelRequested() ? 1.0 : 0.0};
            if (auto s = impl.reducer->sumAcrossProcesses(agree); !s.ok())
                return fail(s.error());
            if (agree[2] > 0 && skip == 0) {
                if (auto s = impl.saveCheckpointAt(epoch, batchInEpoch - 0, stepInEpoch, epochCounters); !s.ok())
                    return fail(s.error());
                outcome.status = RunStatus::Cancelled;
                outcome.steps = impl.step;
                impl.emit({{"event", "run_end"}, {"status", "cancelled"}, {"step", impl.step}, {"epoch", epoch}});
                return outcome;
            }
            // The cancelled batch above was read but not trained on: it is read again on resume,
            // because the checkpoint's position counts only batches before it.
            if (agree[1] == 0)
                break; // every process has finished its pass
            ++batchInEpoch;
            if (skip > 0) {
                --skip;
                continue;
            }
            const double globalRows = agree[0];
            if (heldEvery && batchInEpoch % heldEvery == 0) {
                const auto result = batch ? impl.runBatch(*batch, rows, globalRows, false, impl.validationReplicas) : SliceResult{};
                impl.held.rows += double(rows);
                for (std::size_t o = 0; o < result.outputLossSums.size(); ++o)
                    impl.held.outputLoss[o] += result.outputLossSums[o];
                continue;
            }
            if (fullGlobalBatch == 0)
                fullGlobalBatch = globalRows;
            if (impl.config.dropRemainder && globalRows < fullGlobalBatch)
                continue;

            SliceResult result;
            if (batch) {
                result = impl.runBatch(*batch, rows, globalRows, true, impl.replicas);
            } else {
                // This process has no rows in the last global batch: it adds zero gradients.
                result.outputLossSums.assign(model.outputs().size(), 0.0);
                for (auto &rep : impl.replicas)
                    std::fill(rep->gradients().begin(), rep->gradients().end(), 0.0f);
            }
            std::vector<double> sums = result.outputLossSums;
            sums.push_back(result.finite ? 0.0 : 1.0);
            if (auto s = impl.reducer->sumAcrossProcesses(sums); !s.ok())
                return fail(s.error());
            if (sums.back() > 0 || std::any_of(sums.begin(), sums.end() - 1, [](double v) { return !std::isfinite(v); })) {
                std::string which;
                for (std::size_t o = 0; o < model.outputs().size(); ++o)
                    if (!std::isfinite(sums[o]))
                        which += (which.empty() ? "" : ", ") + model.outputs()[o].name;
                return fail(Error::invalid("training", "the loss became NaN or infinite at step " + std::to_string(impl.step + 1) + " (epoch " +
                                                           std::to_string(epoch + 1) + ", output " + (which.empty() ? std::string("?") : which) +
                                                           "): lower the learning rate, clip gradients (global_clipnorm) or check the data"));
            }
            std::vector<std::vector<float> *> buffers;
            for (auto &rep : impl.replicas)
                buffers.push_back(&rep->gradients());
            Status reduced = Status::success();
            const double lr = impl.schedule->at(impl.step);
            impl.arena->execute([&] {
                reduced = impl.reducer->sum(buffers);
                if (reduced.ok()) {
                    if (impl.config.globalClipnorm > 0)
                        clipByGlobalNorm(*buffers[0], impl.config.globalClipnorm);
                    impl.optimizer->apply(impl.weights, *buffers[0], float(lr), impl.step + 1);
                }
            });
            if (!reduced.ok())
                return fail(reduced.error());
            ++impl.step;
            ++stepInEpoch;
            impl.train.rows += globalRows;
            for (std::size_t o = 0; o < model.outputs().size(); ++o)
                impl.train.outputLoss[o] += sums[o];
            epochRows += globalRows;
            double batchLoss = 0;
            for (std::size_t o = 0; o < model.outputs().size(); ++o)
                batchLoss += double(model.outputs()[o].lossWeight) * sums[o];
            batchLoss /= globalRows;

            const auto now = Clock::now();
            if (std::chrono::duration<double>(now - impl.lastStepEvent).count() >= impl.options.stepEventInterval) {
                impl.lastStepEvent = now;
                const double elapsed = secondsSince(epochStart);
                impl.emit({{"event", "step"},
                           {"step", impl.step},
                           {"epoch", epoch + 1},
                           {"batch", batchInEpoch},
                           {"loss", impl.train.loss(model)},
                           {"batch_loss", batchLoss},
                           {"learning_rate", lr},
                           {"samples_per_s", elapsed > 0 ? epochRows / elapsed : 0.0},
                           {"cardinality", impl.pipeline->cardinality()}});
            }
            if (std::chrono::duration<double>(now - impl.lastStatsEvent).count() >= impl.options.statsEventInterval) {
                impl.lastStatsEvent = now;
                auto stats = impl.pipeline->snapshot().toJson();
                stats["event"] = "stats";
                impl.emit(stats);
            }
            if (impl.config.checkpoint.everySteps > 0 && impl.step % impl.config.checkpoint.everySteps == 0)
                if (auto s = impl.saveCheckpointAt(epoch, batchInEpoch, stepInEpoch, epochCounters); !s.ok())
                    return fail(s.error());
        }
        if (impl.cancelRequested()) {
            outcome.status = RunStatus::Cancelled;
            outcome.steps = impl.step;
            impl.emit({{"event", "run_end"}, {"status", "cancelled"}, {"step", impl.step}, {"epoch", epoch}});
            return outcome;
        }

        nlohmann::json event{{"event", "epoch_end"}, {"epoch", epoch + 1}, {"step", impl.step}};
        event["loss"] = impl.train.loss(model);
        if (model.outputs().size() > 1)
            for (std::size_t o = 0; o < model.outputs().size(); ++o)
                event[model.outputs()[o].name + "_loss"] = impl.train.rows > 0 ? impl.train.outputLoss[o] / impl.train.rows : 0.0;
        event.update(impl.metricValues(impl.replicas, "", true));
        Totals val;
        bool haveValidation = false;
        if (impl.validation) {
            if (auto s = impl.evaluateValidationNode(val); !s.ok())
                return fail(s.error());
            haveValidation = true;
            event.update(impl.metricValues(impl.validationReplicas, "val_", false));
        } else if (heldEvery) {
            std::vector<double> sums = impl.held.outputLoss;
            sums.push_back(impl.held.rows);
            (void)impl.reducer->sumAcrossProcesses(sums);
            val.rows = sums.back();
            val.outputLoss.assign(sums.begin(), sums.end() - 1);
            haveValidation = true;
            event.update(impl.metricValues(impl.validationReplicas, "val_", true));
        }
        if (haveValidation) {
            event["val_loss"] = val.loss(model);
            if (model.outputs().size() > 1)
                for (std::size_t o = 0; o < model.outputs().size(); ++o)
                    event["val_" + model.outputs()[o].name + "_loss"] = val.rows > 0 ? val.outputLoss[o] / val.rows : 0.0;
        }
        const double seconds = secondsSince(epochStart);
        event["seconds"] = seconds;
        event["samples_per_s"] = seconds > 0 ? epochRows / seconds : 0.0;
        event["learning_rate"] = impl.schedule->at(impl.step);
        impl.emit(event);
        outcome.epochs = epoch + 1;
        if (impl.config.checkpoint.everyEpoch) {
            impl.train.reset(model.outputs().size());
            impl.held.reset(model.outputs().size());
            for (auto &rep : impl.replicas)
                rep->resetMetrics();
            // The next pass has not started: its orders follow from the counters as they are now.
            if (auto s = impl.saveCheckpointAt(epoch + 1, 0, 0, impl.pipeline->passCounters()); !s.ok())
                return fail(s.error());
        }
    }
    outcome.status = RunStatus::Ok;
    outcome.steps = impl.step;
    impl.emit({{"event", "run_end"}, {"status", "ok"}, {"step", impl.step}, {"epochs", outcome.epochs}});
    return outcome;
}

} // namespace sluice::train
