// Keras cross-entropies, following the formulas of Keras 3's TensorFlow backend
// (keras/src/backend/tensorflow/nn.py), with their gradients written out:
//  binary:      with logits  max(x,0) - x t + log1p(exp(-|x|))        (sigmoid_cross_entropy_with_logits)
//               with probabilities, p clipped to [eps, 1-eps]: -(t log p + (1-t) log(1-p))
//  categorical: with logits  -sum t log_softmax(x)
//               with probabilities: p / sum p, clipped, then -sum t log
//  sparse:      with logits  -log_softmax(x)[y]
//               with probabilities: c = clip(p) (not normalised first), then the softmax
//               cross-entropy of log c: -log(c_y / sum c)
// The per-sample loss sums over the class axis and averages over any other (time) axes.
// Clipping passes no gradient outside [eps, 1-eps], as tf.clip_by_value.
#include "train/model/activations.h"
#include "train/objectives/losses_internal.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace sluice::train {

namespace {

using detail::kEpsilon;
using detail::LossOptions;

constexpr float kOneMinusEpsilon = 1.0f - kEpsilon;

float sigmoid(float x)
{
    if (x >= 0)
        return 1.0f / (1.0f + std::exp(-x));
    const float e = std::exp(x);
    return e / (1.0f + e);
}

bool inClipRange(float p) { return p >= kEpsilon && p <= kOneMinusEpsilon; }

class BinaryCrossentropy final : public Loss
{
public:
    explicit BinaryCrossentropy(const LossOptions &o) : m_fromLogits(o.fromLogits), m_smoothing(float(o.labelSmoothing)) {}
    nlohmann::json options() const override { return {{"from_logits", m_fromLogits}, {"delta", 1.0}, {"label_smoothing", m_smoothing}}; }

    std::string name() const override { return "binary_crossentropy"; }

    Status checkShapes(const Shape &pred, const Shape &target) const override
    {
        if (detail::sameShapeOrScalar(pred, target))
            return {};
        return Error::invalid("loss", "binary_crossentropy expects targets of the same shape as the predictions " + shapeString(pred) +
                                          ", got " + shapeString(target));
    }

    void compute(const FloatTensor &pred, const FloatTensor &target, std::span<const float> weights, float scale, std::span<float> perSample,
                 FloatTensor *dPred) const override
    {
        const std::int64_t batch = pred.rows(), n = pred.rowSize();
        assert(target.size() == pred.size() && perSample.size() == std::size_t(batch));
        if (dPred)
            dPred->resize(pred.shape);
        for (std::int64_t i = 0; i < batch; ++i) {
            const float *p = pred.ptr() + i * n;
            const float *tr = target.ptr() + i * n;
            float *d = dPred ? dPred->ptr() + i * n : nullptr;
            const float c = n ? scale * detail::sampleWeight(weights, i) / float(n) : 0.0f;
            double sum = 0;
            for (std::int64_t j = 0; j < n; ++j) {
                const float t = m_smoothing != 0 ? tr[j] * (1.0f - m_smoothing) + 0.5f * m_smoothing : tr[j];
                const float x = p[j];
                if (m_fromLogits) {
                    sum += std::max(x, 0.0f) - x * t + std::log1p(std::exp(-std::abs(x)));
                    if (d)
                        d[j] = c * (sigmoid(x) - t);
                } else {
                    const float q = std::clamp(x, kEpsilon, kOneMinusEpsilon);
                    sum -= t * std::log(q) + (1.0f - t) * std::log(1.0f - q);
                    if (d)
                        d[j] = inClipRange(x) ? c * ((1.0f - t) / (1.0f - q) - t / q) : 0.0f;
                }
            }
            perSample[std::size_t(i)] = n ? float(sum / double(n)) : 0.0f;
        }
    }

private:
    bool m_fromLogits;
    float m_smoothing;
};


// The class index a float target names: rounded; NaN reads as class 0 and indices outside
// [0, classes) are clamped to the nearest class. Keras would fail inside the op; the trainer
// validates targets against the class count and reports them, so the loss only must not crash.
std::int64_t classIndex(float t, std::int64_t classes)
{
    if (std::isnan(t))
        return 0;
    const float r = std::nearbyint(std::clamp(t, 0.0f, float(classes - 1)));
    return std::clamp<std::int64_t>(std::int64_t(r), 0, classes - 1);
}

class CategoricalCrossentropy final : public Loss
{
public:
    nlohmann::json options() const override { return {{"from_logits", m_fromLogits}, {"delta", 1.0}, {"label_smoothing", m_smoothing}}; }
    CategoricalCrossentropy(const LossOptions &o, bool sparse) : m_fromLogits(o.fromLogits), m_smoothing(float(o.labelSmoothing)), m_sparse(sparse)
    {
    }

    std::string name() const override { return m_sparse ? "sparse_categorical_crossentropy" : "categorical_crossentropy"; }

    Status checkShapes(const Shape &pred, const Shape &target) const override
    {
        if (pred.empty() || pred.back() < 1)
            return Error::invalid("loss", name() + " expects predictions with a class axis (one score per class), got " + shapeString(pred));
        if (!m_sparse) {
            if (pred == target)
                return {};
            return Error::invalid("loss", "categorical_crossentropy expects one-hot targets of the same shape as the predictions " +
                                              shapeString(pred) + ", got " + shapeString(target));
        }
        Shape bare(pred.begin(), pred.end() - 1), withOne = bare;
        withOne.push_back(1);
        if (target == bare || target == withOne)
            return {};
        return Error::invalid("loss", "sparse_categorical_crossentropy expects targets of shape " + shapeString(bare) + " or " +
                                          shapeString(withOne) + " for predictions " + shapeString(pred) + ", got " + shapeString(target));
    }

    void compute(const FloatTensor &pred, const FloatTensor &target, std::span<const float> weights, float scale, std::span<float> perSample,
                 FloatTensor *dPred) const override
    {
        const std::int64_t batch = pred.rows(), n = pred.rowSize();
        const std::int64_t classes = pred.shape.size() >= 2 ? pred.shape.back() : 1;
        const std::int64_t steps = classes ? n / classes : 0; // positions scored per sample (time steps)
        assert(perSample.size() == std::size_t(batch));
        assert(target.size() == std::size_t(batch * (m_sparse ? steps : n)));
        if (dPred)
            dPred->resize(pred.shape);
        std::vector<float> prob(std::size_t(std::max<std::int64_t>(classes, 1))), smooth(prob.size());
        for (std::int64_t i = 0; i < batch; ++i) {
            const float c = steps ? scale * detail::sampleWeight(weights, i) / float(steps) : 0.0f;
            double sum = 0;
            for (std::int64_t s = 0; s < steps; ++s) {
                const std::int64_t at = (i * steps + s) * classes;
                const float *x = pred.ptr() + at;
                float *d = dPred ? dPred->ptr() + at : nullptr;
                if (m_sparse)
                    sum += sparse(x, classIndex(target.ptr()[i * steps + s], classes), classes, prob.data(), d, c);
                else
                    sum += dense(x, target.ptr() + at, classes, prob.data(), smooth.data(), d, c);
            }
            perSample[std::size_t(i)] = steps ? float(sum / double(steps)) : 0.0f;
        }
    }

private:
    // One position of categorical_crossentropy: returns its loss, writes c * dloss/dx into d.
    double dense(const float *x, const float *target, std::int64_t classes, float *prob, float *t, float *d, float c) const
    {
        const float k = m_smoothing / float(classes);
        for (std::int64_t j = 0; j < classes; ++j)
            t[j] = m_smoothing != 0 ? target[j] * (1.0f - m_smoothing) + k : target[j];
        double loss = 0;
        if (m_fromLogits) {
            const double lse = softmaxRow(x, classes, prob);
            float tsum = 0;
            for (std::int64_t j = 0; j < classes; ++j) {
                loss += double(t[j]) * (lse - double(x[j]));
                tsum += t[j];
            }
            if (d)
                for (std::int64_t j = 0; j < classes; ++j)
                    d[j] = c * (prob[j] * tsum - t[j]);
            return loss;
        }
        // q = p / S clipped; dL/dq_k = -t_k / q_k inside the clip range (g_k), and
        // dq_k/dp_j = (delta_kj - q_k) / S, so dL/dp_j = (g_j - sum_k g_k q_k) / S.
        double total = 0;
        for (std::int64_t j = 0; j < classes; ++j)
            total += x[j];
        const float inv = float(1.0 / total);
        double gq = 0;
        for (std::int64_t j = 0; j < classes; ++j) {
            const float q = x[j] * inv;
            loss -= double(t[j]) * std::log(std::clamp(q, kEpsilon, kOneMinusEpsilon));
            prob[j] = inClipRange(q) ? -t[j] / q : 0.0f; // g_j
            gq += double(prob[j]) * q;
        }
        if (d)
            for (std::int64_t j = 0; j < classes; ++j)
                d[j] = c * (prob[j] - float(gq)) * inv;
        return loss;
    }

    // One position of sparse_categorical_crossentropy with class y.
    double sparse(const float *x, std::int64_t y, std::int64_t classes, float *prob, float *d, float c) const
    {
        if (m_fromLogits) {
            const double lse = softmaxRow(x, classes, prob);
            if (d) {
                for (std::int64_t j = 0; j < classes; ++j)
                    d[j] = c * prob[j];
                d[y] -= c;
            }
            return lse - double(x[y]);
        }
        // -log(clip(p_y) / sum clip(p)): d/dp_j = [p_j in range] (1 / sum - [j == y] / clip(p_y)).
        double total = 0;
        for (std::int64_t j = 0; j < classes; ++j)
            total += std::clamp(x[j], kEpsilon, kOneMinusEpsilon);
        const float cy = std::clamp(x[y], kEpsilon, kOneMinusEpsilon);
        if (d) {
            const float inv = float(1.0 / total);
            for (std::int64_t j = 0; j < classes; ++j)
                d[j] = inClipRange(x[j]) ? c * inv : 0.0f;
            if (inClipRange(x[y]))
                d[y] -= c / cy;
        }
        return std::log(total) - std::log(double(cy));
    }

    bool m_fromLogits;
    float m_smoothing;
    bool m_sparse;
};

} // namespace

namespace detail {

std::unique_ptr<Loss> makeBinaryCrossentropy(const LossOptions &options) { return std::make_unique<BinaryCrossentropy>(options); }
std::unique_ptr<Loss> makeCategoricalCrossentropy(const LossOptions &options) { return std::make_unique<CategoricalCrossentropy>(options, false); }
std::unique_ptr<Loss> makeSparseCategoricalCrossentropy(const LossOptions &options)
{
    return std::make_unique<CategoricalCrossentropy>(options, true);
}

} // namespace detail

} // namespace sluice::train
