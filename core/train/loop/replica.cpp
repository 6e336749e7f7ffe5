#include "train/loop/replica.h"

#include "train/model/huge_pages.h"
#include "train/model/prefetch.h"

#include <algorithm>
#include <cmath>

namespace sluice::train {

Replica::Replica(const Model &model, bool withGradients)
    : m_model(model), m_activations(model.nodes().size()), m_dActivations(model.nodes().size()), m_hasGradient(model.nodes().size(), 0),
      m_states(model.nodes().size()),
      m_gradients(withGradients ? model.parameterCount() : 0, 0.0f), m_rows(model.rowSparseParameters().size())
{
    adviseHugePages(m_gradients); // embedding tables: random rows every step
    // Which nodes' outputs get a gradient in backward, from the graph alone (nodes are in
    // topological order): an output's node, and every input of such a node with parameters
    // upstream. Synchronized layers wait at exactly these, on every replica.
    const auto &nodes = model.nodes();
    m_reachesLoss.assign(nodes.size(), false);
    for (const auto &out : model.outputs())
        m_reachesLoss[std::size_t(out.node)] = true;
    for (std::size_t i = nodes.size(); i-- > model.inputs().size();)
        if (m_reachesLoss[i] && nodes[i].needsGradient)
            for (int in : nodes[i].inputs)
                if (nodes[std::size_t(in)].needsGradient)
                    m_reachesLoss[std::size_t(in)] = true;
    for (const auto &out : model.outputs()) {
        std::vector<std::unique_ptr<Metric>> metrics;
        for (const auto &name : out.metrics)
            if (auto m = createMetric(name, out.lossName, out.fromLogits))
                metrics.push_back(std::move(*m));
        m_metrics.push_back(std::move(metrics));
    }
}

Replica::~Replica() = default;

void Replica::clearGradients()
{
    if (m_gradients.empty())
        return;
    const auto &params = m_model.parameters();
    const auto &sparse = m_model.rowSparseParameters();
    if (sparse.empty()) {
        std::fill(m_gradients.begin(), m_gradients.end(), 0.0f);
        return;
    }
    for (const auto &range : m_model.denseRanges())
        std::fill_n(m_gradients.begin() + std::ptrdiff_t(range.offset), range.count, 0.0f);
    for (std::size_t k = 0; k < sparse.size(); ++k) {
        const auto &entry = params[sparse[k]];
        const std::size_t rowSize = std::size_t(entry.rowSize);
        const auto &rows = m_rows[k];
        float *table = m_gradients.data() + entry.offset;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (i + kPrefetchRows < rows.size())
                prefetchRow(table + std::size_t(rows[i + kPrefetchRows]) * rowSize, rowSize);
            std::fill_n(table + std::size_t(rows[i]) * rowSize, rowSize, 0.0f);
        }
        m_rows[k].clear();
        // The owning layer lists this step's rows afresh; none if its backward does not run.
        m_states[std::size_t(entry.node)].rows.clear();
    }
}

void Replica::resetMetrics()
{
    for (auto &out : m_metrics)
        for (auto &m : out)
            m->reset();
}

SliceResult Replica::run(const PassContext &context, std::span<const float> weights, const BatchSlice &slice, float scale, bool backward,
                         bool updateMetrics)
{
    start(context, weights, slice, scale, backward, updateMetrics);
    while (m_waiting) {
        const std::vector<double> own = m_sums; // one replica in one process: its sums are the global ones
        resume(own);
    }
    return m_result;
}

bool Replica::synchronizedAt(std::size_t i) const
{
    const auto &layer = m_model.nodes()[i].layer;
    return m_ctx.training && layer && layer->syncCount() > 0;
}

void Replica::start(const PassContext &context, std::span<const float> weights, const BatchSlice &slice, float scale, bool backward,
                    bool updateMetrics)
{
    m_ctx = context;
    m_ctx.lossScale = scale; // the replica's share of the batch, for BatchNormalization's moving statistics
    m_weights = weights;
    m_slice = &slice;
    m_scale = scale;
    m_backward = backward;
    m_updateMetrics = updateMetrics;
    m_result = SliceResult{};
    m_result.outputLossSums.assign(m_model.outputs().size(), 0.0);
    m_phase = Phase::Forward;
    m_cursor = m_model.inputs().size(); // inputs are read straight from the slice
    m_waiting = false;
    runOn();
}

SliceResult Replica::predict(const PassContext &ctx, std::span<const float> weights, const BatchSlice &slice)
{
    m_forwardOnly = true;
    SliceResult result = run(ctx, weights, slice, 0, false, false);
    m_forwardOnly = false;
    return result;
}

void Replica::resume(std::span<const double> globalSums)
{
    m_waiting = false;
    if (m_phase == Phase::Done)
        return; // stopped by a layer's error while the others waited
    if (m_slice->rows == 0) { // an empty slice only takes part in the sums
        runOn();
        return;
    }
    const auto &nodes = m_model.nodes();
    if (m_phase == Phase::Forward) {
        const std::size_t i = m_cursor++;
        const auto &node = nodes[i];
        std::vector<const float *> paramPtrs;
        std::vector<const FloatTensor *> inputPtrs;
        gatherOperands(i, paramPtrs, inputPtrs);
        node.layer->forwardSynced(m_ctx, paramPtrs, inputPtrs, globalSums, m_activations[i], m_states[i]);
    } else {
        backwardNode(--m_cursor, globalSums);
    }
    runOn();
}

void Replica::gatherOperands(std::size_t i, std::vector<const float *> &paramPtrs, std::vector<const FloatTensor *> &inputPtrs) const
{
    const auto &node = m_model.nodes()[i];
    const std::size_t inputCount = m_model.inputs().size();
    paramPtrs.clear();
    for (auto p : node.params)
        paramPtrs.push_back(m_weights.data() + m_model.parameters()[p].offset);
    inputPtrs.clear();
    for (int in : node.inputs)
        inputPtrs.push_back(std::size_t(in) < inputCount ? &m_slice->inputs[std::size_t(in)] : &m_activations[std::size_t(in)]);
}

void Replica::runOn()
{
    const auto &nodes = m_model.nodes();
    const std::size_t inputCount = m_model.inputs().size();
    const bool empty = m_slice->rows == 0; // an empty slice of an uneven last batch: zero gradients (the caller zeroes)
    const auto waitAt = [&](std::size_t i) {
        m_sums.assign(nodes[i].layer->syncCount(), 0.0);
        m_waiting = true;
    };
    std::vector<const float *> paramPtrs;
    std::vector<const FloatTensor *> inputPtrs;
    if (m_phase == Phase::Forward) {
        for (; m_cursor < nodes.size(); ++m_cursor) {
            const std::size_t i = m_cursor;
            const auto &node = nodes[i];
            const bool synced = synchronizedAt(i);
            if (empty && !synced)
                continue;
            gatherOperands(i, paramPtrs, inputPtrs);
            if (synced) {
                waitAt(i);
                if (!empty)
                    node.layer->forwardSums(paramPtrs, inputPtrs, m_sums, m_states[i]);
                if (empty)
                    ++m_cursor; // nothing to finish on resume
                return;
            }
            node.layer->forward(m_ctx, paramPtrs, inputPtrs, m_activations[i], m_states[i]);
            if (m_states[i].error) {
                m_result.error = std::move(m_states[i].error);
                m_states[i].error.reset();
                m_phase = Phase::Done;
                return;
            }
        }
        if (!empty && !m_forwardOnly)
            computeLosses();
        if (!m_backward) {
            m_phase = Phase::Done;
            return;
        }
        m_phase = Phase::Backward;
        m_cursor = nodes.size();
    }
    if (m_phase == Phase::Backward) {
        for (; m_cursor > inputCount; --m_cursor) {
            const std::size_t i = m_cursor - 1;
            const auto &node = nodes[i];
            if (!node.needsGradient || !m_reachesLoss[i])
                continue; // nothing trainable upstream, or the node does not reach a loss
            if (synchronizedAt(i)) {
                waitAt(i);
                if (!empty) {
                    gatherOperands(i, paramPtrs, inputPtrs);
                    node.layer->backwardSums(paramPtrs, inputPtrs, m_dActivations[i], m_sums, m_states[i]);
                }
                if (empty)
                    --m_cursor;
                return;
            }
            if (!empty)
                backwardNode(i, {});
        }
        m_phase = Phase::Done;
        const auto &sparse = m_model.rowSparseParameters();
        for (std::size_t k = 0; k < sparse.size(); ++k)
            m_rows[k] = m_states[std::size_t(m_model.parameters()[sparse[k]].node)].rows;
    }
}

void Replica::computeLosses()
{
    const BatchSlice &slice = *m_slice;
    const std::size_t inputCount = m_model.inputs().size();
    if (m_backward) {
        clearGradients();
        for (std::size_t i = inputCount; i < m_model.nodes().size(); ++i)
            m_hasGradient[i] = 0; // the tensors keep their storage: regrowing them would zero-fill it
    }
    std::span<const float> w = slice.weights;
    m_lossScratch.resize(std::size_t(slice.rows));
    for (std::size_t o = 0; o < m_model.outputs().size(); ++o) {
        const auto &out = m_model.outputs()[o];
        const auto &pred = m_activations[std::size_t(out.node)];
        const auto &target = slice.targets[o];
        FloatTensor dPred;
        out.loss->compute(pred, target, w, m_scale * out.lossWeight, m_lossScratch, m_backward ? &dPred : nullptr);
        double sum = 0;
        for (std::int64_t r = 0; r < slice.rows; ++r)
            sum += double(m_lossScratch[std::size_t(r)]) * (w.empty() ? 1.0 : double(w[std::size_t(r)]));
        m_result.outputLossSums[o] = sum;
        m_result.finite = m_result.finite && std::isfinite(sum);
        if (m_updateMetrics)
            for (auto &m : m_metrics[o])
                m->update(pred, target, w);
        if (m_backward) {
            auto &d = m_dActivations[std::size_t(out.node)];
            if (!m_hasGradient[std::size_t(out.node)]) {
                d = std::move(dPred);
                m_hasGradient[std::size_t(out.node)] = 1;
            } else
                for (std::size_t k = 0; k < d.size(); ++k)
                    d.data[k] += dPred.data[k];
        }
    }
}

void Replica::backwardNode(std::size_t i, std::span<const double> syncedSums)
{
    const auto &nodes = m_model.nodes();
    const auto &params = m_model.parameters();
    const std::size_t inputCount = m_model.inputs().size();
    const auto &node = nodes[i];
    if (!m_hasGradient[i])
        return; // a layer whose output no loss reads on this path
    std::vector<const float *> paramPtrs;
    std::vector<float *> gradPtrs;
    for (auto p : node.params) {
        paramPtrs.push_back(m_weights.data() + params[p].offset);
        gradPtrs.push_back(m_gradients.data() + params[p].offset);
    }
    std::vector<const FloatTensor *> inputPtrs;
    std::vector<FloatTensor *> dInputPtrs;
    // A node's gradient may come from several consumers (or twice from one): the first
    // writes it, the others write scratch (one per input slot) that is added in.
    std::vector<std::pair<std::size_t, bool>> targets; // per slot: node, first writer
    if (m_dScratch.size() < node.inputs.size())
        m_dScratch.resize(node.inputs.size());
    for (std::size_t j = 0; j < node.inputs.size(); ++j) {
        const auto idx = std::size_t(node.inputs[j]);
        inputPtrs.push_back(idx < inputCount ? &m_slice->inputs[idx] : &m_activations[idx]);
        if (idx < inputCount || !nodes[idx].needsGradient) {
            dInputPtrs.push_back(nullptr);
            targets.emplace_back(idx, true);
            continue;
        }
        const bool first = !m_hasGradient[idx] && std::none_of(targets.begin(), targets.end(), [&](auto &t) { return t.first == idx; });
        dInputPtrs.push_back(first ? &m_dActivations[idx] : &m_dScratch[j]);
        targets.emplace_back(idx, first);
    }
    if (synchronizedAt(i))
        node.layer->backwardSynced(m_ctx, paramPtrs, inputPtrs, m_activations[i], m_dActivations[i], syncedSums, dInputPtrs, gradPtrs, m_states[i]);
    else
        node.layer->backward(m_ctx, paramPtrs, inputPtrs, m_activations[i], m_dActivations[i], dInputPtrs, gradPtrs, m_states[i]);
    for (std::size_t j = 0; j < targets.size(); ++j)
        if (dInputPtrs[j] == &m_dActivations[targets[j].first])
            m_hasGradient[targets[j].first] = 1;
    for (std::size_t j = 0; j < targets.size(); ++j)
        if (!targets[j].second) {
            auto &dst = m_dActivations[targets[j].first];
            const auto &src = m_dScratch[j];
            for (std::size_t k = 0; k < dst.size(); ++k)
                dst.data[k] += src.data[k];
        }
}

std::vector<double> sumOfLocalSums(std::span<const std::unique_ptr<Replica>> replicas)
{
    std::vector<double> total(replicas.front()->localSums().size(), 0.0);
    for (const auto &rep : replicas)
        for (std::size_t k = 0; k < total.size(); ++k)
            total[k] += rep->localSums()[k];
    return total;
}

} // namespace sluice::train
