// `sluice bench train`: the training step of an MLP on the CPU backend, timed as the Trainer runs
// it (each replica's forward and backward as a oneTBB task of the training arena, then the
// all-reduce and the optimizer update in the same arena), over batches generated before timing;
// and, for comparison, the whole `sluice run` path (pipeline included) on the same model.
#include "commands/bench_train.h"

#include "io/npy_writer.h"
#include "pipeline/element.h"
#include "project/project.h"
#include "telemetry/cpu_info.h"
#include "train/batch_slicer.h"
#include "train/cpu/gemm.h"
#include "train/gradient_reducer.h"
#include "train/model.h"
#include "train/optimizer.h"
#include "train/replica.h"
#include "train/trainer.h"
#include "train/training_config.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace sluice::commands {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

bool isCrossEntropy(const TrainBenchOptions &o) { return o.loss != "mse"; }

// The element spec the model binds to: x float32 (B, in), y int64 (B,) class indices for the
// cross-entropy, float32 (B, out) for mse.
pipeline::ElementSpec elementSpec(const TrainBenchOptions &o)
{
    pipeline::ElementSpec spec;
    spec.features.push_back({"x", {DType::Float32, false}, {-1, o.widths.front()}});
    if (isCrossEntropy(o))
        spec.features.push_back({"y", {DType::Int64, false}, {-1}});
    else
        spec.features.push_back({"y", {DType::Float32, false}, {-1, o.widths.back()}});
    return spec;
}

// Inputs ~ N(0, 1); targets: uniform class indices, or N(0, 1) values.
void fillBatch(const TrainBenchOptions &o, std::mt19937_64 &rng, std::vector<float> &x, std::vector<float> &y)
{
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<std::int64_t> label(0, o.widths.back() - 1);
    x.resize(std::size_t(o.batch * o.widths.front()));
    for (auto &v : x)
        v = normal(rng);
    if (isCrossEntropy(o)) {
        y.resize(std::size_t(o.batch));
        for (auto &v : y)
            v = float(label(rng));
    } else {
        y.resize(std::size_t(o.batch * o.widths.back()));
        for (auto &v : y)
            v = normal(rng);
    }
}

nlohmann::json optimizerJson(const TrainBenchOptions &o) { return {{"type", o.optimizer}, {"learning_rate", o.learningRate}}; }

// Trainable values (the flat buffer may be longer: parameters are aligned in it).
std::int64_t parameterTotal(const train::Model &model)
{
    std::int64_t n = 0;
    for (const auto &p : model.parameters())
        n += std::int64_t(p.count);
    return n;
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace

nlohmann::json mlpModelJson(const TrainBenchOptions &o)
{
    nlohmann::json layers = nlohmann::json::array();
    for (std::size_t i = 1; i < o.widths.size(); ++i) {
        const bool last = i + 1 == o.widths.size();
        layers.push_back({{"class_name", "Dense"},
                          {"name", last ? std::string("logits") : "dense_" + std::to_string(i)},
                          {"units", o.widths[i]},
                          {"activation", last ? "linear" : o.activation}});
    }
    nlohmann::json output{{"name", "y"}, {"layer", "logits"}, {"target", "y"}, {"loss", o.loss}};
    if (isCrossEntropy(o))
        output["from_logits"] = true;
    return {{"inputs", {{{"name", "x"}, {"feature", "x"}}}}, {"layers", layers}, {"outputs", {output}}};
}

Result<TrainBenchResult> benchTrainingStep(const TrainBenchOptions &o)
{
    auto built = train::Model::build(mlpModelJson(o), elementSpec(o));
    if (!built)
        return built.error();
    const train::Model &model = **built;
    auto initial = model.initialWeights(o.seed);
    if (!initial)
        return initial.error();
    std::vector<float> weights = std::move(*initial);
    auto optimizer = train::createOptimizer(optimizerJson(o), model.parameterCount());
    if (!optimizer)
        return optimizer.error();
    const int threads = o.threads > 0 ? o.threads : defaultThreadCount();
    oneapi::tbb::task_arena arena(threads);
    train::cpu::useSingleThreadedBlas();
    auto reducer = train::makeInProcessReducer();

    std::vector<std::unique_ptr<train::Replica>> replicas;
    for (int r = 0; r < o.replicas; ++r)
        replicas.push_back(std::make_unique<train::Replica>(model));
    std::vector<std::vector<float> *> buffers;
    for (auto &rep : replicas)
        buffers.push_back(&rep->gradients());

    // Every batch cut into the replicas' slices before timing (the Trainer cuts each pipeline
    // batch as it arrives; that copy is the pipeline's share of the work, measured by "run").
    const auto bounds = train::splitRows(o.batch, o.replicas);
    std::vector<std::vector<train::BatchSlice>> batches(std::size_t(o.distinctBatches));
    std::mt19937_64 rng(o.seed);
    std::vector<float> x, y;
    const std::int64_t in = o.widths.front(), targetWidth = isCrossEntropy(o) ? 1 : o.widths.back();
    for (auto &slices : batches) {
        fillBatch(o, rng, x, y);
        for (int r = 0; r < o.replicas; ++r) {
            const std::int64_t b = bounds[std::size_t(r)], rows = bounds[std::size_t(r) + 1] - b;
            train::BatchSlice s;
            s.rows = rows;
            s.globalRowOffset = b;
            s.inputs.emplace_back(train::Shape{rows, in});
            std::copy_n(x.begin() + b * in, rows * in, s.inputs[0].data.begin());
            s.targets.emplace_back(isCrossEntropy(o) ? train::Shape{rows} : train::Shape{rows, targetWidth});
            std::copy_n(y.begin() + b * targetWidth, rows * targetWidth, s.targets[0].data.begin());
            slices.push_back(std::move(s));
        }
    }

    TrainBenchResult result;
    result.mode = "step";
    result.threads = threads;
    result.parameters = parameterTotal(model);
    result.steps = o.steps;
    result.warmup = o.warmup;
    const float scale = float(1.0 / double(o.batch));
    std::vector<train::SliceResult> sliceResults(replicas.size());
    std::vector<double> stepMs;
    stepMs.reserve(std::size_t(o.steps));
    double forwardBackward = 0, reduceUpdate = 0;
    Clock::time_point timedStart;
    for (std::int64_t step = 0; step < o.warmup + o.steps; ++step) {
        if (step == o.warmup)
            timedStart = Clock::now();
        const auto &slices = batches[std::size_t(step % o.distinctBatches)];
        const auto t0 = Clock::now();
        arena.execute([&] {
            oneapi::tbb::parallel_for(std::size_t(0), replicas.size(), [&](std::size_t r) {
                train::PassContext ctx;
                ctx.seed = o.seed;
                ctx.step = std::uint64_t(step);
                ctx.globalRowOffset = slices[r].globalRowOffset;
                sliceResults[r] = replicas[r]->run(ctx, weights, slices[r], scale, true, false);
            });
        });
        const auto t1 = Clock::now();
        Status reduced = Status::success();
        arena.execute([&] {
            reduced = reducer->sum(buffers);
            if (reduced.ok())
                (*optimizer)->apply(weights, *buffers[0], float(o.learningRate), step + 1);
        });
        if (!reduced.ok())
            return reduced.error();
        double loss = 0;
        for (const auto &s : sliceResults)
            for (double l : s.outputLossSums)
                loss += l;
        loss /= double(o.batch);
        if (!std::isfinite(loss))
            return Error::invalid("bench train", "the loss became NaN or infinite at step " + std::to_string(step + 1));
        if (step == o.warmup)
            result.firstLoss = loss;
        result.lastLoss = loss;
        if (step >= o.warmup) {
            const auto t2 = Clock::now();
            forwardBackward += std::chrono::duration<double, std::milli>(t1 - t0).count();
            reduceUpdate += std::chrono::duration<double, std::milli>(t2 - t1).count();
            stepMs.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
        }
    }
    result.seconds = msSince(timedStart) / 1000.0;
    result.samplesPerSecond = double(o.steps * o.batch) / result.seconds;
    result.stepMsMedian = median(stepMs);
    result.stepMsMean = result.seconds * 1000.0 / double(o.steps);
    result.forwardBackwardMs = forwardBackward / double(o.steps);
    result.reduceUpdateMs = reduceUpdate / double(o.steps);
    return result;
}

Result<TrainBenchResult> benchTrainingRun(const TrainBenchOptions &o, const std::string &folder)
{
    // The data: batch x steps rows, so that an epoch is `steps` steps.
    const std::int64_t rows = o.batch * o.steps;
    const std::string xPath = folder + "/x.npy", yPath = folder + "/y.npy";
    {
        auto xw = NpyWriter::create(xPath, TypeDescr{DType::Float32, nativeByteOrder()}, {std::uint64_t(o.widths.front())});
        if (!xw)
            return xw.error();
        const bool ce = isCrossEntropy(o);
        auto yw = ce ? NpyWriter::create(yPath, TypeDescr{DType::Int64, nativeByteOrder()}, {})
                     : NpyWriter::create(yPath, TypeDescr{DType::Float32, nativeByteOrder()}, {std::uint64_t(o.widths.back())});
        if (!yw)
            return yw.error();
        std::mt19937_64 rng(o.seed);
        std::vector<float> x, y;
        for (std::int64_t b = 0; b < o.steps; ++b) {
            fillBatch(o, rng, x, y);
            if (auto s = xw->appendRows(std::span<const float>(x)); !s.ok())
                return s.error();
            Status s = Status::success();
            if (ce) {
                std::vector<std::int64_t> labels(y.begin(), y.end());
                s = yw->appendRows(std::span<const std::int64_t>(labels));
            } else {
                s = yw->appendRows(std::span<const float>(y));
            }
            if (!s.ok())
                return s.error();
        }
        for (auto *w : {&*xw, &*yw})
            if (auto s = w->finish(); !s.ok())
                return s.error();
    }

    const int threads = o.threads > 0 ? o.threads : defaultThreadCount();
    nlohmann::json doc{{"format", "sluice-project"}, {"version", 1}, {"name", "bench-train"}};
    doc["pipeline"]["nodes"] = {
        {{"id", "src"}, {"op", "from_npy"}, {"params", {{"features", {{"x", xPath}, {"y", yPath}}}}}},
        {{"id", "shuffle"}, {"op", "global_shuffle"}, {"params", {{"seed", o.seed}}}},
        {{"id", "batch"}, {"op", "batch"}, {"params", {{"batch_size", o.batch}, {"drop_remainder", true}}}},
        {{"id", "prefetch"}, {"op", "prefetch"}, {"params", {{"buffer_size", "AUTOTUNE"}}}}};
    using Json = nlohmann::json;
    doc["pipeline"]["edges"] = Json::array({Json::array({"src", "shuffle"}), Json::array({"shuffle", "batch"}), Json::array({"batch", "prefetch"})});
    doc["model"] = mlpModelJson(o);
    doc["training"] = {{"epochs", 2},
                       {"seed", o.seed},
                       {"optimizer", optimizerJson(o)},
                       {"replicas", o.replicas},
                       {"threads", threads},
                       {"checkpoint", {{"every_epoch", false}}}};
    auto project = Project::fromJson(doc, folder, "bench-train");
    if (!project)
        return project.error();
    auto config = train::parseTrainingConfig(*project);
    if (!config)
        return config.error();
    std::vector<nlohmann::json> epochs;
    train::TrainerOptions options; // events at their usual rates, as `sluice run` gets them
    options.onEvent = [&](const nlohmann::json &e) {
        if (e.value("event", "") == "epoch_end")
            epochs.push_back(e);
    };
    auto trainer = train::Trainer::create(*project, *config, options);
    if (!trainer)
        return trainer.error();
    const auto outcome = (*trainer)->run();
    if (outcome.status != train::RunStatus::Ok)
        return outcome.error ? *outcome.error : Error::invalid("bench train", "the run did not finish");
    if (epochs.size() != 2)
        return Error::invalid("bench train", "expected two epochs, got " + std::to_string(epochs.size()));

    TrainBenchResult result;
    result.mode = "run";
    result.threads = threads;
    result.parameters = parameterTotal((*trainer)->model());
    result.steps = o.steps;
    result.warmup = o.steps; // the first epoch
    result.seconds = epochs[1].value("seconds", 0.0);
    result.samplesPerSecond = epochs[1].value("samples_per_s", 0.0);
    result.stepMsMean = result.seconds * 1000.0 / double(o.steps);
    result.stepMsMedian = result.stepMsMean; // per-step times are not reported by the Trainer
    result.firstLoss = epochs[0].value("loss", 0.0); // mean losses of the two epochs
    result.lastLoss = epochs[1].value("loss", 0.0);
    result.extra["epoch_rows"] = rows;
    return result;
}

} // namespace sluice::commands
