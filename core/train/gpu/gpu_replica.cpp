// A model replica on a GPU (gpu_replica.h): the CPU Replica's pass structure (train/loop/replica.cpp)
// over device buffers.
#include "train/gpu/gpu_replica.h"

#include "train/layers/basic_layers.h"

#include "train/cuda/kernels/loss_kernels.h"
#include "train/cuda/kernels/reduce_kernels.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <tuple>

namespace sluice::train::gpu {

namespace {

cuda::LossParams lossParams(const ModelOutput &out)
{
    cuda::LossParams p;
    const std::string name = out.loss->name();
    if (name == "mse")
        p.kind = cuda::LossKind::Mse;
    else if (name == "mae")
        p.kind = cuda::LossKind::Mae;
    else if (name == "huber")
        p.kind = cuda::LossKind::Huber;
    else if (name == "binary_crossentropy")
        p.kind = cuda::LossKind::BinaryCrossentropy;
    else if (name == "categorical_crossentropy")
        p.kind = cuda::LossKind::CategoricalCrossentropy;
    else
        p.kind = cuda::LossKind::SparseCategoricalCrossentropy;
    const auto options = out.loss->options();
    p.fromLogits = options.value("from_logits", false);
    p.delta = options.value("delta", 1.0f);
    p.labelSmoothing = options.value("label_smoothing", 0.0f);
    return p;
}

// dst += src over n floats (a node's gradient from a second consumer).
void addInto(cuda::Stream stream, float *dst, const float *src, std::int64_t n)
{
    const float *both[2] = {dst, src};
    cuda::sumBuffers(stream, both, 2, dst, n);
}

} // namespace

GpuReplica::GpuReplica(const Model &model, GpuHandles &device)
    : m_model(model), m_device(device), m_values(model.nodes().size()), m_grads(model.nodes().size()), m_layerScratch(model.nodes().size()),
      m_hasGrad(model.nodes().size(), false)
{
    for (const auto &node : model.nodes())
        m_nodeCounts.push_back(shapeCount(node.shape));
    // Staging layout per row: every input, every target, then the row's weight.
    std::size_t at = 0;
    for (const auto &in : model.inputs()) {
        m_stagingOffsets.push_back(at);
        at += std::size_t(shapeCount(in.shape));
    }
    for (const auto &out : model.outputs()) {
        m_stagingOffsets.push_back(at);
        at += std::size_t(shapeCount(out.targetShape));
    }
    m_stagingOffsets.push_back(at);
    m_stagingFloatsPerRow = at + 1;
    cuda::setDevice(device.index);
    m_gradients = cuda::DeviceBuffer<float>(model.parameterCount());
    for (auto &s : m_staging) {
        s.copied = cuda::createEvent();
        s.consumed = cuda::createEvent();
    }
    m_lossReady = cuda::createEvent();
    m_predHost.assign(model.outputs().size(), nullptr);
    m_badIdsHost = static_cast<std::int32_t *>(cuda::hostAllocPinned(model.nodes().size() * sizeof(std::int32_t)));
}

GpuReplica::~GpuReplica()
{
    for (auto &s : m_staging) {
        if (s.used)
            try {
                cuda::synchronizeEvent(s.consumed);
            } catch (...) {
                // destructors never throw; the runtime logged the error
            }
        cuda::destroyEvent(s.copied);
        cuda::destroyEvent(s.consumed);
        cuda::hostFreePinned(s.pinned);
    }
    cuda::hostFreePinned(m_lossHost);
    cuda::hostFreePinned(m_badIdsHost);
    for (float *p : m_predHost)
        cuda::hostFreePinned(p);
    cuda::destroyEvent(m_lossReady);
}

void GpuReplica::reserve(std::int64_t rows)
{
    if (rows <= m_capacity)
        return;
    cuda::setDevice(m_device.index);
    cuda::synchronize(m_device.compute); // buffers in use are replaced below
    cuda::synchronize(m_device.copy);
    const auto &nodes = m_model.nodes();
    std::string current = "(inputs)";
    std::size_t bytes = 0;
    try {
        for (auto &s : m_staging) {
            cuda::hostFreePinned(s.pinned);
            s.pinned = nullptr;
            s.device = {};
            bytes = std::size_t(rows) * m_stagingFloatsPerRow * sizeof(float);
            s.pinned = static_cast<float *>(cuda::hostAllocPinned(bytes));
            s.device = cuda::DeviceBuffer<float>(std::size_t(rows) * m_stagingFloatsPerRow);
            s.used = false;
        }
        const std::size_t inputs = m_model.inputs().size();
        for (std::size_t i = inputs; i < nodes.size(); ++i) {
            current = nodes[i].name;
            const std::size_t n = std::size_t(rows * m_nodeCounts[i]);
            bytes = n * sizeof(float);
            m_values[i] = {};
            m_values[i] = cuda::DeviceBuffer<float>(n);
            m_grads[i] = {};
            if (nodes[i].needsGradient)
                m_grads[i] = cuda::DeviceBuffer<float>(n);
        }
        // Per input slot: a gradient that goes to a node another consumer (or a second loss)
        // already wrote; slot 0 also takes a second output's dLoss/dPred.
        std::size_t widest = 0;
        for (auto count : m_nodeCounts)
            widest = std::max(widest, std::size_t(count));
        current = "(gradient scratch)";
        std::size_t slots = 1;
        for (const auto &node : nodes)
            slots = std::max(slots, node.inputs.size());
        m_scratch.clear();
        for (std::size_t j = 0; j < slots; ++j)
            m_scratch.emplace_back(std::size_t(rows) * widest);
        current = "(losses)";
        m_perSample = cuda::DeviceBuffer<float>(std::size_t(rows) * m_model.outputs().size());
        cuda::hostFreePinned(m_lossHost);
        m_lossHost = nullptr;
        m_lossHost = static_cast<float *>(cuda::hostAllocPinned(std::size_t(rows) * m_model.outputs().size() * sizeof(float)));
    } catch (const cuda::CudaError &e) {
        std::size_t freeBytes = 0, total = 0;
        try {
            cuda::memoryInfo(freeBytes, total);
        } catch (...) {
        }
        m_capacity = 0;
        throw OutOfDeviceMemory{current, rows, bytes,
                                std::string(e.what()) + " (" + std::to_string(freeBytes >> 20) + " MiB free of " + std::to_string(total >> 20) + " MiB)"};
    }
    m_capacity = rows;
}

float *GpuReplica::beginStaging(std::int64_t rows, bool weighted)
{
    cuda::setDevice(m_device.index); // a worker thread: waiting on an event must not touch another GPU
    m_rows = rows;
    m_hasWeights = weighted;
    m_current ^= 1;
    Staging &s = m_staging[m_current];
    if (s.used) {
        cuda::synchronizeEvent(s.copied);              // its previous copy has left the pinned buffer
        cuda::waitEvent(m_device.copy, s.consumed);    // the pass two batches ago no longer reads the device buffer
    }
    m_uploaded = 0;
    return s.pinned;
}

void GpuReplica::uploadStaged(const float *end)
{
    Staging &s = m_staging[m_current];
    const auto upTo = std::size_t(end - s.pinned);
    if (upTo <= m_uploaded)
        return;
    cuda::copyToDevice(s.device.data() + m_uploaded, s.pinned + m_uploaded, (upTo - m_uploaded) * sizeof(float), m_device.copy);
    m_uploaded = upTo;
}

const float *GpuReplica::stagedBlock(std::size_t block) const
{
    return m_staging[m_current].pinned + std::size_t(m_rows) * m_stagingOffsets[block];
}

void GpuReplica::stage(const pipeline::Element &batch, std::int64_t begin, std::int64_t end, const SampleWeighting &weighting)
{
    const bool weighted = weighting.sampleWeightFeature.has_value() || (!weighting.classWeights.empty() && !m_model.outputs().empty());
    float *pinned = beginStaging(end - begin, weighted);
    // Each block's copy to the device starts while the next block is gathered.
    gatherSlice(m_model, batch, weighting, begin, end, m_stagingOffsets, pinned, [this](const float *blockEnd) { uploadStaged(blockEnd); });
}

void GpuReplica::stage(const BatchSlice &slice)
{
    float *pinned = beginStaging(slice.rows, !slice.weights.empty());
    // Column blocks: input i occupies rows * count_i floats from rows * offset_i, so that each
    // feature is one contiguous [rows, ...] array on the device.
    const std::size_t rows = std::size_t(slice.rows);
    std::vector<std::pair<const float *, std::size_t>> sources; // (values, count), in staging order
    for (const auto &t : slice.inputs)
        sources.emplace_back(t.ptr(), t.size());
    for (const auto &t : slice.targets)
        sources.emplace_back(t.ptr(), t.size());
    if (m_hasWeights)
        sources.emplace_back(slice.weights.data(), rows);
    // Large batches are copied in 4 MiB pieces on the arena's threads: one thread's memcpy would
    // hold the GPU back at hundreds of MiB a step. The pieces fill the staging buffer in order, and
    // every 16 of them (64 MiB) are queued to the device while the next ones are copied, so that
    // the host's copy and the host-to-device transfer overlap instead of adding up.
    constexpr std::size_t kPiece = std::size_t(1) << 20, kPiecesPerUpload = 16; // floats, pieces
    std::vector<std::tuple<float *, const float *, std::size_t>> pieces;
    for (std::size_t k = 0; k < sources.size(); ++k)
        for (std::size_t at = 0; at < sources[k].second; at += kPiece)
            pieces.emplace_back(pinned + rows * m_stagingOffsets[k] + at, sources[k].first + at, std::min(kPiece, sources[k].second - at));
    for (std::size_t first = 0; first < pieces.size(); first += kPiecesPerUpload) {
        const std::size_t last = std::min(pieces.size(), first + kPiecesPerUpload);
        oneapi::tbb::parallel_for(first, last, [&](std::size_t i) {
            const auto &[dst, src, n] = pieces[i];
            std::memcpy(dst, src, n * sizeof(float));
        });
        const auto &[dst, src, n] = pieces[last - 1];
        uploadStaged(dst + n);
    }
}

void GpuReplica::upload()
{
    Staging &s = m_staging[m_current];
    uploadStaged(s.pinned + std::size_t(m_rows) * m_stagingFloatsPerRow); // what stage() has not queued yet
    cuda::recordEvent(s.copied, m_device.copy);
    cuda::waitEvent(m_device.compute, s.copied);
    s.used = true;
}

const float *GpuReplica::inputPtr(std::size_t input) const
{
    return m_staging[m_current].device.data() + std::size_t(m_rows) * m_stagingOffsets[input];
}
const float *GpuReplica::targetPtr(std::size_t output) const
{
    return m_staging[m_current].device.data() + std::size_t(m_rows) * m_stagingOffsets[m_model.inputs().size() + output];
}
const float *GpuReplica::rowWeightsPtr() const
{
    return m_hasWeights ? m_staging[m_current].device.data() + std::size_t(m_rows) * m_stagingOffsets.back() : nullptr;
}

std::vector<const float *> GpuReplica::paramPtrs(const ModelNode &node, const float *weights) const
{
    std::vector<const float *> out;
    for (auto p : node.params)
        out.push_back(weights + m_model.parameters()[p].offset);
    return out;
}

LayerCall GpuReplica::call(std::size_t index, const float *weights) const
{
    const auto &node = m_model.nodes()[index];
    const std::size_t inputs = m_model.inputs().size();
    LayerCall c;
    c.layer = node.layer.get();
    c.spec = node.layer->kernelSpec();
    c.rows = m_rows;
    c.outputShape = node.shape;
    for (int in : node.inputs) {
        const auto idx = std::size_t(in);
        c.inputShapes.push_back(m_model.nodes()[idx].shape);
        c.inputs.push_back(idx < inputs ? inputPtr(idx) : m_values[idx].data());
    }
    c.params = paramPtrs(node, weights);
    return c;
}

void GpuReplica::forward(const PassContext &ctx, const float *weights)
{
    const std::size_t inputs = m_model.inputs().size();
    m_rowOffset = ctx.globalRowOffset;
    m_rowStride = ctx.globalRowStride;
    for (std::size_t i = inputs; i < m_model.nodes().size(); ++i)
        namingTheLayer(i, [&] { layerForward(m_device.context, call(i, weights), ctx, m_values[i].data(), m_layerScratch[i]); });
}

template <typename F>
void GpuReplica::namingTheLayer(std::size_t index, const F &pass)
{
    // A layer's scratch is taken on its first pass at a batch size: not fitting is the same
    // error as for the activations, naming the layer.
    try {
        pass();
    } catch (const cuda::CudaError &e) {
        if (std::string(e.what()).find("out of memory") == std::string::npos)
            throw;
        std::size_t freeBytes = 0, total = 0;
        try {
            cuda::memoryInfo(freeBytes, total);
        } catch (...) {
        }
        throw OutOfDeviceMemory{m_model.nodes()[index].name, m_rows, 0,
                                std::string(e.what()) + " (" + std::to_string(freeBytes >> 20) + " MiB free of " + std::to_string(total >> 20) + " MiB)"};
    }
}

void GpuReplica::loss(float scale, bool backward, Replica *holder)
{
    const auto stream = m_device.compute;
    std::fill(m_hasGrad.begin(), m_hasGrad.end(), false);
    const auto &outputs = m_model.outputs();
    for (std::size_t o = 0; o < outputs.size(); ++o) {
        const auto &out = outputs[o];
        const auto node = std::size_t(out.node);
        const std::int64_t n = m_nodeCounts[node];
        const std::int64_t classes = m_model.nodes()[node].shape.empty() ? 1 : m_model.nodes()[node].shape.back();
        float *dPred = nullptr;
        if (backward && m_model.nodes()[node].needsGradient)
            dPred = m_hasGrad[node] ? m_scratch[0].data() : m_grads[node].data();
        cuda::computeLoss(stream, lossParams(out), m_values[node].data(), targetPtr(o), rowWeightsPtr(), scale * out.lossWeight, m_rows, n, classes,
                          m_perSample.data() + std::size_t(m_rows) * o, dPred);
        if (dPred && m_hasGrad[node])
            addInto(stream, m_grads[node].data(), dPred, m_rows * n);
        if (dPred)
            m_hasGrad[node] = true;
    }
    cuda::copyToHost(m_lossHost, m_perSample.data(), std::size_t(m_rows) * outputs.size() * sizeof(float), stream);
    // Embeddings' checks of their ids travel with the losses (collect() reads both).
    for (std::size_t i = m_model.inputs().size(); i < m_model.nodes().size(); ++i)
        if (m_layerScratch[i].firstBad.size() > 0)
            cuda::copyToHost(m_badIdsHost + i, m_layerScratch[i].firstBad.data(), sizeof(std::int32_t), stream);
    for (std::size_t o = 0; o < outputs.size(); ++o) {
        if (!holder || holder->metrics()[o].empty())
            continue;
        const auto node = std::size_t(outputs[o].node);
        if (m_predCapacity < m_capacity) {
            cuda::synchronizeEvent(m_lossReady); // the host is done with the old buffers
            for (auto &p : m_predHost) {
                cuda::hostFreePinned(p);
                p = nullptr;
            }
            m_predCapacity = m_capacity;
        }
        if (!m_predHost[o])
            m_predHost[o] = static_cast<float *>(cuda::hostAllocPinned(std::size_t(m_capacity * m_nodeCounts[node]) * sizeof(float)));
        cuda::copyToHost(m_predHost[o], m_values[node].data(), std::size_t(m_rows * m_nodeCounts[node]) * sizeof(float), stream);
    }
    cuda::recordEvent(m_lossReady, stream);
    if (!backward)
        cuda::recordEvent(m_staging[m_current].consumed, stream);
}

void GpuReplica::zeroGradients() { m_gradients.zero(m_device.compute); }

void GpuReplica::backwardNode(std::size_t index, const PassContext &ctx, const float *weights)
{
    const auto &nodes = m_model.nodes();
    const auto &node = nodes[index];
    const std::size_t inputs = m_model.inputs().size();
    if (node.needsGradient && m_hasGrad[index]) {
        const LayerCall c = call(index, weights);
        std::vector<float *> grads;
        for (auto p : node.params)
            grads.push_back(m_gradients.data() + m_model.parameters()[p].offset);
        // The first consumer writes a node's gradient; later ones write scratch that is added in.
        std::vector<float *> dInputs;
        std::vector<std::pair<std::size_t, std::size_t>> adds; // (node, slot)
        std::vector<std::size_t> claimed;
        for (std::size_t j = 0; j < node.inputs.size(); ++j) {
            const auto idx = std::size_t(node.inputs[j]);
            if (idx < inputs || !nodes[idx].needsGradient) {
                dInputs.push_back(nullptr);
                continue;
            }
            const bool first = !m_hasGrad[idx] && std::find(claimed.begin(), claimed.end(), idx) == claimed.end();
            if (first) {
                dInputs.push_back(m_grads[idx].data());
                claimed.push_back(idx);
            } else {
                dInputs.push_back(m_scratch[j].data());
                adds.emplace_back(idx, j);
            }
        }
        namingTheLayer(index, [&] {
            layerBackward(m_device.context, c, ctx, m_values[index].data(), m_grads[index].data(), dInputs, grads, m_layerScratch[index]);
        });
        for (auto idx : claimed)
            m_hasGrad[idx] = true;
        for (const auto &[idx, slot] : adds)
            addInto(m_device.compute, m_grads[idx].data(), m_scratch[slot].data(), m_rows * m_nodeCounts[idx]);
    }
    if (index == inputs)
        cuda::recordEvent(m_staging[m_current].consumed, m_device.compute); // the last reader of the staged rows
}

std::optional<Error> GpuReplica::badEmbeddingId()
{
    const auto &nodes = m_model.nodes();
    const std::size_t inputs = m_model.inputs().size();
    for (std::size_t i = inputs; i < nodes.size(); ++i) {
        if (m_layerScratch[i].firstBad.size() == 0 || m_badIdsHost[i] == INT32_MAX)
            continue;
        // Rare: read the offending id itself, waiting for it.
        const std::int64_t at = m_badIdsHost[i];
        const auto idx = std::size_t(nodes[i].inputs[0]);
        const float *ids = idx < inputs ? inputPtr(idx) : m_values[idx].data();
        float id = 0;
        cuda::copyToHost(&id, ids + at, sizeof(float), m_device.compute);
        cuda::synchronize(m_device.compute);
        const std::int64_t perRow = std::max<std::int64_t>(1, shapeCount(nodes[idx].shape));
        return embeddingIdError(nodes[i].layer->name(), id, m_rowOffset + (at / perRow) * m_rowStride, nodes[i].layer->kernelSpec().inputDim);
    }
    return std::nullopt;
}

SliceResult GpuReplica::collect(Replica *holder)
{
    SliceResult result;
    const auto &outputs = m_model.outputs();
    result.outputLossSums.assign(outputs.size(), 0.0);
    if (m_rows == 0)
        return result;
    cuda::synchronizeEvent(m_lossReady);
    if (auto bad = badEmbeddingId())
        result.error = std::move(*bad);
    const std::span<const float> weights = m_hasWeights ? std::span<const float>(stagedBlock(m_stagingOffsets.size() - 1), std::size_t(m_rows))
                                                        : std::span<const float>();
    for (std::size_t o = 0; o < outputs.size(); ++o) {
        const float *perSample = m_lossHost + std::size_t(m_rows) * o;
        double sum = 0;
        for (std::int64_t r = 0; r < m_rows; ++r)
            sum += double(perSample[r]) * (weights.empty() ? 1.0 : double(weights[std::size_t(r)]));
        result.outputLossSums[o] = sum;
        result.finite = result.finite && std::isfinite(sum);
        if (!holder || holder->metrics()[o].empty())
            continue;
        const auto node = std::size_t(outputs[o].node);
        Shape shape{m_rows};
        for (auto d : m_model.nodes()[node].shape)
            shape.push_back(d);
        FloatTensor pred, target;
        pred.resize(shape);
        std::copy_n(m_predHost[o], pred.size(), pred.ptr());
        Shape targetShape{m_rows};
        for (auto d : outputs[o].targetShape)
            targetShape.push_back(d);
        target.resize(targetShape);
        std::copy_n(stagedBlock(m_model.inputs().size() + o), target.size(), target.ptr());
        for (auto &m : holder->metrics()[o])
            m->update(pred, target, weights);
    }
    return result;
}

} // namespace sluice::train::gpu
