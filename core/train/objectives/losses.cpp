// Regression losses (mse, mae, huber), the loss factory and Keras class weights. The
// cross-entropies live in losses_crossentropy.cpp.
//
// Threading: a Loss is immutable once created; compute() is const and may run on several
// replicas' threads at once.
#include "train/objectives/losses_internal.h"

#include "train/model/spec_reader.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace sluice::train {

namespace {

using detail::LossOptions;

enum class Regression { Mse, Mae, Huber };

class RegressionLoss final : public Loss
{
public:
    RegressionLoss(Regression kind, std::string name, float delta) : m_kind(kind), m_name(std::move(name)), m_delta(delta) {}
    nlohmann::json options() const override { return {{"from_logits", false}, {"delta", m_delta}, {"label_smoothing", 0.0}}; }

    std::string name() const override { return m_name; }

    Status checkShapes(const Shape &pred, const Shape &target) const override
    {
        if (detail::sameShapeOrScalar(pred, target))
            return {};
        return Error::invalid("loss", m_name + " expects targets of the same shape as the predictions " + shapeString(pred) + ", got " +
                                          shapeString(target));
    }

    void compute(const FloatTensor &pred, const FloatTensor &target, std::span<const float> weights, float scale, std::span<float> perSample,
                 FloatTensor *dPred) const override
    {
        const std::int64_t batch = pred.rows(), n = pred.rowSize();
        assert(target.size() == pred.size() && perSample.size() == std::size_t(batch));
        assert(weights.empty() || weights.size() == std::size_t(batch));
        if (dPred)
            dPred->resize(pred.shape);
        for (std::int64_t i = 0; i < batch; ++i) {
            const float *p = pred.ptr() + i * n;
            const float *t = target.ptr() + i * n;
            double sum = 0;
            switch (m_kind) {
            case Regression::Mse:
                for (std::int64_t j = 0; j < n; ++j) {
                    const float e = p[j] - t[j];
                    sum += double(e) * e;
                }
                break;
            case Regression::Mae:
                for (std::int64_t j = 0; j < n; ++j)
                    sum += std::abs(double(p[j]) - t[j]);
                break;
            case Regression::Huber:
                for (std::int64_t j = 0; j < n; ++j) {
                    const double e = std::abs(double(p[j]) - t[j]);
                    sum += e <= m_delta ? 0.5 * e * e : m_delta * e - 0.5 * double(m_delta) * m_delta;
                }
                break;
            }
            perSample[std::size_t(i)] = n ? float(sum / double(n)) : 0.0f;
            if (!dPred)
                continue;
            // d(scale * w_i * mean_j f(e_j)) / dp_j = scale * w_i / n * f'(e_j)
            const float c = n ? scale * detail::sampleWeight(weights, i) / float(n) : 0.0f;
            float *d = dPred->ptr() + i * n;
            switch (m_kind) {
            case Regression::Mse:
                for (std::int64_t j = 0; j < n; ++j)
                    d[j] = 2.0f * c * (p[j] - t[j]);
                break;
            case Regression::Mae:
                for (std::int64_t j = 0; j < n; ++j) {
                    const float e = p[j] - t[j];
                    d[j] = e > 0 ? c : (e < 0 ? -c : 0.0f);
                }
                break;
            case Regression::Huber:
                for (std::int64_t j = 0; j < n; ++j) {
                    const float e = p[j] - t[j];
                    d[j] = c * std::clamp(e, -m_delta, m_delta);
                }
                break;
            }
        }
    }

private:
    Regression m_kind;
    std::string m_name;
    float m_delta;
};

// Reads the options from_logits, delta and label_smoothing of `options` (an object, or null for
// none) over those already in `out`. `alsoKnown` names a key read by the caller ("name").
Status readOptions(const nlohmann::json &options, LossOptions &out, const char *alsoKnown = nullptr)
{
    if (options.is_null())
        return {};
    if (!options.is_object())
        return Error::invalid("loss", "expected the options as an object, got " + shortJson(options));
    SpecReader reader(options, "loss");
    out.fromLogits = reader.boolean("from_logits", out.fromLogits);
    out.delta = reader.number("delta", out.delta, Interval::greaterThan(0));
    out.labelSmoothing = reader.number("label_smoothing", out.labelSmoothing, Interval::closed(0, 1));
    if (alsoKnown)
        reader.accept(alsoKnown);
    reader.rejectUnknown("loss");
    if (auto e = reader.error())
        return *e;
    return {};
}

} // namespace

const std::vector<std::string> &knownLosses()
{
    static const std::vector<std::string> names{"mse",
                                                "mean_squared_error",
                                                "mae",
                                                "mean_absolute_error",
                                                "huber",
                                                "binary_crossentropy",
                                                "categorical_crossentropy",
                                                "sparse_categorical_crossentropy"};
    return names;
}

Result<std::unique_ptr<Loss>> createLoss(const nlohmann::json &spec, const nlohmann::json &options)
{
    const nlohmann::json &s = spec.is_object() && spec.contains("loss") ? spec["loss"] : spec;
    std::string name;
    LossOptions opts;
    if (Status st = readOptions(options, opts); !st)
        return st.error();
    if (s.is_string()) {
        name = s.get<std::string>();
    } else if (s.is_object()) {
        if (!s.contains("name") || !s["name"].is_string())
            return Error::invalid("loss.name", "expected the loss's name as a string; known: " + joinNames(knownLosses()));
        name = s["name"].get<std::string>();
        if (Status st = readOptions(s, opts, "name"); !st) // the spec's own options override `options`
            return st.error();
    } else {
        return Error::invalid("loss", "expected a loss name or {\"name\": ...}, got " + shortJson(s));
    }

    const bool regression = name == "mse" || name == "mean_squared_error" || name == "mae" || name == "mean_absolute_error" || name == "huber";
    // Options a loss does not have are errors unless they hold their default (the trainer may
    // pass the same option object to every output).
    if (opts.fromLogits && regression)
        return Error::invalid("loss.from_logits", name + " takes no from_logits (only the cross-entropies do)");
    if (opts.delta != 1.0 && name != "huber")
        return Error::invalid("loss.delta", name + " takes no delta (only huber does)");
    if (opts.labelSmoothing != 0.0 && name != "binary_crossentropy" && name != "categorical_crossentropy")
        return Error::invalid("loss.label_smoothing",
                              name + " takes no label_smoothing (Keras has it for binary_crossentropy and categorical_crossentropy; "
                                     "use categorical_crossentropy with one-hot targets to smooth class labels)");

    if (name == "mse" || name == "mean_squared_error")
        return std::unique_ptr<Loss>(std::make_unique<RegressionLoss>(Regression::Mse, "mse", 0.0f));
    if (name == "mae" || name == "mean_absolute_error")
        return std::unique_ptr<Loss>(std::make_unique<RegressionLoss>(Regression::Mae, "mae", 0.0f));
    if (name == "huber")
        return std::unique_ptr<Loss>(std::make_unique<RegressionLoss>(Regression::Huber, "huber", float(opts.delta)));
    if (name == "binary_crossentropy")
        return detail::makeBinaryCrossentropy(opts);
    if (name == "categorical_crossentropy")
        return detail::makeCategoricalCrossentropy(opts);
    if (name == "sparse_categorical_crossentropy")
        return detail::makeSparseCategoricalCrossentropy(opts);
    return Error::invalid("loss", "unknown loss \"" + name + "\"; known: " + joinNames(knownLosses()));
}

void applyClassWeights(const FloatTensor &target, const std::vector<std::pair<std::int64_t, float>> &classWeights, std::span<float> weights)
{
    const std::int64_t batch = target.rows(), n = target.rowSize();
    assert(weights.size() == std::size_t(batch));
    if (classWeights.empty() || n == 0)
        return;
    for (std::int64_t i = 0; i < batch; ++i) {
        const float *t = target.ptr() + i * n;
        std::int64_t cls = 0;
        if (n == 1) {
            // Binary or sparse: the value, rounded half to even as numpy's np.round.
            const float r = std::nearbyint(t[0]);
            if (!std::isfinite(r))
                continue; // no class: the weight stays
            cls = std::int64_t(std::clamp(r, -9.0e18f, 9.0e18f));
        } else {
            // One-hot: the first largest element (np.argmax). Sequence targets with a class per
            // step are read as one vector, as Keras supports class_weight only for 2-D targets.
            cls = std::max_element(t, t + n) - t;
        }
        for (const auto &[c, w] : classWeights)
            if (c == cls) {
                weights[std::size_t(i)] *= w;
                break;
            }
    }
}

} // namespace sluice::train
