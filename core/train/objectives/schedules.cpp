// Learning-rate schedules: a constant, step decay, Keras's CosineDecay (with its warm-up) and a
// linear warm-up in front of any schedule. Steps are Keras's optimizer.iterations: the number of
// updates already applied. Schedules are immutable; at() may be called from any thread.
#include "train/objectives/optimizer.h"

#include "train/model/spec_reader.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>

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

Result<std::unique_ptr<LearningRateSchedule>> create(const nlohmann::json &spec, const std::string &path)
{
    if (spec.is_number()) {
        const double lr = spec.get<double>();
        if (!std::isfinite(lr) || lr < 0)
            return Error::invalid(path, "expected a non-negative learning rate, got " + spec.dump());
        return std::unique_ptr<LearningRateSchedule>(std::make_unique<Constant>(lr));
    }
    if (!spec.is_object())
        return Error::invalid(path, "expected a number or a schedule object {\"type\": " + joinNames(knownSchedules()) + "}, got " + spec.dump());
    if (!spec.contains("type") || !spec["type"].is_string())
        return Error::invalid(path + ".type", "expected one of " + joinNames(knownSchedules()) + ", got " +
                                                   (spec.contains("type") ? spec["type"].dump() : std::string("nothing")));
    const std::string type = spec["type"].get<std::string>();
    SpecReader r(spec, path);
    const Interval nonNegative = Interval::atLeast(0);
    r.accept("type");
    std::unique_ptr<LearningRateSchedule> schedule;
    if (type == "constant") {
        schedule = std::make_unique<Constant>(r.number("learning_rate", std::nullopt, nonNegative));
    } else if (type == "step") {
        const double lr = r.number("initial_learning_rate", std::nullopt, nonNegative);
        const std::int64_t size = r.integer("step_size", std::nullopt, 1);
        const double gamma = r.number("gamma", 0.1, nonNegative); // torch StepLR's default
        schedule = std::make_unique<StepDecay>(lr, std::max<std::int64_t>(size, 1), gamma);
    } else if (type == "cosine") {
        const double lr = r.number("initial_learning_rate", std::nullopt, nonNegative);
        const std::int64_t decaySteps = r.integer("decay_steps", std::nullopt, 1);
        const double alpha = r.number("alpha", 0.0, nonNegative);
        const std::int64_t warmupSteps = r.integer("warmup_steps", 0, 0);
        const std::optional<double> target = r.optionalNumber("warmup_target", nonNegative);
        schedule = std::make_unique<CosineDecay>(lr, double(decaySteps), alpha, double(warmupSteps), target);
    } else if (type == "warmup") {
        const std::int64_t steps = r.integer("warmup_steps", std::nullopt, 0);
        r.accept("after");
        if (!r.failure() && !spec.contains("after"))
            r.fail("after", "missing (the schedule that follows the warm-up, or a learning rate)");
        if (auto e = r.error())
            return *e;
        auto after = create(spec["after"], path + ".after");
        if (!after)
            return after.error();
        schedule = steps > 0 ? std::unique_ptr<LearningRateSchedule>(std::make_unique<Warmup>(steps, std::move(*after))) : std::move(*after);
    } else {
        return Error::invalid(path + ".type", "unknown schedule \"" + type + "\"; known: " + joinNames(knownSchedules()));
    }
    r.rejectUnknown("a " + type + " schedule");
    if (auto e = r.error())
        return *e;
    return schedule;
}

} // namespace

Result<std::unique_ptr<LearningRateSchedule>> createSchedule(const nlohmann::json &spec) { return create(spec, "learning_rate"); }

} // namespace sluice::train
