// Keras 3 optimizers (keras/src/optimizers/*.py update_step) over one flat parameter buffer.
// Every update is elementwise, so the buffer is cut into chunks of 64K parameters that oneTBB
// runs in parallel; each chunk's loop is a plain float loop over raw pointers that the compiler
// can vectorise. Results do not depend on the thread count.
//
// Threading: apply() is called by one thread at a time (the trainer's), and runs in parallel inside.
#include "train/objectives/optimizer.h"

#include "train/model/huge_pages.h"
#include "train/model/prefetch.h"
#include "train/model/spec_reader.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cassert>
#include <cmath>

namespace sluice::train {

namespace {

constexpr std::size_t kChunk = std::size_t(1) << 16;
// The updates' chunks are smaller (about 15 us of Adam each): a 35K-parameter model's update
// still runs on two threads. Only the norm's partial sums follow kChunk.
constexpr std::size_t kUpdateChunk = std::size_t(1) << 14;

// Calls f(begin, end) over [0, n) in chunks of `chunk`, in parallel when there is more than one.
template <typename F>
void forChunks(std::size_t n, const F &f, std::size_t chunk = kChunk)
{
    if (n <= chunk) {
        f(std::size_t(0), n);
        return;
    }
    const std::size_t chunks = (n + chunk - 1) / chunk;
    oneapi::tbb::parallel_for(std::size_t(0), chunks, [&](std::size_t c) { f(c * chunk, std::min(n, (c + 1) * chunk)); });
}

// Keras's decoupled weight decay (BaseOptimizer._apply_weight_decay), applied before the update:
// w = w - w * weight_decay * lr.
inline void decay(float *__restrict w, std::size_t n, float factor)
{
    for (std::size_t i = 0; i < n; ++i)
        w[i] -= w[i] * factor;
}

struct Hyper
{
    std::string type;
    double weightDecay = 0;
    double momentum = 0;
    bool nesterov = false;
    double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-7;
    bool amsgrad = false;
    double rho = 0.9;
    bool centered = false;
};

class OptimizerBase : public Optimizer
{
public:
    OptimizerBase(const Hyper &h, std::size_t count) : m_h(h), m_count(count) {}
    std::string name() const override { return m_h.type; }
    std::vector<OptimizerSlot> &slots() override { return m_slots; }
    nlohmann::json hyperparameters() const override
    {
        return {{"type", m_h.type},         {"weight_decay", m_h.weightDecay}, {"momentum", m_h.momentum}, {"nesterov", m_h.nesterov},
                {"beta_1", m_h.beta1},      {"beta_2", m_h.beta2},             {"epsilon", m_h.epsilon},   {"amsgrad", m_h.amsgrad},
                {"rho", m_h.rho},           {"centered", m_h.centered}};
    }

    void apply(std::span<float> weights, std::span<const float> grads, float lr, std::int64_t iteration) override
    {
        assert(weights.size() == m_count && grads.size() == m_count);
        for ([[maybe_unused]] const auto &s : m_slots)
            assert(s.values.size() == m_count);
        prepare(lr, iteration);
        const float wd = float(m_h.weightDecay) * lr;
        float *w = weights.data();
        const float *g = grads.data();
        // Sizes agree (asserted); a mismatch in a release build updates the common prefix only.
        forChunks(std::min({weights.size(), grads.size(), m_count}), [&](std::size_t b, std::size_t e) {
            if (wd != 0)
                decay(w + b, e - b, wd);
            update(w, g, b, e, lr);
        }, kUpdateChunk);
    }

    void applyRanges(std::span<float> weights, std::span<const float> grads, std::span<const FloatRange> ranges, float lr,
                     std::int64_t iteration) override
    {
        prepare(lr, iteration);
        const float wd = float(m_h.weightDecay) * lr;
        float *w = weights.data();
        const float *g = grads.data();
        // Pieces of at most kUpdateChunk floats: a dense range splits, a table's rows stay whole.
        std::vector<FloatRange> pieces;
        std::size_t total = 0;
        for (const auto &r : ranges) {
            assert(r.offset + r.count <= std::min(weights.size(), m_count));
            for (std::size_t b = 0; b < r.count; b += kUpdateChunk)
                pieces.push_back({r.offset + b, std::min(kUpdateChunk, r.count - b)});
            total += r.count;
        }
        const auto run = [&](std::size_t first, std::size_t last) {
            for (std::size_t i = first; i < last; ++i) {
                // Table rows come in an order no hardware prefetcher follows: ask ahead.
                if (i + kPrefetchRows < last && pieces[i].count <= 128) {
                    const auto &ahead = pieces[i + kPrefetchRows];
                    prefetchRow(w + ahead.offset, ahead.count);
                    prefetchRow(g + ahead.offset, ahead.count);
                    // Not a loop over the slots: GCC would drop a loop of prefetches alone.
                    const std::size_t slots = m_slots.size();
                    if (slots > 0)
                        prefetchRow(slot(0) + ahead.offset, ahead.count);
                    if (slots > 1)
                        prefetchRow(slot(1) + ahead.offset, ahead.count);
                    if (slots > 2)
                        prefetchRow(slot(2) + ahead.offset, ahead.count);
                }
                const auto &p = pieces[i];
                if (wd != 0)
                    decay(w + p.offset, p.count, wd);
                update(w, g, p.offset, p.offset + p.count, lr);
            }
        };
        if (total <= kUpdateChunk) {
            run(0, pieces.size());
            return;
        }
        // Each piece is written by one task: the result does not depend on the split.
        const std::size_t per = std::max<std::size_t>(1, pieces.size() * kUpdateChunk / total);
        oneapi::tbb::parallel_for(std::size_t(0), (pieces.size() + per - 1) / per,
                                  [&](std::size_t c) { run(c * per, std::min(pieces.size(), (c + 1) * per)); });
    }

protected:
    void addSlot(std::string name)
    {
        m_slots.push_back({std::move(name), std::vector<float>(m_count, 0.0f)});
        adviseHugePages(m_slots.back().values); // embedding tables: random rows every step
    }
    float *slot(std::size_t i) { return m_slots[i].values.data(); }
    // Per-step scalars (bias corrections), once before the chunks run.
    virtual void prepare(float /*lr*/, std::int64_t /*iteration*/) {}
    // Updates parameters [b, e).
    virtual void update(float *w, const float *g, std::size_t b, std::size_t e, float lr) = 0;

    Hyper m_h;
    std::size_t m_count;
    std::vector<OptimizerSlot> m_slots;
};

// keras.optimizers.SGD: v = momentum v - lr g; w += v (nesterov: w += momentum v - lr g).
class Sgd final : public OptimizerBase
{
public:
    Sgd(const Hyper &h, std::size_t count) : OptimizerBase(h, count)
    {
        if (h.momentum != 0)
            addSlot("momentum");
    }

protected:
    void update(float *w, const float *g, std::size_t b, std::size_t e, float lr) override
    {
        float *__restrict wp = w + b;
        const float *__restrict gp = g + b;
        const std::size_t n = e - b;
        if (m_slots.empty()) {
            for (std::size_t i = 0; i < n; ++i)
                wp[i] -= gp[i] * lr;
            return;
        }
        const float mu = float(m_h.momentum);
        float *__restrict v = slot(0) + b;
        if (m_h.nesterov) {
            for (std::size_t i = 0; i < n; ++i) {
                v[i] = -gp[i] * lr + v[i] * mu;
                wp[i] += -gp[i] * lr + v[i] * mu;
            }
        } else {
            for (std::size_t i = 0; i < n; ++i) {
                v[i] = -gp[i] * lr + v[i] * mu;
                wp[i] += v[i];
            }
        }
    }
};

// keras.optimizers.Adam / AdamW (AdamW is Adam with weight_decay, 0.004 by default):
// m += (g - m)(1 - b1); v += (g^2 - v)(1 - b2); [v_hat = max(v_hat, v)];
// w -= alpha m / (sqrt(v) + eps), alpha = lr sqrt(1 - b2^t) / (1 - b1^t).
class Adam final : public OptimizerBase
{
public:
    Adam(const Hyper &h, std::size_t count) : OptimizerBase(h, count)
    {
        addSlot("m");
        addSlot("v");
        if (h.amsgrad)
            addSlot("v_hat");
    }

protected:
    void prepare(float lr, std::int64_t iteration) override
    {
        assert(iteration >= 1);
        const double t = double(std::max<std::int64_t>(iteration, 1));
        m_alpha = float(double(lr) * std::sqrt(1.0 - std::pow(m_h.beta2, t)) / (1.0 - std::pow(m_h.beta1, t)));
    }

    void update(float *w, const float *g, std::size_t b, std::size_t e, float) override
    {
        float *__restrict wp = w + b;
        const float *__restrict gp = g + b;
        float *__restrict m = slot(0) + b;
        float *__restrict v = slot(1) + b;
        const std::size_t n = e - b;
        const float c1 = float(1.0 - m_h.beta1), c2 = float(1.0 - m_h.beta2), eps = float(m_h.epsilon), alpha = m_alpha;
        if (m_h.amsgrad) {
            float *__restrict vh = slot(2) + b;
            for (std::size_t i = 0; i < n; ++i) {
                m[i] += (gp[i] - m[i]) * c1;
                v[i] += (gp[i] * gp[i] - v[i]) * c2;
                vh[i] = std::max(vh[i], v[i]);
                wp[i] -= m[i] * alpha / (std::sqrt(vh[i]) + eps);
            }
            return;
        }
        for (std::size_t i = 0; i < n; ++i) {
            m[i] += (gp[i] - m[i]) * c1;
            v[i] += (gp[i] * gp[i] - v[i]) * c2;
            wp[i] -= m[i] * alpha / (std::sqrt(v[i]) + eps);
        }
    }

private:
    float m_alpha = 0;
};

// keras.optimizers.RMSprop: v = rho v + (1 - rho) g^2; [centered: a = rho a + (1 - rho) g,
// denominator v - a^2 + eps, else v + eps]; increment = lr g / sqrt(denominator) (epsilon
// inside the root, unlike torch); with momentum: m = momentum m + increment; w -= m.
class RmsProp final : public OptimizerBase
{
public:
    RmsProp(const Hyper &h, std::size_t count) : OptimizerBase(h, count)
    {
        addSlot("velocity");
        if (h.momentum > 0)
            addSlot("momentum");
        if (h.centered)
            addSlot("average_gradient");
    }

protected:
    void update(float *w, const float *g, std::size_t b, std::size_t e, float lr) override
    {
        const bool momentum = m_h.momentum > 0;
        float *wp = w + b, *v = slot(0) + b;
        float *mom = momentum ? slot(1) + b : nullptr;
        float *avg = m_h.centered ? slot(momentum ? 2 : 1) + b : nullptr;
        const float *gp = g + b;
        const std::size_t n = e - b;
        if (m_h.centered && momentum)
            run<true, true>(wp, gp, v, mom, avg, n, lr);
        else if (m_h.centered)
            run<true, false>(wp, gp, v, mom, avg, n, lr);
        else if (momentum)
            run<false, true>(wp, gp, v, mom, avg, n, lr);
        else
            run<false, false>(wp, gp, v, mom, avg, n, lr);
    }

private:
    // One branch-free loop per variant.
    template <bool Centered, bool Momentum>
    void run(float *__restrict w, const float *__restrict g, float *__restrict v, float *__restrict mom, float *__restrict avg, std::size_t n,
             float lr) const
    {
        const float rho = float(m_h.rho), c = float(1.0 - m_h.rho), eps = float(m_h.epsilon), mu = float(m_h.momentum);
        for (std::size_t i = 0; i < n; ++i) {
            v[i] = rho * v[i] + c * (g[i] * g[i]);
            float denominator;
            if constexpr (Centered) {
                avg[i] = rho * avg[i] + c * g[i];
                denominator = v[i] - avg[i] * avg[i] + eps;
            } else {
                denominator = v[i] + eps;
            }
            const float increment = lr * g[i] / std::sqrt(denominator);
            if constexpr (Momentum) {
                mom[i] = mu * mom[i] + increment;
                w[i] -= mom[i];
            } else {
                w[i] -= increment;
            }
        }
    }
};

} // namespace

const std::vector<std::string> &knownOptimizers()
{
    static const std::vector<std::string> names{"sgd", "adam", "adamw", "rmsprop"};
    return names;
}

Result<std::unique_ptr<Optimizer>> createOptimizer(const nlohmann::json &spec, std::size_t parameterCount)
{
    // "adam" stands for {"type": "adam"} (Keras's compile(optimizer="adam")).
    const nlohmann::json s = spec.is_string() ? nlohmann::json{{"type", spec}} : spec;
    if (!s.is_object())
        return Error::invalid("optimizer", "expected an object with a \"type\" or an optimizer name, got " + s.dump());
    if (!s.contains("type") || !s["type"].is_string())
        return Error::invalid("optimizer.type", "expected one of " + joinNames(knownOptimizers()) + ", got " + (s.contains("type") ? s["type"].dump() : "nothing"));
    Hyper h;
    h.type = s["type"].get<std::string>();
    const auto &known = knownOptimizers();
    if (std::find(known.begin(), known.end(), h.type) == known.end())
        return Error::invalid("optimizer.type", "unknown optimizer \"" + h.type + "\"; known: " + joinNames(known));

    SpecReader r(s, "optimizer");
    r.accept("type");
    // The learning rate is the trainer's (createSchedule(spec["learning_rate"])); here only its
    // type is checked. Absent, Keras's default holds: 0.01 for SGD, 0.001 for the others.
    r.accept("learning_rate");
    if (s.contains("learning_rate")) {
        const auto &lr = s["learning_rate"];
        if (lr.is_number()) {
            if (!(lr.get<double>() >= 0) || !std::isfinite(lr.get<double>()))
                r.fail("learning_rate", "expected a non-negative number or a schedule object, got " + lr.dump());
        } else if (!lr.is_object()) {
            r.fail("learning_rate", "expected a number or a schedule object ({\"type\": \"cosine\", ...}), got " + lr.dump());
        }
    }
    r.number("global_clipnorm", 0.0, Interval::greaterThan(0)); // the trainer's (clipByGlobalNorm)
    const Interval unit = Interval::closed(0, 1), unitOpen = Interval::closedOpen(0, 1), nonNegative = Interval::atLeast(0);
    h.weightDecay = r.number("weight_decay", h.type == "adamw" ? 0.004 : 0.0, nonNegative);
    if (h.type == "sgd") {
        h.momentum = r.number("momentum", 0.0, unit);
        h.nesterov = r.boolean("nesterov", false);
    } else if (h.type == "adam" || h.type == "adamw") {
        h.beta1 = r.number("beta_1", 0.9, unitOpen);
        h.beta2 = r.number("beta_2", 0.999, unitOpen);
        h.epsilon = r.number("epsilon", 1e-7, nonNegative);
        h.amsgrad = r.boolean("amsgrad", false);
    } else { // rmsprop
        h.rho = r.number("rho", 0.9, unit);
        h.momentum = r.number("momentum", 0.0, unit);
        h.epsilon = r.number("epsilon", 1e-7, nonNegative);
        h.centered = r.boolean("centered", false);
    }
    r.rejectUnknown(h.type);
    if (auto e = r.error())
        return *e;

    std::unique_ptr<Optimizer> opt;
    if (h.type == "sgd")
        opt = std::make_unique<Sgd>(h, parameterCount);
    else if (h.type == "rmsprop")
        opt = std::make_unique<RmsProp>(h, parameterCount);
    else
        opt = std::make_unique<Adam>(h, parameterCount);
    return opt;
}

double clipByGlobalNorm(std::span<float> grads, double clipnorm)
{
    if (grads.empty())
        return 0.0;
    // Sum of squares in double, per chunk then in chunk order: the same at any thread count.
    const std::size_t chunks = (grads.size() + kChunk - 1) / kChunk;
    std::vector<double> partial(chunks, 0.0);
    forChunks(grads.size(), [&](std::size_t b, std::size_t e) {
        double s = 0;
        for (std::size_t i = b; i < e; ++i)
            s += double(grads[i]) * grads[i];
        partial[b / kChunk] = s;
    });
    double sum = 0;
    for (double s : partial)
        sum += s;
    const double norm = std::sqrt(sum);
    // Keras: g * clipnorm / max(norm, clipnorm). A non-finite norm is left to the trainer.
    if (clipnorm > 0 && std::isfinite(norm) && norm > clipnorm) {
        const float factor = float(clipnorm / norm);
        float *g = grads.data();
        forChunks(grads.size(), [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i)
                g[i] *= factor;
        });
    }
    return norm;
}

double clipByGlobalNorm(std::span<float> grads, std::span<const FloatRange> ranges, double clipnorm)
{
    // Sum of squares in double, range by range in order: the same at any thread count.
    double sum = 0;
    for (const auto &r : ranges) {
        const float *g = grads.data() + r.offset;
        double s = 0;
        for (std::size_t i = 0; i < r.count; ++i)
            s += double(g[i]) * g[i];
        sum += s;
    }
    const double norm = std::sqrt(sum);
    if (clipnorm > 0 && std::isfinite(norm) && norm > clipnorm) {
        const float factor = float(clipnorm / norm);
        for (const auto &r : ranges) {
            float *g = grads.data() + r.offset;
            for (std::size_t i = 0; i < r.count; ++i)
                g[i] *= factor;
        }
    }
    return norm;
}

} // namespace sluice::train
