// The CUDA backend of the trainer (gpu_engine.h): GPUs, their replicas, the gradient sum and
// the update.
//
// Gradient sums, by what the machine offers:
//  - in-device: logical replicas on one GPU, summed by a kernel in replica order (NCCL refuses
//    the same device twice);
//  - nccl: one communicator per GPU (and process, bootstrapped with an id broadcast over MPI).
//    With one replica per GPU the gradients are all-reduced in buckets while the backward pass
//    goes on: after the last layer of a bucket is queued, an event on the compute stream makes
//    the NCCL stream wait, and the bucket's all-reduce runs there (ncclGroupStart/End around
//    the GPUs of this process), overlapping the earlier layers' backward;
//  - host: no NCCL (or NCCL refused the devices): each GPU's sum is downloaded, summed in order
//    (and across processes by the GradientReducer) and uploaded again.
// Every GPU then updates its own copy of the weights from the same sum in the CPU trainer's
// order (trainer_loop.cpp): the non-trainable state (BatchNormalization's moving statistics,
// laid out after every trainable array) adds its reduced "gradient", which is then zeroed;
// clipping and the optimizer see [0, Model::trainableParameterCount()) only.
#include "train/gpu/gpu_engine.h"

#include "train/cuda/kernels/optimizer_kernels.h"
#include "train/cuda/kernels/reduce_kernels.h"
#include "train/gpu/device_query.h"
#include "train/gpu/gpu_optimizer.h"
#include "train/gpu/gpu_replica.h"
#include "train/gpu/nccl_comm.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>

namespace sluice::train {

using namespace gpu;

namespace {

// Gradient bytes per all-reduce bucket: large enough for NCCL's bandwidth, small enough that
// the first bucket starts early in the backward pass.
constexpr std::size_t kBucketFloats = std::size_t(8) << 20 >> 2; // 8 MiB

struct Bucket
{
    std::size_t begin = 0, end = 0; // floats of the flat gradient
};

std::string deviceName(int index) { return "cuda:" + std::to_string(index); }

// This process's rank among the processes of its machine and their number, from the variables
// MPI launchers set (Open MPI, MPICH / Hydra, Slurm); {0, 1} outside a launcher.
std::pair<int, int> localRank()
{
    // Slurm's SLURM_TASKS_PER_NODE reads "4(x2)" or "4,3": the leading count is this layout's
    // (atoi stops at the first non-digit).
    const char *pairs[][2] = {{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                              {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
                              {"SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
                              {"SLURM_LOCALID", "SLURM_TASKS_PER_NODE"}};
    for (const auto &p : pairs) {
        const char *rank = std::getenv(p[0]), *size = std::getenv(p[1]);
        if (rank && size && std::atoi(size) > 0)
            return {std::atoi(rank), std::atoi(size)};
    }
    return {0, 1};
}

class CudaEngine final : public GpuEngine
{
public:
    CudaEngine(const Model &model, GpuEngineOptions options) : m_model(model), m_opt(std::move(options)) {}
    ~CudaEngine() override;

    Status init(Optimizer &optimizer);
    std::string description() const override { return m_description; }
    std::string reducerName() const override { return m_reducerName; }
    Status setState(std::span<const float> weights, const std::vector<OptimizerSlot> &slots) override;
    Status getState(std::span<float> weights, std::vector<OptimizerSlot> &slots) override;
    Result<SliceResult> run(std::span<const BatchSlice> slices, std::span<const PassContext> contexts, float scale, bool training,
                            std::span<Replica *const> metricHolders) override;
    Result<SliceResult> run(const pipeline::Element &batch, std::span<const std::int64_t> bounds, const SampleWeighting &weighting,
                            std::span<const PassContext> contexts, float scale, bool training, std::span<Replica *const> metricHolders) override;
    // The pass, whatever fills the staging buffers: stage(r) for every replica with rows.
    Result<SliceResult> runStaged(std::span<const std::int64_t> rows, const std::function<void(std::size_t)> &stage,
                                  std::span<const PassContext> contexts, float scale, bool training, std::span<Replica *const> metricHolders);
    Status update(float learningRate, std::int64_t iteration) override;

private:
    enum class Reduce { InDevice, Nccl, Host };
    struct Device
    {
        GpuHandles gpu;
        std::unique_ptr<cuda::Blas> blas;
        cuda::DeviceBuffer<float> weights;
        std::unique_ptr<GpuOptimizer> optimizer;
        cuda::DeviceBuffer<double> clipWorkspace;
        std::vector<std::size_t> replicas;
        std::unique_ptr<NcclComm> comm;
        cuda::Stream ncclStream = nullptr;
        cuda::Event backwardDone = nullptr, reduced = nullptr;
    };
    Status initNccl(); // the communicators, or the host sum (agreed by every process)
    void planBuckets();
    void reduceBucket(const Bucket &b, bool onNcclStream);
    float *sumOf(Device &d) { return m_replicas[d.replicas[0]]->gradients(); }
    Error deviceError(const std::string &what) const;

    const Model &m_model;
    GpuEngineOptions m_opt;
    std::vector<std::unique_ptr<Device>> m_devices;
    std::vector<std::unique_ptr<GpuReplica>> m_replicas;
    std::vector<std::size_t> m_replicaDevice;
    Reduce m_reduce = Reduce::InDevice;
    bool m_overlap = false, m_overlappedThisStep = false;
    std::vector<Bucket> m_buckets;
    std::map<std::size_t, std::vector<std::size_t>> m_bucketAfterNode; // node index -> buckets, issued after its backward
    std::vector<float> m_hostSum, m_hostPart;
    std::string m_description, m_reducerName;
};

CudaEngine::~CudaEngine()
{
    // Everything queued finishes before anything it uses is freed; each object goes with its
    // device current.
    for (auto &d : m_devices) {
        try {
            cuda::setDevice(d->gpu.index);
            for (cuda::Stream st : {d->gpu.compute, d->gpu.copy, d->ncclStream})
                if (st)
                    cuda::synchronize(st);
        } catch (...) {
            // the runtime logged it; destructors never throw
        }
    }
    for (std::size_t r = 0; r < m_replicas.size(); ++r) {
        try {
            cuda::setDevice(m_replicas[r]->device().index);
        } catch (...) {
        }
        m_replicas[r].reset();
    }
    for (auto &d : m_devices) {
        try {
            cuda::setDevice(d->gpu.index);
        } catch (...) {
        }
        d->comm.reset();
        cuda::destroyEvent(d->backwardDone);
        cuda::destroyEvent(d->reduced);
        cuda::destroyStream(d->ncclStream);
        d->optimizer.reset();
        d->weights = {};
        d->clipWorkspace = {};
        d->blas.reset();
        cuda::destroyStream(d->gpu.compute);
        cuda::destroyStream(d->gpu.copy);
    }
}

Error CudaEngine::deviceError(const std::string &what) const
{
    std::string names;
    for (const auto &d : m_devices)
        names += (names.empty() ? "" : ",") + std::to_string(d->gpu.index);
    return Error::io("cuda:" + names, what);
}

Status CudaEngine::init(Optimizer &optimizer)
{
    std::vector<std::string> slotNames;
    for (const auto &s : optimizer.slots())
        slotNames.push_back(s.name);
    const auto hyper = optimizer.hyperparameters();
    const cuda::GemmMode mode = m_opt.precision == "tf32" ? cuda::GemmMode::Tf32 : cuda::GemmMode::Fp32;
    const int processes = m_opt.reducer ? m_opt.reducer->processCount() : 1;
    // Several processes take every decision below together (an MPI collective each), so that
    // none waits in a call the others do not make.
    auto everyProcess = [&](bool mine) -> Result<bool> {
        std::vector<double> v{mine ? 1.0 : 0.0};
        if (processes > 1 && m_opt.reducer)
            if (auto s = m_opt.reducer->sumAcrossProcesses(v); !s.ok())
                return s.error();
        return v[0] == double(processes);
    };
    std::optional<Error> setupError;
    try {
        for (int index : m_opt.devices) {
            auto found = std::find_if(m_devices.begin(), m_devices.end(), [&](auto &d) { return d->gpu.index == index; });
            if (found == m_devices.end()) {
                auto d = std::make_unique<Device>();
                cuda::setDevice(index);
                d->gpu.index = index;
                d->gpu.compute = cuda::createStream();
                d->gpu.copy = cuda::createStream();
                try {
                    d->blas = std::make_unique<cuda::Blas>();
                } catch (const cuda::CudaError &e) {
                    // cuBLAS missing: the run goes on, on the CPU (docs/architecture.md, decision 4).
                    setupError = Error::notFound("cuda", e.what());
                    cuda::destroyStream(d->gpu.compute);
                    cuda::destroyStream(d->gpu.copy);
                    break;
                }
                d->gpu.context = {d->gpu.compute, d->blas.get(), mode, m_opt.precision == "bf16"};
                d->weights = cuda::DeviceBuffer<float>(m_model.parameterCount());
                // The optimizer's slots cover the trainable part only, as the CPU optimizer's.
                d->optimizer = std::make_unique<GpuOptimizer>(hyper, slotNames, m_model.trainableParameterCount());
                d->clipWorkspace = cuda::DeviceBuffer<double>(cuda::kGlobalNormWorkspace);
                m_devices.push_back(std::move(d));
                found = m_devices.end() - 1;
            }
            m_replicaDevice.push_back(std::size_t(found - m_devices.begin()));
            (*found)->replicas.push_back(m_replicas.size());
            cuda::setDevice(index);
            m_replicas.push_back(std::make_unique<GpuReplica>(m_model, (*found)->gpu));
        }
    } catch (const std::exception &e) {
        setupError = Error::io("cuda", std::string("setting up the GPUs failed: ") + e.what());
    }
    // Agreed outcome: a fatal failure anywhere fails every process; a missing library anywhere
    // sends every process to the CPU.
    std::vector<double> outcome{setupError && setupError->kind == Error::Kind::NotFound ? 1.0 : 0.0,
                                setupError && setupError->kind != Error::Kind::NotFound ? 1.0 : 0.0};
    if (processes > 1 && m_opt.reducer)
        if (auto s = m_opt.reducer->sumAcrossProcesses(outcome); !s.ok())
            return s.error();
    if (outcome[1] > 0)
        return setupError && setupError->kind != Error::Kind::NotFound ? *setupError : Error::io("cuda", "another process failed to set up its GPUs");
    if (outcome[0] > 0)
        return setupError ? *setupError : Error::notFound("cuda", "another process could not set up its GPUs");

    std::string why;
    const bool ncclHere = NcclComm::available(why);
    if (m_devices.size() == 1 && processes == 1) {
        m_reduce = Reduce::InDevice;
        m_reducerName = "in-device";
    } else {
        auto ncclEverywhere = everyProcess(ncclHere);
        if (!ncclEverywhere)
            return ncclEverywhere.error();
        m_reduce = Reduce::Host;
        m_reducerName = "host (" + (ncclHere ? std::string("NCCL is missing in another process") : why) + ")";
        if (*ncclEverywhere) {
            if (auto s = initNccl(); !s.ok())
                return s.error();
        }
    }

    const auto query = queryGpuDevices();
    for (const auto &d : m_devices) {
        std::string name = deviceName(d->gpu.index);
        for (const auto &g : query.devices)
            if (g.index == d->gpu.index)
                name += " (" + g.name + ")";
        if (d->replicas.size() > 1)
            name += " x " + std::to_string(d->replicas.size()) + " logical replicas";
        m_description += (m_description.empty() ? "" : ", ") + name;
    }
    m_description += ", " + m_opt.precision;
    return Status::success();
}

Status CudaEngine::initNccl()
{
    const int processes = m_opt.reducer ? m_opt.reducer->processCount() : 1;
    const int rank = m_opt.reducer ? m_opt.reducer->processIndex() : 0;
    auto sumEverywhere = [&](std::vector<double> &v) { return processes > 1 ? m_opt.reducer->sumAcrossProcesses(v) : Status::success(); };
    // Every process must drive as many GPUs (ranks are process * local + device): sum(d)^2 equals
    // P * sum(d^2) exactly when every d is the same.
    const double local = double(m_devices.size());
    std::vector<double> counts{local, local * local};
    if (auto s = sumEverywhere(counts); !s.ok())
        return s;
    if (counts[0] * counts[0] != counts[1] * processes) {
        m_reducerName = "host (the processes drive different numbers of GPUs)";
        return Status::success();
    }
    NcclId id;
    std::string failure;
    if (rank == 0) {
        try {
            id = NcclComm::newId();
        } catch (const std::exception &e) {
            failure = e.what();
        }
    }
    std::vector<double> failed{failure.empty() ? 0.0 : 1.0};
    if (auto s = sumEverywhere(failed); !s.ok())
        return s;
    if (failed[0] > 0) {
        m_reducerName = "host (NCCL: " + (failure.empty() ? std::string("rank 0 could not create an id") : failure) + ")";
        return Status::success();
    }
    if (processes > 1) {
        // The id's 128 bytes travel as 32 floats: MPI copies their bits.
        std::vector<float> carrier(32);
        std::memcpy(carrier.data(), id.bytes.data(), 128);
        if (auto s = m_opt.reducer->broadcastFromFirst(carrier); !s.ok())
            return s;
        std::memcpy(id.bytes.data(), carrier.data(), 128);
    }
    std::vector<int> indices;
    for (const auto &d : m_devices)
        indices.push_back(d->gpu.index);
    std::vector<std::unique_ptr<NcclComm>> comms;
    try {
        comms = NcclComm::create(id, processes * int(indices.size()), rank * int(indices.size()), indices);
    } catch (const std::exception &e) {
        failure = e.what(); // e.g. the same GPU in two processes: NCCL refuses duplicates
        // The others may still wait inside NCCL's start-up for this process: only an abort of
        // every rank (the caller's, on an error) ends them. Where every process failed alike
        // (duplicate GPUs), the sum below still reaches all of them.
        if (processes > 1 && failure.find("nvalid usage") == std::string::npos && failure.find("uplicate") == std::string::npos)
            return deviceError("NCCL could not start: " + failure);
    }
    failed = {failure.empty() ? 0.0 : 1.0};
    if (auto s = sumEverywhere(failed); !s.ok())
        return s;
    if (failed[0] > 0) {
        m_reducerName = "host (NCCL: " + (failure.empty() ? std::string("another process could not join") : failure) + ")";
        return Status::success();
    }
    try {
        for (std::size_t i = 0; i < m_devices.size(); ++i) {
            auto &d = *m_devices[i];
            cuda::setDevice(d.gpu.index);
            d.comm = std::move(comms[i]);
            d.ncclStream = cuda::createStream();
            d.backwardDone = cuda::createEvent();
            d.reduced = cuda::createEvent();
        }
    } catch (const std::exception &e) {
        return deviceError(e.what());
    }
    m_reduce = Reduce::Nccl;
    m_reducerName = processes > 1 ? "nccl+mpi" : "nccl";
    planBuckets();
    return Status::success();
}

void CudaEngine::planBuckets()
{
    for (const auto &d : m_devices)
        if (d->replicas.size() != 1)
            return; // logical replicas are summed in the device first: one all-reduce after the pass
    const auto &nodes = m_model.nodes();
    const auto &params = m_model.parameters();
    // A parameter's span runs to where the next one starts (the flat buffer pads each array to
    // an aligned size), the last one's to the end of the buffer.
    std::vector<std::size_t> offsets;
    for (const auto &p : params)
        offsets.push_back(p.offset);
    std::sort(offsets.begin(), offsets.end());
    auto spanEnd = [&](std::size_t offset) {
        const auto next = std::upper_bound(offsets.begin(), offsets.end(), offset);
        return next == offsets.end() ? m_model.parameterCount() : *next;
    };
    // Trainable arrays go in layer order; the non-trainable state, after every trainable array
    // in the buffer, is one bucket of its own, issued once every layer's backward is queued.
    std::vector<Bucket> buckets;
    Bucket open{SIZE_MAX, 0};
    std::size_t lastNode = 0;
    bool anyParams = false;
    for (std::size_t i = nodes.size(); i-- > m_model.inputs().size();) {
        if (nodes[i].params.empty())
            continue;
        anyParams = true;
        lastNode = i;
        for (auto p : nodes[i].params) {
            if (!params[p].trainable)
                continue;
            open.begin = std::min(open.begin, params[p].offset);
            open.end = std::max(open.end, spanEnd(params[p].offset));
        }
        if (open.begin != SIZE_MAX && open.end - open.begin >= kBucketFloats) {
            m_bucketAfterNode[i].push_back(buckets.size());
            buckets.push_back(open);
            open = {SIZE_MAX, 0};
        }
    }
    if (open.begin != SIZE_MAX) {
        m_bucketAfterNode[lastNode].push_back(buckets.size());
        buckets.push_back(open);
    }
    if (anyParams && m_model.trainableParameterCount() < m_model.parameterCount()) {
        m_bucketAfterNode[lastNode].push_back(buckets.size());
        buckets.push_back({m_model.trainableParameterCount(), m_model.parameterCount()});
    }
    // Overlap only where the buckets tile the gradient without overlapping (parameters laid out
    // in layer order); otherwise one all-reduce of everything after the pass.
    auto sorted = buckets;
    std::sort(sorted.begin(), sorted.end(), [](auto &a, auto &b) { return a.begin < b.begin; });
    std::size_t at = 0;
    for (const auto &b : sorted) {
        if (b.begin != at) {
            m_bucketAfterNode.clear();
            return;
        }
        at = b.end;
    }
    if (at != m_model.parameterCount()) {
        m_bucketAfterNode.clear();
        return;
    }
    m_buckets = std::move(buckets);
    m_overlap = true;
}

void CudaEngine::reduceBucket(const Bucket &b, bool onNcclStream)
{
    for (auto &d : m_devices) {
        if (!onNcclStream)
            break;
        cuda::setDevice(d->gpu.index);
        cuda::recordEvent(d->backwardDone, d->gpu.compute);
        cuda::waitEvent(d->ncclStream, d->backwardDone);
    }
    NcclComm::groupStart();
    try {
        for (auto &d : m_devices) {
            cuda::setDevice(d->gpu.index);
            d->comm->allReduceSum(sumOf(*d) + b.begin, b.end - b.begin, onNcclStream ? d->ncclStream : d->gpu.compute);
        }
    } catch (...) {
        try {
            NcclComm::groupEnd(); // never leave the group open
        } catch (...) {
        }
        throw;
    }
    NcclComm::groupEnd();
}

Status CudaEngine::setState(std::span<const float> weights, const std::vector<OptimizerSlot> &slots)
{
    try {
        for (auto &d : m_devices) {
            cuda::setDevice(d->gpu.index);
            d->weights.upload(weights, d->gpu.compute);
            d->optimizer->upload(slots, d->gpu.compute);
            cuda::synchronize(d->gpu.compute);
        }
    } catch (const std::exception &e) {
        return deviceError(e.what());
    }
    return Status::success();
}

Status CudaEngine::getState(std::span<float> weights, std::vector<OptimizerSlot> &slots)
{
    try {
        auto &d = *m_devices.front();
        cuda::setDevice(d.gpu.index);
        const auto w = d.weights.download(d.gpu.compute);
        std::copy_n(w.begin(), std::min(w.size(), weights.size()), weights.begin());
        d.optimizer->download(slots, d.gpu.compute);
    } catch (const std::exception &e) {
        return deviceError(e.what());
    }
    return Status::success();
}

Result<SliceResult> CudaEngine::run(std::span<const BatchSlice> slices, std::span<const PassContext> contexts, float scale, bool training,
                                    std::span<Replica *const> metricHolders)
{
    std::vector<std::int64_t> rows;
    for (const auto &slice : slices)
        rows.push_back(slice.rows);
    return runStaged(rows, [&](std::size_t r) { m_replicas[r]->stage(slices[r]); }, contexts, scale, training, metricHolders);
}

Result<SliceResult> CudaEngine::run(const pipeline::Element &batch, std::span<const std::int64_t> bounds, const SampleWeighting &weighting,
                                    std::span<const PassContext> contexts, float scale, bool training, std::span<Replica *const> metricHolders)
{
    std::vector<std::int64_t> rows;
    for (std::size_t r = 0; r + 1 < bounds.size(); ++r)
        rows.push_back(bounds[r + 1] - bounds[r]);
    return runStaged(rows, [&](std::size_t r) { m_replicas[r]->stage(batch, bounds[r], bounds[r + 1], weighting); }, contexts, scale, training,
                     metricHolders);
}

Result<SliceResult> CudaEngine::runStaged(std::span<const std::int64_t> rows, const std::function<void(std::size_t)> &stage,
                                          std::span<const PassContext> contexts, float scale, bool training, std::span<Replica *const> metricHolders)
{
    const std::size_t count = m_replicas.size();
    // As Replica::run: the replica's share of the batch, for BatchNormalization's moving statistics.
    std::vector<PassContext> passContexts(contexts.begin(), contexts.end());
    for (auto &ctx : passContexts)
        ctx.lossScale = scale;
    std::size_t r = 0;
    try {
        for (r = 0; r < count; ++r)
            m_replicas[r]->reserve(rows[r]);
        // Gathering into pinned memory is host work: every replica's at once.
        oneapi::tbb::parallel_for(std::size_t(0), count, [&](std::size_t k) {
            if (rows[k] > 0)
                stage(k);
            else
                m_replicas[k]->stageNothing();
        });
        for (r = 0; r < count; ++r) {
            if (rows[r] == 0)
                continue;
            auto &rep = *m_replicas[r];
            cuda::setDevice(rep.device().index);
            rep.upload();
            rep.forward(passContexts[r], m_devices[m_replicaDevice[r]]->weights.data());
            rep.loss(scale, training, r < metricHolders.size() ? metricHolders[r] : nullptr);
        }
        if (training) {
            m_overlappedThisStep = false;
            for (r = 0; r < count; ++r) {
                cuda::setDevice(m_replicas[r]->device().index);
                m_replicas[r]->zeroGradients();
            }
            // Layer by layer over every replica, so that a bucket's all-reduce starts as soon as
            // every GPU has queued its last layer.
            for (std::size_t i = m_model.nodes().size(); i-- > m_model.inputs().size();) {
                for (r = 0; r < count; ++r) {
                    if (rows[r] == 0)
                        continue;
                    cuda::setDevice(m_replicas[r]->device().index);
                    m_replicas[r]->backwardNode(i, passContexts[r], m_devices[m_replicaDevice[r]]->weights.data());
                }
                if (m_overlap)
                    if (auto b = m_bucketAfterNode.find(i); b != m_bucketAfterNode.end())
                        for (std::size_t k : b->second)
                            reduceBucket(m_buckets[k], true);
            }
            m_overlappedThisStep = m_overlap;
        }
        // Only the losses (and predictions for metrics) are waited for: the backward pass goes on
        // while the trainer checks the loss, reads the next batch and stages it.
        SliceResult total;
        total.outputLossSums.assign(m_model.outputs().size(), 0.0);
        for (r = 0; r < count; ++r) {
            const auto part = m_replicas[r]->collect(r < metricHolders.size() ? metricHolders[r] : nullptr);
            if (part.error)
                return *part.error; // an Embedding's id out of range, named
            for (std::size_t o = 0; o < part.outputLossSums.size(); ++o)
                total.outputLossSums[o] += part.outputLossSums[o];
            total.finite = total.finite && part.finite;
        }
        return total;
    } catch (const OutOfDeviceMemory &e) {
        const int device = m_replicas[std::min(r, count - 1)]->device().index;
        const std::string needed = e.bytes ? " (" + std::to_string(e.bytes >> 20) + " MiB more)" : std::string();
        return Error::invalid(deviceName(device), "out of GPU memory for layer '" + e.layer + "' at a batch of " + std::to_string(e.rows) +
                                                      " rows per replica" + needed + ": " + e.detail +
                                                      "; lower the batch size, use more replicas or --precision bf16");
    } catch (const std::exception &e) {
        return deviceError(e.what());
    }
}

Status CudaEngine::update(float learningRate, std::int64_t iteration)
{
    const auto n = std::int64_t(m_model.parameterCount()), trainable = std::int64_t(m_model.trainableParameterCount());
    try {
        for (auto &d : m_devices) {
            if (d->replicas.size() < 2)
                continue;
            cuda::setDevice(d->gpu.index);
            std::vector<const float *> parts;
            for (auto r : d->replicas)
                parts.push_back(m_replicas[r]->gradients());
            cuda::sumBuffers(d->gpu.compute, parts.data(), parts.size(), sumOf(*d), n);
        }
        if (m_reduce == Reduce::Nccl) {
            if (m_overlappedThisStep) {
                for (auto &d : m_devices) {
                    cuda::setDevice(d->gpu.index);
                    cuda::recordEvent(d->reduced, d->ncclStream);
                    cuda::waitEvent(d->gpu.compute, d->reduced);
                }
            } else {
                reduceBucket({0, std::size_t(n)}, false);
            }
        } else if (m_reduce == Reduce::Host) {
            m_hostSum.assign(std::size_t(n), 0.0f);
            for (auto &d : m_devices) {
                cuda::setDevice(d->gpu.index);
                m_hostPart.resize(std::size_t(n));
                cuda::copyToHost(m_hostPart.data(), sumOf(*d), std::size_t(n) * sizeof(float), d->gpu.compute);
                cuda::synchronize(d->gpu.compute);
                for (std::size_t k = 0; k < m_hostPart.size(); ++k)
                    m_hostSum[k] += m_hostPart[k];
            }
            if (m_opt.reducer) {
                std::vector<float> *buffers[] = {&m_hostSum};
                if (auto s = m_opt.reducer->sum(buffers); !s.ok())
                    return s.error();
            }
            for (auto &d : m_devices) {
                cuda::setDevice(d->gpu.index);
                cuda::copyToDevice(sumOf(*d), m_hostSum.data(), std::size_t(n) * sizeof(float), d->gpu.compute);
            }
        }
        for (auto &d : m_devices) {
            cuda::setDevice(d->gpu.index);
            // The moving statistics first: clipping and the optimizer see trainable gradients only.
            cuda::applyStateUpdates(d->gpu.compute, d->weights.data() + trainable, sumOf(*d) + trainable, n - trainable);
            if (m_opt.globalClipnorm > 0)
                cuda::clipByGlobalNorm(d->gpu.compute, sumOf(*d), trainable, m_opt.globalClipnorm, d->clipWorkspace.data());
            d->optimizer->apply(d->gpu.compute, d->weights.data(), sumOf(*d), learningRate, iteration);
        }
        // The host's sum buffer is read by the copies above: wait before it is reused.
        if (m_reduce == Reduce::Host)
            for (auto &d : m_devices) {
                cuda::setDevice(d->gpu.index);
                cuda::synchronize(d->gpu.compute);
            }
    } catch (const std::exception &e) {
        return deviceError(e.what());
    }
    return Status::success();
}

} // namespace

Result<std::vector<int>> resolveGpuDevices(const std::vector<int> &requested, std::string &reason)
{
    const auto query = queryGpuDevices();
    if (query.devices.empty()) {
        reason = query.reason.empty() ? "no GPU found; training on the CPU" : query.reason;
        return std::vector<int>{};
    }
    std::vector<int> out;
    for (int index : requested) {
        if (index < 0) {
            // "cuda": every GPU of the machine, shared out between the processes an MPI launcher
            // started on it (process k of L takes GPUs k, k + L, ...; more processes than GPUs share).
            const auto [rank, local] = localRank();
            const int count = int(query.devices.size());
            for (int k = 0; k < count; ++k)
                if (local <= 1 || (count >= local ? k % local == rank % local : k == rank % count))
                    out.push_back(query.devices[std::size_t(k)].index);
            continue;
        }
        const bool known = std::any_of(query.devices.begin(), query.devices.end(), [&](const sluice::GpuDevice &d) { return d.index == index; });
        if (!known) {
            std::string have;
            for (const auto &d : query.devices)
                have += (have.empty() ? "" : ", ") + deviceName(d.index) + " " + d.name;
            return Error::invalid("training.devices", deviceName(index) + " does not exist; this machine has " +
                                                          std::to_string(query.devices.size()) + " GPU(s): " + have);
        }
        out.push_back(index);
    }
    return out;
}

Result<std::unique_ptr<GpuEngine>> createGpuEngine(const Model &model, Optimizer &optimizer, const GpuEngineOptions &options)
{
    const auto &nodes = model.nodes();
    for (std::size_t i = model.inputs().size(); i < nodes.size(); ++i) {
        std::vector<Shape> inputShapes;
        for (int in : nodes[i].inputs)
            inputShapes.push_back(nodes[std::size_t(in)].shape);
        std::string reason;
        if (!supportedOnGpu(*nodes[i].layer, inputShapes, nodes[i].shape, reason))
            return Error::unsupported("layer '" + nodes[i].name + "' (" + nodes[i].layer->className() + ")",
                                      reason + "; train this model with --device cpu");
    }
    for (const auto &in : model.inputs())
        for (auto d : in.shape)
            if (d < 0)
                return Error::unsupported("input '" + in.name + "'", "has an unknown dimension " + shapeString(in.shape) +
                                                                          "; the CUDA backend needs fixed shapes (pad, or train with --device cpu)");
    auto engine = std::make_unique<CudaEngine>(model, options);
    if (auto s = engine->init(optimizer); !s.ok())
        return s.error();
    return std::unique_ptr<GpuEngine>(std::move(engine));
}

} // namespace sluice::train
