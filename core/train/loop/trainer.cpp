#include "train/loop/trainer_impl.h"

#include "train/loop/checkpoint.h"
#include "train/cpu/gemm.h"
#include "train/model/huge_pages.h"
#include "train/distribute/worker_sharding.h"

#include <algorithm>

#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

namespace sluice::train {

struct TrainingArena : oneapi::tbb::task_arena
{
    using oneapi::tbb::task_arena::task_arena;
};

Trainer::Impl::Impl(Project p) : project(std::move(p)) {}
Trainer::Impl::~Impl() = default;

void Trainer::Impl::inArena(const std::function<void()> &work)
{
    arena->execute(work);
}

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
    // Never accepted and ignored: the CPU backend computes in fp32 only.
    if (config.devices.empty() && config.precision != "fp32")
        return Error::invalid("precision", config.precision + " needs a GPU (--device cuda, or \"devices\" in training): the CPU backend computes in fp32");

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
    impl.startNotes = impl.pipeline->notes();
    // Settings that this run cannot act on, said rather than dropped.
    const bool checkpointsAsked = config.checkpoint.everyEpoch || config.checkpoint.everySteps > 0;
    if (impl.options.checkpointDir.empty() && project.training.is_object() && project.training.contains("checkpoint") && checkpointsAsked)
        impl.startNotes.push_back("training.checkpoint has no effect in this run: it has no folder for checkpoints "
                                  "(sluice run --out DIR keeps them in DIR/checkpoints)");
    if (config.validationSteps >= 0 && !config.validationNode)
        impl.startNotes.push_back("training.validation.steps has no effect with \"split\": the held-out batches of each epoch are all evaluated "
                                  "(steps counts batches of a validation \"node\")");
    if (config.validationNode) {
        if (globalBatchNode(project, *config.validationNode).empty())
            return trainingError("validation.node", "'" + *config.validationNode + "' does not batch its elements: add a batch stage");
        popts.outputNode = config.validationNode;
        auto val = pipeline::Pipeline::build(project, popts); // validation is not sharded: every worker evaluates all of it
        if (!val)
            return val.error();
        impl.validation = std::move(*val);
        for (const auto &note : impl.validation->notes())
            if (std::find(impl.startNotes.begin(), impl.startNotes.end(), note) == impl.startNotes.end())
                impl.startNotes.push_back(note);
    }

    auto model = Model::build(project.model, impl.pipeline->elementSpec());
    if (!model)
        return model.error();
    impl.model = std::move(*model);
    if (impl.validation) {
        // The validation data must bind the same features with the same shapes.
        auto check = Model::build(project.model, impl.validation->elementSpec());
        if (!check)
            return trainingError("validation.node", "the model does not fit its elements: " + check.error().message());
    }
    const auto &spec = impl.pipeline->elementSpec();
    if (config.sampleWeightFeature) {
        auto index = spec.find(*config.sampleWeightFeature);
        if (!index)
            return trainingError("sample_weight", "no feature '" + *config.sampleWeightFeature + "' in the pipeline's output (it has: " +
                                                                 spec.names() + ")");
        const auto &shape = spec.features[*index].shape;
        if (shape.size() > 2 || (shape.size() == 2 && shape[1] != 1))
            return trainingError("sample_weight", "feature '" + *config.sampleWeightFeature + "' must hold one weight per sample");
        impl.weighting.sampleWeightFeature = *index;
    }
    if (!config.classWeights.empty()) {
        if (impl.model->outputs().size() != 1)
            return trainingError("class_weight", "needs a model with one output, as in Keras (use sample_weight for several)");
        impl.weighting.classWeights = config.classWeights;
    }

    auto schedule = createSchedule(config.optimizer.contains("learning_rate") ? config.optimizer["learning_rate"]
                                                                              : nlohmann::json(config.optimizer.value("type", "") == "sgd" ? 0.01 : 0.001));
    if (!schedule)
        return trainingError("optimizer", schedule.error().message());
    impl.schedule = std::move(*schedule);
    nlohmann::json optSpec = config.optimizer;
    optSpec.erase("global_clipnorm");
    auto optimizer = createOptimizer(optSpec, impl.model->trainableParameterCount());
    if (!optimizer)
        return trainingError("", optimizer.error().message());
    impl.optimizer = std::move(*optimizer);

    impl.arena = std::make_unique<TrainingArena>(config.threads > 0 ? config.threads : int(oneapi::tbb::info::default_concurrency()));
    cpu::useSingleThreadedBlas();
    int replicaCount = config.replicas;
    impl.deviceDescription = "cpu";
    if (!config.gpuDevices.empty()) {
        // GPUs asked for: the CUDA backend where this build and machine have one; otherwise the
        // run says why once and trains on the CPU (docs/architecture.md, decision 4).
        auto devices = resolveGpuDevices(config.gpuDevices, impl.deviceNote);
        if (impl.workers() > 1) {
            // Every process trains on the same backend: GPUs only where every one has them (a
            // process that could not read its device list joins the sum too, then fails).
            std::vector<double> found{!devices ? -double(impl.workers()) - 1 : devices->empty() ? 0.0 : 1.0};
            if (auto s = impl.reducer->sumAcrossProcesses(found); !s.ok())
                return s.error();
            if (!devices)
                return devices.error();
            if (found[0] < 0)
                return trainingError("devices", "another process could not use the devices asked for");
            if (found[0] < impl.workers() && !devices->empty()) {
                devices->clear();
                impl.deviceNote = "another process found no GPU; every process trains on the CPU";
            }
        }
        if (!devices)
            return devices.error();
        if (!devices->empty()) {
            GpuEngineOptions gpuOptions;
            gpuOptions.devices = *devices;
            gpuOptions.precision = config.precision;
            gpuOptions.globalClipnorm = config.globalClipnorm;
            gpuOptions.reducer = impl.reducer;
            auto engine = createGpuEngine(*impl.model, *impl.optimizer, gpuOptions);
            if (engine) {
                impl.gpu = std::move(*engine);
                impl.deviceDescription = impl.gpu->description();
                replicaCount = int(devices->size());
            } else if (engine.error().kind == Error::Kind::NotFound) {
                impl.deviceNote = engine.error().reason + "; training on the CPU" +
                                  (config.precision != "fp32" ? " in fp32 (precision " + config.precision + " needs the GPU)" : std::string());
            } else {
                return engine.error();
            }
        }
    }
    for (int r = 0; r < replicaCount; ++r) {
        // With a GPU engine these hold only the metrics: no gradient buffers on the host.
        impl.replicas.push_back(std::make_unique<Replica>(*impl.model, !impl.gpu));
        impl.validationReplicas.push_back(std::make_unique<Replica>(*impl.model, false));
    }
    impl.slices.resize(std::size_t(replicaCount));
    impl.train.reset(impl.model->outputs().size());
    impl.held.reset(impl.model->outputs().size());

    if (config.initialWeights) {
        impl.weights.assign(impl.model->parameterCount(), 0.0f);
        adviseHugePages(impl.weights);
        if (auto s = impl.model->loadWeights(*config.initialWeights, impl.weights); !s.ok())
            return trainingError("initial_weights", s.error().message());
    } else {
        auto w = impl.model->initialWeights(config.seed);
        if (!w)
            return w.error();
        impl.weights = copyToHugePages(*w); // embedding tables: random rows every step
    }
    // Checkpoints that cannot be written are found now, not at the end of the first epoch.
    if (!impl.options.checkpointDir.empty() && impl.reducer->processIndex() == 0) {
        std::uint64_t floats = impl.model->parameterCount();
        for (const auto &slot : impl.optimizer->slots())
            floats += slot.values.size();
        const bool checkpoints = impl.config.checkpoint.everyEpoch || impl.config.checkpoint.everySteps > 0;
        // Up to `keep` checkpoints, and one more while the newest is written before the oldest goes.
        const int count = checkpoints ? std::max(1, impl.config.checkpoint.keep) + 1 : 0;
        if (auto s = checkCheckpointRoom(impl.options.checkpointDir, floats * 4 + (1 << 16), count); !s.ok())
            return s.error();
    }
    return trainer;
}

Result<SliceResult> Trainer::Impl::runBatch(const pipeline::Element &batch, std::int64_t rows, double globalRows, bool training,
                                            std::vector<std::unique_ptr<Replica>> &reps)
{
    const auto bounds = splitRows(rows, int(reps.size()));
    if (gpu)
        return runOnGpu(&batch, bounds, training, globalRows > 0 ? float(1.0 / globalRows) : 0.0f, reps);
    std::vector<SliceResult> results(reps.size());
    const float scale = globalRows > 0 ? float(1.0 / globalRows) : 0.0f;
    // Sharded element by element, local row j of worker w is row j * W + w of the global batch.
    const std::int64_t stride = workers(), rank = reducer->processIndex();
    inArena([&] {
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
                reps[r]->clearGradients();
            reps[r]->start(ctx, weights, slice, scale, training, true);
        });
    });
    // Synchronized layers (BatchNormalization with synchronized: true) stop every replica at the
    // same layer: their sums are added in replica order, then over the processes, and each goes on.
    while (reps.front()->waiting()) {
        std::vector<double> total = sumOfLocalSums(reps);
        if (auto s = reducer->sumAcrossProcesses(total); !s.ok())
            return s.error();
        inArena([&] { oneapi::tbb::parallel_for(std::size_t(0), reps.size(), [&](std::size_t r) { reps[r]->resume(total); }); });
    }
    for (std::size_t r = 0; r < reps.size(); ++r)
        results[r] = reps[r]->result();
    SliceResult total;
    total.outputLossSums.assign(model->outputs().size(), 0.0);
    for (const auto &r : results) {
        if (r.error)
            return *r.error;
        for (std::size_t o = 0; o < r.outputLossSums.size(); ++o)
            total.outputLossSums[o] += r.outputLossSums[o];
        total.finite = total.finite && r.finite;
    }
    return total;
}

Result<SliceResult> Trainer::Impl::runOnGpu(const pipeline::Element *batch, std::span<const std::int64_t> bounds, bool training, float scale,
                                            std::vector<std::unique_ptr<Replica>> &reps)
{
    // As the CPU replicas: local row j of worker w is row j * W + w of the global batch.
    const std::int64_t stride = workers(), rank = reducer->processIndex();
    std::vector<PassContext> contexts(reps.size());
    std::vector<Replica *> holders;
    for (std::size_t r = 0; r < reps.size(); ++r) {
        contexts[r].training = training;
        contexts[r].seed = config.seed;
        contexts[r].step = std::uint64_t(step);
        contexts[r].globalRowOffset = bounds[r] * stride + rank;
        contexts[r].globalRowStride = stride;
        holders.push_back(reps[r].get());
    }
    Result<SliceResult> result = SliceResult{};
    inArena([&] {
        // From the batch straight into each GPU replica's pinned staging; no batch: empty slices.
        if (batch)
            result = gpu->run(*batch, bounds, weighting, contexts, scale, training, holders);
        else
            result = gpu->run(std::span<const BatchSlice>(slices.data(), reps.size()), contexts, scale, training, holders);
    });
    return result;
}

Status Trainer::Impl::syncFromGpu()
{
    return gpu ? gpu->getState(weights, optimizer->slots()) : Status::success();
}

Result<nlohmann::json> Trainer::Impl::metricValues(std::vector<std::unique_ptr<Replica>> &reps, const std::string &prefix, bool acrossProcesses)
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
                if (auto s = reducer->sumAcrossProcesses(state); !s.ok())
                    return s.error(); // a lost process: the epoch's metrics cannot be told
            first.setState(state);
            const std::string name = outputs.size() == 1 ? first.name() : outputs[o].name + "_" + first.name();
            values[prefix + name] = first.result();
        }
    }
    return values;
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
        if (!result)
            return result.error();
        totals.rows += double(*rows);
        for (std::size_t o = 0; o < result->outputLossSums.size(); ++o)
            totals.outputLoss[o] += result->outputLossSums[o];
    }
    return Status::success();
}

} // namespace sluice::train
