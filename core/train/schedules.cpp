// Learning-rate schedules: a constant, step decay, Keras's CosineDecay (with its warm-up) and a
// linear warm-up in front of any schedule. Steps are Keras's optimizer.iterations: the number of
// updates already applied. Schedules are immutable; at() may be called from any thread.
#include "train/optimizer.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <set>

namespace sluice::train {

namespace {

class Constant final : public LearningRateSchedule
{
public:
    explicit Constant(double lr) : m_lr(lr) {}
    double at(std::int64_t) const override { return m_lr; }

private:
    double m_lr;
};

// lr * gamma^floor(step / step_size)
class StepDecay final : public LearningRateSchedule
{
public:
    StepDecay(double lr, std::int64_t stepSize, double gamma) : m_lr(lr), m_stepSize(stepSize), m_gamma(gamma) {}
    double at(std::int64_t step) const override { return m_lr * std::pow(m_gamma, double(std::max<std::int64_t>(step, 0) / m_stepSize)); }

private:
    double m_lr;
    std::int64_t m_stepSize;
    double m_gamma;
};

// keras.optimizers.schedules.CosineDecay. Without warmup_target: decays from
// initial_learning_rate over decay_steps (warmup_steps unused, as in Keras). With it: linear from
// initial_learning_rate to warmup_target over warmup_steps, then decays from warmup_target.
// decayed = (1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha.
class CosineDecay final : public LearningRateSchedule
{
public:
    CosineDecay(double lr, double decaySteps, double alpha, double warmupSteps, std::optional<double> warmupTarget)
        : m_lr(lr), m_decaySteps(decaySteps), m_alpha(alpha), m_warmupSteps(warmupSteps), m_warmupTarget(warmupTarget)
    {
    }

    double at(std::int64_t stepIndex) const override
    {
        double step = double(std::max<std::int64_t>(stepIndex, 0));
        if (!m_warmupTarget)
            return decay(std::min(step, m_decaySteps), m_lr);
        step = std::min(step, m_decaySteps + m_warmupSteps);
        if (step < m_warmupSteps)
            return (*m_warmupTarget - m_lr) * (step / m_warmupSteps) + m_lr;
        return decay(step - m_warmupSteps, *m_warmupTarget);
    }

private:
    double decay(double step, double from) const
    {
        const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * step / m_decaySteps));
        return from * ((1.0 - m_alpha) * cosine + m_alpha);
    }

    double m_lr, m_decaySteps, m_alpha, m_warmupSteps;
    std::optional<double> m_warmupTarget;
};

// after(0) * (step + 1) / warmup_steps for the first warmup_steps updates, then
// after(step - warmup_steps).
class Warmup final : public LearningRateSchedule
{
public:
    Warmup(std::int64_t steps, std::unique_ptr<LearningRateSchedule> after) : m_steps(steps), m_after(std::move(after)) {}
    double at(std::int64_t step) const override
    {
        step = std::max<std::int64_t>(step, 0);
        if (step < m_steps)
            return m_after->at(0) * double(step + 1) / double(m_steps);
        return m_after->at(step - m_steps);
    }

private:
    std::int64_t m_steps;
    std::unique_ptr<LearningRateSchedule> m_after;
};

const std::vector<std::string> &knownSchedules()
{
    static const std::vector<std::string> names{"constant", "step", "cosine", "warmup"};
    return names;
}

std::string joined(const std::vector<std::string> &names)
{
    std::string s;
    for (const auto &n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

// Reads the keys of one schedule object; `path` is "learning_rate" or "learning_rate.after".
class Reader
{
public:
    Reader(const nlohmann::json &spec, std::string path) : m_spec(spec), m_path(std::move(path)) {}

    // A finite number >= lo (> lo when `open`); required when `fallback` is empty.
    double number(const char *key, std::optional<double> fallback, double lo, bool open = false)
    {
        m_used.insert(key);
        if (m_error)
            return 0;
        if (!m_spec.contains(key) || m_spec[key].is_null()) {
            if (!fallback)
                fail(key, "missing (a number " + bound(lo, open) + ")");
            return fallback.value_or(0);
        }
        const auto &v = m_spec[key];
        const double x = v.is_number() ? v.get<double>() : NAN;
        if (!std::isfinite(x) || (open ? !(x > lo) : !(x >= lo)))
            fail(key, "expected a number " + bound(lo, open) + ", got " + v.dump());
        return x;
    }

    // A whole number >= lo.
    std::int64_t integer(const char *key, std::optional<std::int64_t> fallback, std::int64_t lo)
    {
        m_used.insert(key);
        if (m_error)
            return 0;
        if (!m_spec.contains(key) || m_spec[key].is_null()) {
            if (!fallback)
                fail(key, "missing (a whole number of steps, at least " + std::to_string(lo) + ")");
            return fallback.value_or(0);
        }
        const auto &v = m_spec[key];
        const double x = v.is_number() ? v.get<double>() : NAN;
        if (!std::isfinite(x) || x != std::floor(x) || x < double(lo) || x > 9.0e15) {
            fail(key, "expected a whole number of steps, at least " + std::to_string(lo) + ", got " + v.dump());
            return 0;
        }
        return std::int64_t(x);
    }

    std::optional<double> optionalNumber(const char *key)
    {
        if (!m_spec.contains(key) || m_spec[key].is_null()) {
            m_used.insert(key);
            return std::nullopt;
        }
        return number(key, std::nullopt, 0);
    }

    void accept(const char *key) { m_used.insert(key); }

    void rejectUnknown(const std::string &type)
    {
        if (m_error)
            return;
        for (const auto &[key, value] : m_spec.items())
            if (!m_used.count(key)) {
                std::string known;
                for (const auto &k : m_used)
                    known += (known.empty() ? "" : ", ") + k;
                fail(key, "unknown key for a " + type + " schedule; known keys: " + known);
                return;
            }
    }

    void fail(const std::string &key, std::string reason)
    {
        if (!m_error)
            m_error = Error::invalid(m_path + "." + key, std::move(reason));
    }
    const std::optional<Error> &error() const { return m_error; }

private:
    static std::string bound(double lo, bool open) { return std::string(open ? "greater than " : "at least ") + (lo == 0 ? "0" : std::to_string(lo)); }

    const nlohmann::json &m_spec;
    std::string m_path;
    std::set<std::string> m_used;
    std::optional<Error> m_error;
};

Result<std::unique_ptr<LearningRateSchedule>> create(const nlohmann::json &spec, const std::string &path)
{
    if (spec.is_number()) {
        const double lr = spec.get<double>();
        if (!std::isfinite(lr) || lr < 0)
            return Error::invalid(path, "expected a non-negative learning rate, got " + spec.dump());
        return std::unique_ptr<LearningRateSchedule>(std::make_unique<Constant>(lr));
    }
    if (!spec.is_object())
        return Error::invalid(path, "expected a number or a schedule object {\"type\": " + joined(knownSchedules()) + "}, got " + spec.dump());
    if (!spec.contains("type") || !spec["type"].is_string())
        return Error::invalid(path + ".type", "expected one of " + joined(knownSchedules()) + ", got " +
                                                   (spec.contains("type") ? spec["type"].dump() : std::string("nothing")));
    const std::string type = spec["type"].get<std::string>();
    Reader r(spec, path);
    r.accept("type");
    std::unique_ptr<LearningRateSchedule> schedule;
    if (type == "constant") {
        schedule = std::make_unique<Constant>(r.number("learning_rate", std::nullopt, 0));
    } else if (type == "step") {
        const double lr = r.number("initial_learning_rate", std::nullopt, 0);
        const std::int64_t size = r.integer("step_size", std::nullopt, 1);
        const double gamma = r.number("gamma", 0.1, 0); // torch StepLR's default
        schedule = std::make_unique<StepDecay>(lr, std::max<std::int64_t>(size, 1), gamma);
    } else if (type == "cosine") {
        const double lr = r.number("initial_learning_rate", std::nullopt, 0);
        const std::int64_t decaySteps = r.integer("decay_steps", std::nullopt, 1);
        const double alpha = r.number("alpha", 0.0, 0);
        const std::int64_t warmupSteps = r.integer("warmup_steps", 0, 0);
        const std::optional<double> target = r.optionalNumber("warmup_target");
        schedule = std::make_unique<CosineDecay>(lr, double(decaySteps), alpha, double(warmupSteps), target);
    } else if (type == "warmup") {
        const std::int64_t steps = r.integer("warmup_steps", std::nullopt, 0);
        r.accept("after");
        if (!r.error() && !spec.contains("after"))
            r.fail("after", "missing (the schedule that follows the warm-up, or a learning rate)");
        if (r.error())
            return *r.error();
        auto after = create(spec["after"], path + ".after");
        if (!after)
            return after.error();
        schedule = steps > 0 ? std::unique_ptr<LearningRateSchedule>(std::make_unique<Warmup>(steps, std::move(*after))) : std::move(*after);
    } else {
        return Error::invalid(path + ".type", "unknown schedule \"" + type + "\"; known: " + joined(knownSchedules()));
    }
    r.rejectUnknown(type);
    if (r.error())
        return *r.error();
    return schedule;
}

} // namespace

Result<std::unique_ptr<LearningRateSchedule>> createSchedule(const nlohmann::json &spec) { return create(spec, "learning_rate"); }

} // namespace sluice::train
