// `sluice bench train`: the training step of an MLP, timed as the Trainer runs it, over batches
// generated before timing: on the CPU backend each replica's forward and backward as a oneTBB
// task of the training arena, then the all-reduce and the optimizer update in the same arena; on
// GPUs the Trainer's GpuEngine (run, then update). And, for comparison, the whole `sluice run`
// path (pipeline included) on the same model and device.
#include "commands/bench/bench_train.h"

#include "io/formats/npy_file.h"
#include "io/writers/npy_writer.h"
#include "io/storage/page_cache.h"
#include "pipeline/engine/element.h"
#include "pipeline/engine/pipeline.h"
#include "project/project.h"
#include "telemetry/cpu_info.h"
#include "train/loop/batch_slicer.h"
#include "train/cpu/gemm.h"
#include "train/gpu/gpu_engine.h"
#include "train/distribute/gradient_reducer.h"
#include "io/synthetic/zipf_ids.h"
#include "train/model/huge_pages.h"
#include "train/model/model.h"
#include "train/objectives/optimizer.h"
#include "train/loop/replica.h"
#include "train/loop/step_update.h"
#include "train/loop/trainer.h"
#include "train/loop/training_config.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
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
    pipeline::Shape x{-1};
    if (o.inputShape.empty())
        x.push_back(o.widths.front());
    else
        x.insert(x.end(), o.inputShape.begin(), o.inputShape.end());
    spec.features.push_back({"x", {DType::Float32, false}, x});
    if (isCrossEntropy(o))
        spec.features.push_back({"y", {DType::Int64, false}, {-1}});
    else
        spec.features.push_back({"y", {DType::Float32, false}, {-1, o.widths.back()}});
    return spec;
}

std::int64_t targetWidth(const TrainBenchOptions &o) { return isCrossEntropy(o) ? 1 : o.widths.back(); }

// Inputs ~ N(0, 1) (or ids in [0, idRange), uniform or Zipf-like); targets: uniform class indices, or N(0, 1) values. Rows are drawn in blocks
// of 1024, each block from its own generator seeded by (seed, batch, block) and the blocks in
// parallel: the same numbers at any thread count, and a 65536 x 4096 batch in about a second.
void fillBatch(const TrainBenchOptions &o, std::uint64_t batchIndex, std::vector<float> &x, std::vector<float> &y)
{
    const std::int64_t in = o.widths.front(), out = o.widths.back(), yw = targetWidth(o);
    x.resize(std::size_t(o.batch * in));
    y.resize(std::size_t(o.batch * yw));
    constexpr std::int64_t block = 1024;
    // Zipf-like ids: popular ranks spread over the table by a permutation fixed by the seed.
    std::mt19937_64 permutationRng(o.seed);
    const std::uint64_t permA = permutationRng(), permB = permutationRng();
    const IdPermutation popular(permA, permB, std::uint64_t(std::max<std::int64_t>(o.idRange, 1)));
    oneapi::tbb::parallel_for(std::int64_t(0), (o.batch + block - 1) / block, [&](std::int64_t b) {
        std::seed_seq seq{std::uint32_t(o.seed), std::uint32_t(o.seed >> 32), std::uint32_t(batchIndex), std::uint32_t(b)};
        std::mt19937_64 rng(seq);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::uniform_int_distribution<std::int64_t> label(0, out - 1);
        std::uniform_int_distribution<std::int64_t> id(0, std::max<std::int64_t>(o.idRange, 1) - 1);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        const auto nextId = [&] {
            if (o.idZipf <= 0)
                return float(id(rng));
            return float(popular(zipfRank(std::uint64_t(o.idRange), o.idZipf, unit(rng))));
        };
        const std::int64_t r0 = b * block, r1 = std::min(o.batch, r0 + block);
        for (std::int64_t i = r0 * in; i < r1 * in; ++i)
            x[std::size_t(i)] = o.idRange > 0 ? nextId() : normal(rng);
        for (std::int64_t i = r0 * yw; i < r1 * yw; ++i)
            y[std::size_t(i)] = isCrossEntropy(o) ? float(label(rng)) : normal(rng);
    });
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

// Pre-generated batches kept to about 2 GiB (at least one): a 65536 x 4096 batch is 1 GiB of
// inputs alone. The PyTorch peer (bench/peers/torch_mlp_train.py) keeps the same number.
int distinctBatches(const TrainBenchOptions &o)
{
    const double bytes = double(o.batch) * double(o.widths.front() + targetWidth(o)) * sizeof(float);
    return int(std::clamp<double>(std::floor(double(2ull << 30) / bytes), 1.0, double(std::max(1, o.distinctBatches))));
}

// What both backends' step timing starts from: the model, its initial weights, the optimizer and
// the batches, every one cut into the replicas' slices before timing (the Trainer cuts each
// pipeline batch as it arrives; that copy is the pipeline's share of the work, measured by "run").
struct StepSetup
{
    std::unique_ptr<train::Model> model;
    std::vector<float> weights;
    std::unique_ptr<train::Optimizer> optimizer;
    std::vector<std::vector<train::BatchSlice>> batches;
};

Result<StepSetup> prepareSteps(const TrainBenchOptions &o, int replicas)
{
    if (replicas > o.batch)
        return Error::invalid("--replicas", std::to_string(replicas) + " replicas in all, more than the " + std::to_string(o.batch) + " rows of a batch");
    StepSetup s;
    auto built = train::Model::build(o.model.is_null() ? mlpModelJson(o) : o.model, elementSpec(o));
    if (!built)
        return built.error();
    s.model = std::move(*built);
    auto initial = s.model->initialWeights(o.seed);
    if (!initial)
        return initial.error();
    s.weights = train::copyToHugePages(*initial); // as the Trainer holds them
    auto optimizer = train::createOptimizer(optimizerJson(o), s.model->trainableParameterCount());
    if (!optimizer)
        return optimizer.error();
    s.optimizer = std::move(*optimizer);

    const auto bounds = train::splitRows(o.batch, replicas);
    s.batches.resize(std::size_t(distinctBatches(o)));
    std::vector<float> x, y;
    const std::int64_t in = o.widths.front(), yw = targetWidth(o);
    for (std::size_t k = 0; k < s.batches.size(); ++k) {
        fillBatch(o, k, x, y);
        for (int r = 0; r < replicas; ++r) {
            const std::int64_t b = bounds[std::size_t(r)], rows = bounds[std::size_t(r) + 1] - b;
            train::BatchSlice slice;
            slice.rows = rows;
            slice.globalRowOffset = b;
            train::Shape shape{rows};
            if (o.inputShape.empty())
                shape.push_back(in);
            else
                shape.insert(shape.end(), o.inputShape.begin(), o.inputShape.end());
            slice.inputs.emplace_back(shape);
            std::copy_n(x.begin() + b * in, rows * in, slice.inputs[0].data.begin());
            slice.targets.emplace_back(isCrossEntropy(o) ? train::Shape{rows} : train::Shape{rows, yw});
            std::copy_n(y.begin() + b * yw, rows * yw, slice.targets[0].data.begin());
            s.batches[k].push_back(std::move(slice));
        }
    }
    return s;
}

double stepLoss(const train::SliceResult &r, std::int64_t batch)
{
    double loss = 0;
    for (double l : r.outputLossSums)
        loss += l;
    return loss / double(batch);
}

void finish(const TrainBenchOptions &o, TrainBenchResult &r, const std::vector<double> &stepMs)
{
    r.samplesPerSecond = double(o.steps * o.batch) / r.seconds;
    r.stepMsMedian = median(stepMs);
    r.stepMsMean = r.seconds * 1000.0 / double(o.steps);
    r.tflops = o.model.is_null() ? 6.0 * double(denseWeightCount(o)) * r.samplesPerSecond / 1e12 : 0.0; // MLPs only
}

// The CPU backend: each replica's forward and backward as a task of the training arena, then
// the all-reduce and the optimizer update in the same arena, as Trainer::Impl::trainStep.
Result<TrainBenchResult> timeCpuSteps(const TrainBenchOptions &o, StepSetup &s)
{
    const int threads = o.threads > 0 ? o.threads : defaultThreadCount();
    oneapi::tbb::task_arena arena(threads);
    train::cpu::useSingleThreadedBlas();
    auto reducer = train::makeInProcessReducer();
    std::vector<std::unique_ptr<train::Replica>> replicas;
    for (int r = 0; r < o.replicas; ++r)
        replicas.push_back(std::make_unique<train::Replica>(*s.model));

    TrainBenchResult result;
    result.mode = "step";
    result.threads = threads;
    result.replicas = o.replicas;
    result.parameters = parameterTotal(*s.model);
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
        const auto &slices = s.batches[std::size_t(step) % s.batches.size()];
        const auto t0 = Clock::now();
        arena.execute([&] {
            oneapi::tbb::parallel_for(std::size_t(0), replicas.size(), [&](std::size_t r) {
                train::PassContext ctx;
                ctx.seed = o.seed;
                ctx.step = std::uint64_t(step);
                ctx.globalRowOffset = slices[r].globalRowOffset;
                ctx.training = true;
                replicas[r]->start(ctx, s.weights, slices[r], scale, true, false);
            });
            // Synchronized layers: the replicas' sums, as the Trainer adds them (one process).
            while (replicas.front()->waiting()) {
                const std::vector<double> total = train::sumOfLocalSums(replicas);
                oneapi::tbb::parallel_for(std::size_t(0), replicas.size(), [&](std::size_t r) { replicas[r]->resume(total); });
            }
            for (std::size_t r = 0; r < replicas.size(); ++r)
                sliceResults[r] = replicas[r]->result();
        });
        const auto t1 = Clock::now();
        Status reduced = Status::success();
        arena.execute([&] {
            train::UsedRows used;
            reduced = train::reduceGradients(*reducer, *s.model, replicas, used);
            if (reduced.ok())
                train::applyStepUpdate(*s.model, *s.optimizer, s.weights, replicas.front()->gradients(), 0.0, float(o.learningRate), step + 1, used);
        });
        if (!reduced.ok())
            return reduced.error();
        double loss = 0;
        for (const auto &r : sliceResults)
            loss += stepLoss(r, o.batch);
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
    finish(o, result, stepMs);
    result.forwardBackwardMs = forwardBackward / double(o.steps);
    result.reduceUpdateMs = reduceUpdate / double(o.steps);
    return result;
}

// The CUDA backend through the Trainer's GpuEngine: run() stages each replica's slice through
// pinned memory, copies it, queues forward and backward and waits only for the losses; update()
// only queues the gradient sum and the optimizer. So a step is timed from the return of one run()
// to the return of the next: by then the previous step's backward and update have run (the
// losses of a step come after them on the same stream). run_call_ms thus holds the previous
// step's backward and update; update_call_ms is queueing time only.
Result<TrainBenchResult> timeGpuSteps(const TrainBenchOptions &o, StepSetup &s)
{
    const int threads = o.threads > 0 ? o.threads : defaultThreadCount();
    oneapi::tbb::task_arena arena(threads); // the engine stages slices on oneTBB tasks
    train::GpuEngineOptions options;
    options.devices = o.gpuDevices;
    options.precision = o.precision;
    auto engine = train::createGpuEngine(*s.model, *s.optimizer, options);
    if (!engine)
        return engine.error();
    train::GpuEngine &gpu = **engine;
    if (auto st = gpu.setState(s.weights, s.optimizer->slots()); !st.ok())
        return st.error();

    TrainBenchResult result;
    result.mode = "step";
    result.threads = threads;
    result.replicas = int(o.gpuDevices.size());
    result.deviceName = gpu.description();
    result.parameters = parameterTotal(*s.model);
    result.steps = o.steps;
    result.warmup = o.warmup;
    result.extra["reducer"] = gpu.reducerName();
    const float scale = float(1.0 / double(o.batch));
    std::vector<train::PassContext> contexts(o.gpuDevices.size());
    std::vector<double> stepMs;
    stepMs.reserve(std::size_t(o.steps));
    double runCall = 0, updateCall = 0;
    Clock::time_point mark = Clock::now(), timedStart = mark, timedEnd = mark;
    for (std::int64_t step = 0; step < o.warmup + o.steps; ++step) {
        const auto &slices = s.batches[std::size_t(step) % s.batches.size()];
        for (std::size_t r = 0; r < contexts.size(); ++r) {
            contexts[r].seed = o.seed;
            contexts[r].step = std::uint64_t(step);
            contexts[r].globalRowOffset = slices[r].globalRowOffset;
        }
        const auto t0 = Clock::now();
        Result<train::SliceResult> ran = train::SliceResult{};
        arena.execute([&] { ran = gpu.run(slices, contexts, scale, true, {}); });
        if (!ran)
            return ran.error();
        const auto t1 = Clock::now();
        Status updated = Status::success();
        arena.execute([&] { updated = gpu.update(float(o.learningRate), step + 1); });
        if (!updated.ok())
            return updated.error();
        const auto t2 = Clock::now();
        const double loss = stepLoss(*ran, o.batch);
        if (!ran->finite || !std::isfinite(loss))
            return Error::invalid("bench train", "the loss became NaN or infinite at step " + std::to_string(step + 1));
        if (step == o.warmup) {
            result.firstLoss = loss;
            timedStart = mark; // the end of the last warm-up step's run(), or the start
        }
        result.lastLoss = loss;
        if (step >= o.warmup) {
            stepMs.push_back(std::chrono::duration<double, std::milli>(t1 - mark).count());
            runCall += std::chrono::duration<double, std::milli>(t1 - t0).count();
            updateCall += std::chrono::duration<double, std::milli>(t2 - t1).count();
            timedEnd = t1;
        }
        mark = t1;
    }
    result.seconds = std::chrono::duration<double>(timedEnd - timedStart).count();
    finish(o, result, stepMs);
    result.runCallMs = runCall / double(o.steps);
    result.updateCallMs = updateCall / double(o.steps);
    result.extra["step_includes"] = "host-to-device copy of the batch (staged through pinned memory)";
    return result;
}

} // namespace

std::int64_t denseWeightCount(const TrainBenchOptions &o)
{
    std::int64_t n = 0;
    for (std::size_t i = 1; i < o.widths.size(); ++i)
        n += o.widths[i - 1] * o.widths[i];
    return n;
}

Status resolveBenchDevices(TrainBenchOptions &o)
{
    o.gpuDevices.clear();
    if (o.device == "cpu")
        return Status::success();
    if (o.device.rfind("cuda", 0) != 0)
        return Error::invalid("--device", "'" + o.device + "' is not cpu, cuda or cuda:N");
    int index = -1;
    if (o.device.size() > 4) {
        const std::string number = o.device.substr(5);
        if (o.device[4] != ':' || number.empty() || number.size() > 4 || number.find_first_not_of("0123456789") != std::string::npos)
            return Error::invalid("--device", "'" + o.device + "' is not cpu, cuda or cuda:N");
        index = std::stoi(number);
    }
    if (index < 0 && o.replicas > 1) // as `sluice run --device cuda --replicas 2`
        return Error::invalid("--replicas", "with --device cuda the replicas are the GPUs; give one device (cuda:0) for logical replicas");
    std::string reason;
    auto devices = train::resolveGpuDevices({index}, reason);
    if (!devices)
        return Error::invalid("--device", devices.error().reason);
    if (devices->empty()) {
        // The reason ends with what a run does about it ("; training on the CPU"): a benchmark
        // of the GPU does not fall back.
        for (const char *tail : {"; training on the CPU", "; using the CPU backend"})
            if (const auto at = reason.rfind(tail); at != std::string::npos && at + std::strlen(tail) == reason.size())
                reason.erase(at);
        return Error::invalid("--device", "no GPU to benchmark: " + reason);
    }
    if (index < 0)
        o.gpuDevices = *devices; // one replica per GPU
    else
        o.gpuDevices.assign(std::size_t(o.replicas), index); // logical replicas on that GPU
    return Status::success();
}

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
    auto setup = prepareSteps(o, o.gpuDevices.empty() ? o.replicas : int(o.gpuDevices.size()));
    if (!setup)
        return setup.error();
    return o.gpuDevices.empty() ? timeCpuSteps(o, *setup) : timeGpuSteps(o, *setup);
}

namespace {

// x.npy and y.npy of batch x steps generated rows in `folder`.
Status writeRunData(const TrainBenchOptions &o, const std::string &xPath, const std::string &yPath)
{
    auto xw = NpyWriter::create(xPath, TypeDescr{DType::Float32, nativeByteOrder()}, {std::uint64_t(o.widths.front())});
    if (!xw)
        return xw.error();
    const bool ce = isCrossEntropy(o);
    auto yw = ce ? NpyWriter::create(yPath, TypeDescr{DType::Int64, nativeByteOrder()}, {})
                 : NpyWriter::create(yPath, TypeDescr{DType::Float32, nativeByteOrder()}, {std::uint64_t(o.widths.back())});
    if (!yw)
        return yw.error();
    std::vector<float> x, y;
    for (std::int64_t b = 0; b < o.steps; ++b) {
        fillBatch(o, std::uint64_t(b), x, y);
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
    return Status::success();
}

// The user's x.npy / y.npy must fit the MLP and hold at least one epoch of `steps` batches.
Status checkRunData(const TrainBenchOptions &o, const std::string &xPath, const std::string &yPath)
{
    auto x = openNpy(xPath);
    if (!x)
        return Error::invalid("--data", x.error().message());
    auto y = openNpy(yPath);
    if (!y)
        return Error::invalid("--data", y.error().message());
    const auto &xs = x->shape();
    if (x->dtype() != DType::Float32)
        return Error::invalid("--data", xPath + " holds " + std::string(dtypeName(x->dtype())) + ", the MLP reads float32 features");
    const bool ce = isCrossEntropy(o);
    const auto &ys = y->shape();
    if (ce ? (y->dtype() != DType::Int64 || ys.size() != 1)
           : (y->dtype() != DType::Float32 || ys.size() != 2 || std::int64_t(ys[1]) != o.widths.back()))
        return Error::invalid("--data", yPath + (ce ? " must hold int64 class ids, one per row, for " + o.loss
                                                    : " must hold float32 rows of " + std::to_string(o.widths.back()) +
                                                          " targets (the MLP's output width) for mse"));
    if (xs.size() != 2 || std::int64_t(xs[1]) != o.widths.front())
        return Error::invalid("--data", xPath + " has shape " + pipeline::shapeText({xs.begin(), xs.end()}) + ", the MLP's input width is " +
                                            std::to_string(o.widths.front()) + " (--widths)");
    if (y->shape().empty() || y->shape()[0] != xs[0])
        return Error::invalid("--data", yPath + " does not have the " + std::to_string(xs[0]) + " rows of x.npy");
    if (std::int64_t(xs[0]) < o.batch * o.steps)
        return Error::invalid("--data", xPath + " has " + std::to_string(xs[0]) + " rows, fewer than --batch x --steps (" +
                                            std::to_string(o.batch * o.steps) + ")");
    return Status::success();
}

// Drops both files from the page cache; the fraction of their pages left cached.
Result<double> evictRunData(const std::string &xPath, const std::string &yPath)
{
    double left = 0;
    for (const auto &path : {xPath, yPath}) {
        auto f = evictFromPageCache(path);
        if (!f)
            return f.error();
        left = std::max(left, *f);
    }
    return left;
}

// The project's pipeline alone for `steps` batches: samples/s.
Result<double> timePipelineAlone(const Project &project, int threads, std::int64_t steps)
{
    pipeline::PipelineOptions options;
    options.threads = threads;
    auto p = pipeline::Pipeline::build(project, options);
    if (!p)
        return p.error();
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t samples = 0;
    for (std::int64_t i = 0; i < steps; ++i) {
        auto e = (*p)->next();
        if (!e)
            return e.error();
        if (!*e)
            break;
        samples += std::uint64_t((**e).tensors.front().shape().front());
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return double(samples) / std::max(seconds, 1e-9);
}

} // namespace

Result<TrainBenchResult> benchTrainingRun(const TrainBenchOptions &o, const std::string &folder)
{
    // The data: batch x steps rows, so that an epoch is `steps` steps, or the user's files.
    const std::string dir = o.dataDir.empty() ? folder : o.dataDir;
    const std::string xPath = dir + "/x.npy", yPath = dir + "/y.npy";
    if (auto s = o.dataDir.empty() ? writeRunData(o, xPath, yPath) : checkRunData(o, xPath, yPath); !s.ok())
        return s.error();
    const std::int64_t rows = o.batch * o.steps;

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
    doc["training"] = {{"epochs", o.cold ? 1 : 2},
                       {"steps_per_epoch", o.steps},
                       {"seed", o.seed},
                       {"optimizer", optimizerJson(o)},
                       {"threads", threads},
                       {"checkpoint", {{"every_epoch", false}}}};
    if (o.gpuDevices.empty()) {
        doc["training"]["replicas"] = o.replicas;
    } else {
        Json devices = Json::array();
        for (int d : o.gpuDevices)
            devices.push_back("cuda:" + std::to_string(d));
        doc["training"]["devices"] = devices;
        doc["training"]["precision"] = o.precision;
    }
    auto project = Project::fromJson(doc, folder, "bench-train");
    if (!project)
        return project.error();
    auto config = train::parseTrainingConfig(*project);
    if (!config)
        return config.error();
    double pipelineSamplesPerSecond = 0, cachedAfterEviction = -1;
    if (o.cold) { // the pipeline alone first, from a cold page cache, then the training from one
        auto left = evictRunData(xPath, yPath);
        if (!left)
            return left.error();
        auto alone = timePipelineAlone(*project, threads, o.steps);
        if (!alone)
            return alone.error();
        pipelineSamplesPerSecond = *alone;
        left = evictRunData(xPath, yPath);
        if (!left)
            return left.error();
        cachedAfterEviction = *left;
    }
    std::vector<events::EpochEnd> epochs;
    std::string deviceName = "cpu", notice;
    train::TrainerOptions options; // events at their usual rates, as `sluice run` gets them
    options.onEvent = [&](const events::Event &e) {
        if (const auto *end = events::as<events::EpochEnd>(e))
            epochs.push_back(*end);
        else if (const auto *start = events::as<events::RunStart>(e))
            deviceName = start->device;
        else if (const auto *n = events::as<events::Notice>(e))
            notice = n->message;
    };
    auto trainer = train::Trainer::create(*project, *config, options);
    if (!trainer)
        return trainer.error();
    const auto outcome = (*trainer)->run();
    if (outcome.status != train::RunStatus::Ok)
        return outcome.error ? *outcome.error : Error::invalid("bench train", "the run did not finish");
    const std::size_t timed = o.cold ? 0 : 1; // the epoch measured
    if (epochs.size() != timed + 1)
        return Error::invalid("bench train", "expected " + std::to_string(timed + 1) + " epoch(s), got " + std::to_string(epochs.size()));
    if (!o.gpuDevices.empty() && deviceName == "cpu")
        return Error::invalid("--device", "the Trainer ran on the CPU, not on " + o.device + (notice.empty() ? std::string() : ": " + notice));

    TrainBenchResult result;
    result.mode = "run";
    result.threads = threads;
    result.deviceName = deviceName;
    result.replicas = o.gpuDevices.empty() ? o.replicas : int(o.gpuDevices.size());
    result.parameters = parameterTotal((*trainer)->model());
    result.steps = o.steps;
    result.warmup = o.cold ? 0 : o.steps; // the first epoch
    result.seconds = epochs[timed].seconds;
    result.samplesPerSecond = epochs[timed].samplesPerSecond;
    result.stepMsMean = result.seconds * 1000.0 / double(o.steps);
    result.stepMsMedian = result.stepMsMean; // per-step times are not reported by the Trainer
    result.firstLoss = epochs[0].value("loss").value_or(0.0); // mean losses of the two epochs
    result.lastLoss = epochs[timed].value("loss").value_or(0.0);
    result.tflops = 6.0 * double(denseWeightCount(o)) * result.samplesPerSecond / 1e12;
    result.extra["epoch_rows"] = rows;
    if (!o.dataDir.empty())
        result.extra["data"] = o.dataDir;
    if (o.cold) {
        result.extra["cold"] = true;
        result.extra["cached_after_eviction"] = cachedAfterEviction;
        result.extra["pipeline_samples_per_s"] = pipelineSamplesPerSecond;
        result.extra["of_pipeline"] = pipelineSamplesPerSecond > 0 ? result.samplesPerSecond / pipelineSamplesPerSecond : 0.0;
    }
    return result;
}

} // namespace sluice::commands
