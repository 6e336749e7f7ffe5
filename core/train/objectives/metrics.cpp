// Keras metrics. Mean metrics (accuracies, mae, mse) keep Keras's MeanMetricWrapper state:
// total = sum_i w_i * value_i and count = sum_i w_i, where value_i is the sample's mean over its
// elements (time steps); result = total / count (0 when count is 0, as divide_no_nan).
// AUC keeps, per bucket of Keras's 200 evenly spaced thresholds, the weight of positive and
// negative predictions that fall in it (the confusion counts are their suffix sums), so its state
// sums across replicas like Keras's true/false positive/negative variables.
//
// Threading: a Metric is not thread-safe; each replica keeps its own and the trainer sums states.
#include "train/objectives/metrics.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace sluice::train {

namespace {

float sampleWeight(std::span<const float> weights, std::int64_t i) { return weights.empty() ? 1.0f : weights[std::size_t(i)]; }

std::int64_t argmax(const float *x, std::int64_t n) { return std::max_element(x, x + n) - x; }

// The per-sample shape of a batched tensor.
Shape sampleShape(const FloatTensor &t) { return t.shape.empty() ? Shape{} : Shape(t.shape.begin() + 1, t.shape.end()); }

class MeanMetric : public Metric
{
public:
    explicit MeanMetric(std::string name) : m_name(std::move(name)) {}
    std::string name() const override { return m_name; }

    void update(const FloatTensor &pred, const FloatTensor &target, std::span<const float> weights) override
    {
        const std::int64_t batch = pred.rows();
        assert(weights.empty() || weights.size() == std::size_t(batch));
        for (std::int64_t i = 0; i < batch; ++i) {
            const double w = sampleWeight(weights, i);
            m_total += w * sampleValue(pred, target, i);
            m_count += w;
        }
    }
    double result() const override { return m_count != 0 ? m_total / m_count : 0.0; }
    void reset() override { m_total = m_count = 0; }
    std::vector<double> state() const override { return {m_total, m_count}; }
    void setState(std::span<const double> state) override
    {
        assert(state.size() == 2);
        if (state.size() == 2) {
            m_total = state[0];
            m_count = state[1];
        }
    }

protected:
    // The mean over sample i's elements.
    virtual double sampleValue(const FloatTensor &pred, const FloatTensor &target, std::int64_t i) const = 0;

private:
    std::string m_name;
    double m_total = 0, m_count = 0;
};

enum class Accuracy { Binary, Categorical, Sparse, ByShape };

class AccuracyMetric final : public MeanMetric
{
public:
    AccuracyMetric(std::string name, Accuracy kind, float threshold) : MeanMetric(std::move(name)), m_kind(kind), m_threshold(threshold) {}

protected:
    double sampleValue(const FloatTensor &pred, const FloatTensor &target, std::int64_t i) const override
    {
        const std::int64_t n = pred.rowSize(), tn = target.rowSize();
        const float *p = pred.ptr() + i * n;
        const float *t = target.ptr() + i * tn;
        const std::int64_t classes = pred.shape.size() >= 2 ? pred.shape.back() : 1;
        switch (kindFor(pred, target)) {
        case Accuracy::Binary: {
            // Keras binary_accuracy: (p > threshold) == t, element by element.
            const std::int64_t m = std::min(n, tn);
            std::int64_t hits = 0;
            for (std::int64_t j = 0; j < m; ++j)
                hits += (p[j] > m_threshold ? 1.0f : 0.0f) == t[j];
            return m ? double(hits) / double(m) : 0.0;
        }
        case Accuracy::Categorical: {
            // argmax(t) == argmax(p) per position of the class axis.
            const std::int64_t steps = classes ? std::min(n, tn) / classes : 0;
            std::int64_t hits = 0;
            for (std::int64_t s = 0; s < steps; ++s)
                hits += argmax(p + s * classes, classes) == argmax(t + s * classes, classes);
            return steps ? double(hits) / double(steps) : 0.0;
        }
        case Accuracy::Sparse:
        case Accuracy::ByShape: {
            // t == argmax(p), compared as floats (Keras casts the argmax to the target's dtype).
            const std::int64_t steps = classes ? std::min(n / classes, tn) : 0;
            std::int64_t hits = 0;
            for (std::int64_t s = 0; s < steps; ++s)
                hits += float(argmax(p + s * classes, classes)) == t[s];
            return steps ? double(hits) / double(steps) : 0.0;
        }
        }
        return 0.0;
    }

private:
    // "accuracy" with a loss that does not say (mse, ...): Keras's rule from the shapes
    // (keras/src/trainers/compile_utils.py is_binary_or_sparse_categorical).
    Accuracy kindFor(const FloatTensor &pred, const FloatTensor &target) const
    {
        if (m_kind != Accuracy::ByShape)
            return m_kind;
        const Shape ps = sampleShape(pred), ts = sampleShape(target);
        const std::int64_t pLast = ps.empty() ? 1 : ps.back(), tLast = ts.empty() ? 1 : ts.back();
        if (pLast == 1)
            return Accuracy::Binary;
        if (ts.size() < ps.size() || (tLast == 1 && pLast > 1))
            return Accuracy::Sparse;
        return Accuracy::Categorical;
    }

    Accuracy m_kind;
    float m_threshold;
};

class ErrorMetric final : public MeanMetric
{
public:
    ErrorMetric(std::string name, bool squared) : MeanMetric(std::move(name)), m_squared(squared) {}

protected:
    double sampleValue(const FloatTensor &pred, const FloatTensor &target, std::int64_t i) const override
    {
        const std::int64_t n = pred.rowSize(), m = std::min(n, target.rowSize());
        const float *p = pred.ptr() + i * n;
        const float *t = target.ptr() + i * target.rowSize();
        double sum = 0;
        for (std::int64_t j = 0; j < m; ++j) {
            const double e = double(p[j]) - t[j];
            sum += m_squared ? e * e : std::abs(e);
        }
        return m ? sum / double(m) : 0.0;
    }

private:
    bool m_squared;
};

// tf.keras.metrics.AUC() with its defaults: ROC curve, 200 thresholds {-eps, 1/199, ..., 198/199,
// 1+eps}, summation_method "interpolation" (trapezoids), predictions clipped to [0, 1], every
// element of a sample carrying the sample's weight, a target counting as positive when non-zero.
class AucMetric final : public Metric
{
public:
    static constexpr int kThresholds = 200;

    AucMetric(std::string name, bool fromLogits) : m_name(std::move(name)), m_fromLogits(fromLogits) {}

    std::string name() const override { return m_name; }

    void update(const FloatTensor &pred, const FloatTensor &target, std::span<const float> weights) override
    {
        const std::int64_t batch = pred.rows(), n = pred.rowSize(), m = std::min(n, target.rowSize());
        for (std::int64_t i = 0; i < batch; ++i) {
            const double w = sampleWeight(weights, i);
            const float *p = pred.ptr() + i * n;
            const float *t = target.ptr() + i * target.rowSize();
            for (std::int64_t j = 0; j < m; ++j) {
                float x = p[j];
                if (m_fromLogits)
                    x = x >= 0 ? 1.0f / (1.0f + std::exp(-x)) : std::exp(x) / (1.0f + std::exp(x));
                x = std::clamp(x, 0.0f, 1.0f); // NaN stays NaN and lands in bucket 0 below
                // Keras's bucket: ceil(p * (T - 1)) - 1, at least 0 (p counts as positive at
                // every threshold below it; thresholds j/199, strictly greater).
                const float b = std::ceil(x * float(kThresholds - 1)) - 1.0f;
                const int bucket = b >= 0 ? std::min(int(b), kThresholds - 1) : 0;
                (t[j] != 0 ? m_pos : m_neg)[bucket] += w;
            }
        }
    }

    double result() const override
    {
        // tp[k] / fp[k]: weight above threshold k = sums over buckets >= k.
        double tp[kThresholds], fp[kThresholds];
        double sp = 0, sn = 0;
        for (int k = kThresholds - 1; k >= 0; --k) {
            sp += m_pos[k];
            sn += m_neg[k];
            tp[k] = sp;
            fp[k] = sn;
        }
        // recall = tp / (tp + fn) = tp / positives; fp rate = fp / negatives; 0 where 0/0.
        auto rate = [](double a, double total) { return total != 0 ? a / total : 0.0; };
        double auc = 0;
        for (int k = 0; k + 1 < kThresholds; ++k) {
            const double x0 = rate(fp[k], sn), x1 = rate(fp[k + 1], sn);
            const double y0 = rate(tp[k], sp), y1 = rate(tp[k + 1], sp);
            auc += (x0 - x1) * (y0 + y1) / 2.0;
        }
        return auc;
    }

    void reset() override
    {
        std::fill(std::begin(m_pos), std::end(m_pos), 0.0);
        std::fill(std::begin(m_neg), std::end(m_neg), 0.0);
    }

    // Positive weight per bucket, then negative weight per bucket.
    std::vector<double> state() const override
    {
        std::vector<double> s(std::begin(m_pos), std::end(m_pos));
        s.insert(s.end(), std::begin(m_neg), std::end(m_neg));
        return s;
    }
    void setState(std::span<const double> state) override
    {
        assert(state.size() == 2 * kThresholds);
        if (state.size() != 2 * kThresholds)
            return;
        std::copy(state.begin(), state.begin() + kThresholds, m_pos);
        std::copy(state.begin() + kThresholds, state.end(), m_neg);
    }

private:
    std::string m_name;
    bool m_fromLogits;
    double m_pos[kThresholds] = {};
    double m_neg[kThresholds] = {};
};

std::string canonicalLoss(const std::string &loss)
{
    if (loss == "mean_squared_error")
        return "mse";
    if (loss == "mean_absolute_error")
        return "mae";
    return loss;
}

} // namespace

const std::vector<std::string> &knownMetrics()
{
    static const std::vector<std::string> names{"accuracy", "binary_accuracy",    "categorical_accuracy", "sparse_categorical_accuracy",
                                                "mae",      "mean_absolute_error", "mse",                 "mean_squared_error",
                                                "auc"};
    return names;
}

Result<std::unique_ptr<Metric>> createMetric(const std::string &name, const std::string &lossName, bool fromLogits)
{
    // Logits are thresholded at 0 (sigmoid(x) > 0.5), also for an explicit binary_accuracy:
    // Keras would compare logits with 0.5 there, which is never what is meant.
    const float threshold = fromLogits ? 0.0f : 0.5f;
    const std::string loss = canonicalLoss(lossName);
    std::unique_ptr<Metric> metric;
    if (name == "accuracy" || name == "acc") {
        const Accuracy kind = loss == "binary_crossentropy"                ? Accuracy::Binary
                              : loss == "sparse_categorical_crossentropy" ? Accuracy::Sparse
                              : loss == "categorical_crossentropy"        ? Accuracy::Categorical
                                                                          : Accuracy::ByShape;
        metric = std::make_unique<AccuracyMetric>(name, kind, threshold);
    } else if (name == "binary_accuracy") {
        metric = std::make_unique<AccuracyMetric>(name, Accuracy::Binary, threshold);
    } else if (name == "categorical_accuracy") {
        metric = std::make_unique<AccuracyMetric>(name, Accuracy::Categorical, threshold);
    } else if (name == "sparse_categorical_accuracy") {
        metric = std::make_unique<AccuracyMetric>(name, Accuracy::Sparse, threshold);
    } else if (name == "mae" || name == "mean_absolute_error") {
        metric = std::make_unique<ErrorMetric>(name, false);
    } else if (name == "mse" || name == "mean_squared_error") {
        metric = std::make_unique<ErrorMetric>(name, true);
    } else if (name == "auc") {
        metric = std::make_unique<AucMetric>(name, fromLogits);
    } else {
        std::string known;
        for (const auto &k : knownMetrics())
            known += (known.empty() ? "" : ", ") + k;
        return Error::invalid("metrics", "unknown metric \"" + name + "\"; known: " + known);
    }
    return metric;
}

} // namespace sluice::train
