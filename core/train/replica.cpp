#include "train/replica.h"

#include <algorithm>
#include <cmath>

namespace sluice::train {

Replica::Replica(const Model &model, bool withGradients)
    : m_model(model), m_activations(model.nodes().size()), m_dActivations(model.nodes().size()), m_states(model.nodes().size()),
      m_gradients(withGradients ? model.parameterCount() : 0, 0.0f)
{
    for (const auto &out : model.outputs()) {
        std::vector<std::unique_ptr<Metric>> metrics;
        for (const auto &name : out.metrics)
            if (auto m = createMetric(name, out.lossName, out.fromLogits))
                metrics.push_back(std::move(*m));
        m_metrics.push_back(std::move(metrics));
    }
}

Replica::~Replica() = default;

void Replica::resetMetrics()
{
    for (auto &out : m_metrics)
        for (auto &m : out)
            m->reset();
}

SliceResult Replica::run(const PassContext &ctx, std::span<const float> weights, const BatchSlice &slice, float scale, bool backward, bool updateMetrics)
{
    const auto &nodes = m_model.nodes();
    const auto &params = m_model.parameters();
    const std::size_t inputCount = m_model.inputs().size();
    SliceResult result;
    result.outputLossSums.assign(m_model.outputs().size(), 0.0);
    if (slice.rows == 0)
        return result; // an empty slice of an uneven last batch: zero gradients (the caller zeroes)

    std::vector<const float *> paramPtrs;
    std::vector<const FloatTensor *> inputPtrs;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (i < inputCount)
            continue; // inputs are read straight from the slice
        const auto &node = nodes[i];
        paramPtrs.clear();
        for (auto p : node.params)
            paramPtrs.push_back(weights.data() + params[p].offset);
        inputPtrs.clear();
        for (int in : node.inputs)
            inputPtrs.push_back(std::size_t(in) < inputCount ? &slice.inputs[std::size_t(in)] : &m_activations[std::size_t(in)]);
        node.layer->forward(ctx, paramPtrs, inputPtrs, m_activations[i], m_states[i]);
    }

    if (backward) {
        std::fill(m_gradients.begin(), m_gradients.end(), 0.0f);
        for (std::size_t i = inputCount; i < nodes.size(); ++i)
            m_dActivations[i].resize({0});
    }
    std::span<const float> w = slice.weights;
    m_lossScratch.resize(std::size_t(slice.rows));
    for (std::size_t o = 0; o < m_model.outputs().size(); ++o) {
        const auto &out = m_model.outputs()[o];
        const auto &pred = m_activations[std::size_t(out.node)];
        const auto &target = slice.targets[o];
        FloatTensor dPred;
        out.loss->compute(pred, target, w, scale * out.lossWeight, m_lossScratch, backward ? &dPred : nullptr);
        double sum = 0;
        for (std::int64_t r = 0; r < slice.rows; ++r)
            sum += double(m_lossScratch[std::size_t(r)]) * (w.empty() ? 1.0 : double(w[std::size_t(r)]));
        result.outputLossSums[o] = sum;
        result.finite = result.finite && std::isfinite(sum);
        if (updateMetrics)
            for (auto &m : m_metrics[o])
                m->update(pred, target, w);
        if (backward) {
            auto &d = m_dActivations[std::size_t(out.node)];
            if (d.size() == 0)
                d = std::move(dPred);
            else
                for (std::size_t k = 0; k < d.size(); ++k)
                    d.data[k] += dPred.data[k];
        }
    }
    if (!backward)
        return result;

    std::vector<float *> gradPtrs;
    std::vector<FloatTensor *> dInputPtrs;
    for (std::size_t i = nodes.size(); i-- > inputCount;) {
        const auto &node = nodes[i];
        if (!node.needsGradient || m_dActivations[i].size() == 0)
            continue; // nothing trainable upstream, or the node does not reach a loss
        paramPtrs.clear();
        gradPtrs.clear();
        for (auto p : node.params) {
            paramPtrs.push_back(weights.data() + params[p].offset);
            gradPtrs.push_back(m_gradients.data() + params[p].offset);
        }
        inputPtrs.clear();
        dInputPtrs.clear();
        // A node's gradient may come from several consumers (or twice from one): the first
        // writes it, the others write scratch (one per input slot) that is added in.
        std::vector<std::pair<std::size_t, bool>> targets; // per slot: node, first writer
        if (m_dScratch.size() < node.inputs.size())
            m_dScratch.resize(node.inputs.size());
        for (std::size_t j = 0; j < node.inputs.size(); ++j) {
            const auto idx = std::size_t(node.inputs[j]);
            inputPtrs.push_back(idx < inputCount ? &slice.inputs[idx] : &m_activations[idx]);
            if (idx < inputCount || !nodes[idx].needsGradient) {
                dInputPtrs.push_back(nullptr);
                targets.emplace_back(idx, true);
                continue;
            }
            const bool first = m_dActivations[idx].size() == 0 &&
                               std::none_of(targets.begin(), targets.end(), [&](auto &t) { return t.first == idx; });
            dInputPtrs.push_back(first ? &m_dActivations[idx] : &m_dScratch[j]);
            targets.emplace_back(idx, first);
        }
        node.layer->backward(ctx, paramPtrs, inputPtrs, m_activations[i], m_dActivations[i], dInputPtrs, gradPtrs, m_states[i]);
        for (std::size_t j = 0; j < targets.size(); ++j)
            if (!targets[j].second) {
                auto &dst = m_dActivations[targets[j].first];
                const auto &src = m_dScratch[j];
                for (std::size_t k = 0; k < dst.size(); ++k)
                    dst.data[k] += src.data[k];
            }
    }
    return result;
}

} // namespace sluice::train
