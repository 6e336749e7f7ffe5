// Keras optimizers and learning-rate schedules: trajectories over a fixed gradient sequence
// against PyTorch where the update rule is the same (torch_reference.json) and against Keras 3
// itself (keras_reference.json); a naive double reference written here from the Keras equations;
// chunked parallel updates equal to small serial ones; slots for checkpoints; clipByGlobalNorm;
// schedules against their formulas and Keras's CosineDecay; spec errors.
#include "train/objectives/optimizer.h"
#include "support/gradient_check.h"
#include "support/train_reference.h"

#include <QtTest>

#include <cmath>
#include <numbers>

using namespace sluice;
using namespace sluice::train;
using nlohmann::json;

namespace {

std::unique_ptr<Optimizer> makeOptimizer(const json &spec, std::size_t n)
{
    auto opt = createOptimizer(spec, n);
    if (!opt.ok())
        qWarning("%s", opt.error().message().c_str());
    return opt.ok() ? std::move(*opt) : nullptr;
}

std::unique_ptr<LearningRateSchedule> makeSchedule(const json &spec)
{
    auto s = createSchedule(spec);
    if (!s.ok())
        qWarning("%s", s.error().message().c_str());
    return s.ok() ? std::move(*s) : nullptr;
}

// ---- a naive double reference, written from the Keras 3 update_step equations --------------

struct NaiveOptimizer
{
    json spec;
    std::vector<double> a, b, c; // slots

    double get(const char *key, double fallback) const { return spec.value(key, fallback); }

    void step(std::vector<double> &w, const std::vector<float> &g, double lr, int t)
    {
        const std::string type = spec["type"];
        const std::size_t n = w.size();
        a.resize(n, 0.0), b.resize(n, 0.0), c.resize(n, 0.0);
        const double wd = get("weight_decay", type == "adamw" ? 0.004 : 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            w[i] -= w[i] * wd * lr;
            const double gi = g[i];
            if (type == "sgd") {
                const double mu = get("momentum", 0.0);
                a[i] = mu * a[i] - lr * gi;
                w[i] += spec.value("nesterov", false) ? mu * a[i] - lr * gi : (mu == 0 ? -lr * gi : a[i]);
            } else if (type == "adam" || type == "adamw") {
                const double b1 = get("beta_1", 0.9), b2 = get("beta_2", 0.999), eps = get("epsilon", 1e-7);
                a[i] = b1 * a[i] + (1 - b1) * gi;
                b[i] = b2 * b[i] + (1 - b2) * gi * gi;
                c[i] = std::max(c[i], b[i]);
                const double v = spec.value("amsgrad", false) ? c[i] : b[i];
                const double alpha = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
                w[i] -= alpha * a[i] / (std::sqrt(v) + eps);
            } else { // rmsprop
                const double rho = get("rho", 0.9), eps = get("epsilon", 1e-7), mu = get("momentum", 0.0);
                a[i] = rho * a[i] + (1 - rho) * gi * gi;
                double denominator = a[i] + eps;
                if (spec.value("centered", false)) {
                    c[i] = rho * c[i] + (1 - rho) * gi;
                    denominator = a[i] - c[i] * c[i] + eps;
                }
                const double increment = lr * gi / std::sqrt(denominator);
                b[i] = mu * b[i] + increment;
                w[i] -= mu > 0 ? b[i] : increment;
            }
        }
    }
};

// Keras's CosineDecay, written out again.
double kerasCosine(double lr, double decaySteps, double alpha, double warmupSteps, std::optional<double> target, double step)
{
    auto decay = [&](double s, double from) { return from * ((1 - alpha) * 0.5 * (1 + std::cos(std::numbers::pi * s / decaySteps)) + alpha); };
    if (!target)
        return decay(std::min(step, decaySteps), lr);
    step = std::min(step, decaySteps + warmupSteps);
    if (step < warmupSteps)
        return (*target - lr) * step / warmupSteps + lr;
    return decay(step - warmupSteps, *target);
}

} // namespace

class TestTrainOptimizers : public QObject
{
    Q_OBJECT
private:
    // Runs a reference case: optimizer spec, learning rate (number or schedule), initial weights,
    // gradients per step and the expected weights after each step.
    static void checkTrajectory(const json &c, double tolerance)
    {
        const auto initial = c["initial"].get<std::vector<float>>();
        auto opt = makeOptimizer(c["optimizer"], initial.size());
        auto schedule = makeSchedule(c["learning_rate"]);
        QVERIFY(opt && schedule);
        std::vector<float> w = initial;
        const json &grads = c["grads"], &trajectory = c["trajectory"];
        for (std::size_t s = 0; s < grads.size(); ++s) {
            const auto g = grads[s].get<std::vector<float>>();
            opt->apply(w, g, float(schedule->at(std::int64_t(s))), std::int64_t(s) + 1);
            const auto want = trajectory[s].get<std::vector<double>>();
            for (std::size_t i = 0; i < w.size(); ++i)
                QVERIFY2(std::abs(w[i] - want[i]) <= tolerance * std::max(1.0, std::abs(want[i])),
                         qPrintable(QString("step %1, weight %2: %3, expected %4").arg(s + 1).arg(i).arg(w[i], 0, 'g', 9).arg(want[i], 0, 'g', 9)));
        }
    }

    static void addRows(const char *file)
    {
        QTest::addColumn<int>("index");
        const json &cases = test::trainReference(file)["optimizers"];
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i]["name"].get<std::string>().c_str()) << int(i);
    }

private Q_SLOTS:
    void matchesTorch_data() { addRows("torch_reference.json"); }
    void matchesTorch()
    {
        QFETCH(int, index);
        checkTrajectory(test::trainReference("torch_reference.json")["optimizers"][std::size_t(index)], 2e-6);
    }

    void matchesKeras_data() { addRows("keras_reference.json"); }
    void matchesKeras()
    {
        QFETCH(int, index);
        // Keras computes Adam's bias corrections in float32, where 1 - 0.999f^t keeps only ~5
        // digits (alpha off by ~6e-6 relative at t = 1); Sluice computes them in double. With
        // Keras's float32 corrections an emulation matches Keras to 3e-10; here they agree to 1e-5.
        checkTrajectory(test::trainReference("keras_reference.json")["optimizers"][std::size_t(index)], 1e-5);
    }

    void matchesNaiveKerasReference_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::newRow("sgd") << R"({"type": "sgd"})";
        QTest::newRow("sgd momentum") << R"({"type": "sgd", "momentum": 0.9})";
        QTest::newRow("sgd nesterov decay") << R"({"type": "sgd", "momentum": 0.5, "nesterov": true, "weight_decay": 0.1})";
        QTest::newRow("adam") << R"({"type": "adam"})";
        QTest::newRow("adam eps") << R"({"type": "adam", "epsilon": 0.1, "beta_1": 0.5, "beta_2": 0.9})";
        QTest::newRow("adam amsgrad") << R"({"type": "adam", "amsgrad": true})";
        QTest::newRow("adamw") << R"({"type": "adamw"})";
        QTest::newRow("adamw amsgrad") << R"({"type": "adamw", "weight_decay": 0.3, "amsgrad": true, "epsilon": 1e-3})";
        QTest::newRow("rmsprop") << R"({"type": "rmsprop", "epsilon": 0.01})";
        QTest::newRow("rmsprop momentum") << R"({"type": "rmsprop", "momentum": 0.9, "rho": 0.5})";
        QTest::newRow("rmsprop centered") << R"({"type": "rmsprop", "centered": true, "epsilon": 1e-3})";
        QTest::newRow("rmsprop centered momentum") << R"({"type": "rmsprop", "centered": true, "momentum": 0.3})";
    }
    void matchesNaiveKerasReference()
    {
        QFETCH(QString, spec);
        const json s = json::parse(spec.toStdString());
        const std::size_t n = 300;
        auto opt = makeOptimizer(s, n);
        QVERIFY(opt);
        FloatTensor w = test::randomTensor({std::int64_t(n)}, 3);
        std::vector<double> ref(w.data.begin(), w.data.end());
        NaiveOptimizer naive{s, {}, {}, {}};
        for (int t = 1; t <= 6; ++t) {
            const FloatTensor g = test::randomTensor({std::int64_t(n)}, 100u + unsigned(t));
            const float lr = 0.02f * float(t);
            opt->apply(w.span(), g.span(), lr, t);
            naive.step(ref, g.data, double(lr), t);
        }
        for (std::size_t i = 0; i < n; ++i)
            QVERIFY2(std::abs(w.data[i] - ref[i]) <= 1e-5 * std::max(1.0, std::abs(ref[i])),
                     qPrintable(QString("weight %1: %2, expected %3").arg(i).arg(w.data[i], 0, 'g', 9).arg(ref[i], 0, 'g', 9)));
    }

    void chunkedUpdatesEqualSerialOnes_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::newRow("sgd nesterov") << R"({"type": "sgd", "momentum": 0.9, "nesterov": true})";
        QTest::newRow("adamw amsgrad") << R"({"type": "adamw", "amsgrad": true})";
        QTest::newRow("rmsprop centered momentum") << R"({"type": "rmsprop", "centered": true, "momentum": 0.5})";
    }
    void chunkedUpdatesEqualSerialOnes()
    {
        // Several 64K chunks run by oneTBB; each element's update must not depend on it: the
        // same elements optimised on their own (one small serial call) come out bit for bit equal.
        QFETCH(QString, spec);
        const json s = json::parse(spec.toStdString());
        const std::size_t n = 3 * 65536 + 17, small = 1000;
        auto big = makeOptimizer(s, n);
        auto head = makeOptimizer(s, small), tail = makeOptimizer(s, small);
        FloatTensor w = test::randomTensor({std::int64_t(n)}, 8);
        std::vector<float> wHead(w.data.begin(), w.data.begin() + small), wTail(w.data.end() - small, w.data.end());
        for (int t = 1; t <= 3; ++t) {
            const FloatTensor g = test::randomTensor({std::int64_t(n)}, 50u + unsigned(t));
            big->apply(w.span(), g.span(), 0.01f, t);
            head->apply(wHead, g.span().subspan(0, small), 0.01f, t);
            tail->apply(wTail, g.span().subspan(n - small), 0.01f, t);
        }
        QVERIFY(std::equal(wHead.begin(), wHead.end(), w.data.begin()));
        QVERIFY(std::equal(wTail.begin(), wTail.end(), w.data.end() - small));
    }

    void slots_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QStringList>("names");
        QTest::newRow("sgd") << R"({"type": "sgd"})" << QStringList{};
        QTest::newRow("sgd momentum") << R"({"type": "sgd", "momentum": 0.5})" << QStringList{"momentum"};
        QTest::newRow("adam") << R"("adam")" << QStringList{"m", "v"};
        QTest::newRow("adam amsgrad") << R"({"type": "adam", "amsgrad": true})" << QStringList{"m", "v", "v_hat"};
        QTest::newRow("adamw") << R"({"type": "adamw"})" << QStringList{"m", "v"};
        QTest::newRow("rmsprop") << R"({"type": "rmsprop"})" << QStringList{"velocity"};
        QTest::newRow("rmsprop all") << R"({"type": "rmsprop", "momentum": 0.5, "centered": true})"
                                     << QStringList{"velocity", "momentum", "average_gradient"};
    }
    void slots()
    {
        // Named, sized, and a checkpoint restored by writing into them continues the run exactly.
        QFETCH(QString, spec);
        QFETCH(QStringList, names);
        const json s = json::parse(spec.toStdString());
        const std::size_t n = 40;
        auto opt = makeOptimizer(s, n);
        QVERIFY(opt);
        QCOMPARE(opt->slots().size(), std::size_t(names.size()));
        for (std::size_t i = 0; i < opt->slots().size(); ++i) {
            QCOMPARE(QString::fromStdString(opt->slots()[i].name), names[int(i)]);
            QCOMPARE(opt->slots()[i].values.size(), n);
        }
        FloatTensor w = test::randomTensor({std::int64_t(n)}, 1);
        for (int t = 1; t <= 2; ++t)
            opt->apply(w.span(), test::randomTensor({std::int64_t(n)}, unsigned(t)).span(), 0.1f, t);
        auto restored = makeOptimizer(s, n);
        for (std::size_t i = 0; i < opt->slots().size(); ++i)
            restored->slots()[i].values = opt->slots()[i].values;
        std::vector<float> w2 = w.data;
        const FloatTensor g = test::randomTensor({std::int64_t(n)}, 9);
        opt->apply(w.span(), g.span(), 0.1f, 3);
        restored->apply(w2, g.span(), 0.1f, 3);
        QCOMPARE(w2, w.data);
        QCOMPARE(opt->name(), s.is_string() ? s.get<std::string>() : s["type"].get<std::string>());
    }

    void clipByGlobalNorm()
    {
        std::vector<float> g{3.0f, 0.0f, -4.0f};
        QCOMPARE(train::clipByGlobalNorm(g, 1.0), 5.0);
        QCOMPARE(g, (std::vector<float>{0.6f, 0.0f, -0.8f}));
        std::vector<float> small{0.3f, 0.4f};
        QVERIFY(std::abs(train::clipByGlobalNorm(small, 1.0) - 0.5) < 1e-7);
        QCOMPARE(small, (std::vector<float>{0.3f, 0.4f})); // below the norm: untouched
        // Over several chunks: the norm of the whole buffer, computed in double.
        FloatTensor big = test::randomTensor({200000}, 4);
        double sum = 0;
        for (float x : big.data)
            sum += double(x) * x;
        const double norm = train::clipByGlobalNorm(big.span(), 2.0);
        QVERIFY(std::abs(norm - std::sqrt(sum)) <= 1e-9 * norm);
        double after = 0;
        for (float x : big.data)
            after += double(x) * x;
        QVERIFY(std::abs(std::sqrt(after) - 2.0) < 1e-5);
        // A non-finite norm is reported and the gradient left for the trainer to skip.
        std::vector<float> bad{1.0f, INFINITY};
        QVERIFY(std::isinf(train::clipByGlobalNorm(bad, 1.0)));
        QCOMPARE(bad[0], 1.0f);
        QCOMPARE(train::clipByGlobalNorm({}, 1.0), 0.0);
    }

    void kerasCosineDecay_data()
    {
        QTest::addColumn<int>("index");
        const json &cases = test::trainReference("keras_reference.json")["schedules"];
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i]["schedule"].dump().c_str()) << int(i);
    }
    void kerasCosineDecay()
    {
        QFETCH(int, index);
        const json &c = test::trainReference("keras_reference.json")["schedules"][std::size_t(index)];
        auto schedule = makeSchedule(c["schedule"]);
        QVERIFY(schedule);
        const auto steps = c["steps"].get<std::vector<std::int64_t>>();
        const auto values = c["values"].get<std::vector<double>>();
        for (std::size_t i = 0; i < steps.size(); ++i)
            QVERIFY2(std::abs(schedule->at(steps[i]) - values[i]) <= 1e-6 * std::max(1e-2, std::abs(values[i])) + 1e-9,
                     qPrintable(QString("step %1: %2, Keras %3").arg(steps[i]).arg(schedule->at(steps[i])).arg(values[i])));
    }

    void schedules()
    {
        QCOMPARE(makeSchedule(0.003)->at(12345), 0.003);
        QCOMPARE(makeSchedule(R"({"type": "constant", "learning_rate": 0.5})"_json)->at(7), 0.5);
        auto step = makeSchedule(R"({"type": "step", "initial_learning_rate": 0.8, "step_size": 10, "gamma": 0.5})"_json);
        QCOMPARE(step->at(0), 0.8);
        QCOMPARE(step->at(9), 0.8);
        QCOMPARE(step->at(10), 0.4);
        QCOMPARE(step->at(35), 0.1);
        QCOMPARE(makeSchedule(R"({"type": "step", "initial_learning_rate": 1, "step_size": 2})"_json)->at(2), 0.1); // gamma 0.1
        // Cosine with warm-up against the formula, at steps in and around each phase.
        const json cos = R"({"type": "cosine", "initial_learning_rate": 0.01, "decay_steps": 1000, "alpha": 0.05,
                             "warmup_steps": 100, "warmup_target": 0.3})"_json;
        auto cosine = makeSchedule(cos);
        for (std::int64_t s : {0, 1, 50, 99, 100, 101, 600, 1099, 1100, 5000})
            QVERIFY(std::abs(cosine->at(s) - kerasCosine(0.01, 1000, 0.05, 100, 0.3, double(s))) < 1e-12);
        QVERIFY(std::abs(cosine->at(100) - 0.3) < 1e-12);
        QVERIFY(std::abs(cosine->at(1100) - 0.3 * 0.05) < 1e-12);
        auto plain = makeSchedule(R"({"type": "cosine", "initial_learning_rate": 0.1, "decay_steps": 10})"_json);
        QVERIFY(std::abs(plain->at(5) - 0.05) < 1e-12);
        QCOMPARE(plain->at(10), 0.0);
        // Linear warm-up in front of another schedule: lr * (step + 1) / warmup_steps, then after(step - warmup).
        auto warm = makeSchedule(R"({"type": "warmup", "warmup_steps": 4, "after": {"type": "step", "initial_learning_rate": 0.2,
                                     "step_size": 3, "gamma": 0.5}})"_json);
        QCOMPARE(warm->at(0), 0.05);
        QCOMPARE(warm->at(3), 0.2);
        QCOMPARE(warm->at(4), 0.2);
        QCOMPARE(warm->at(7), 0.1);
        auto warmConst = makeSchedule(R"({"type": "warmup", "warmup_steps": 0, "after": 0.25})"_json);
        QCOMPARE(warmConst->at(0), 0.25);
    }

    void optimizerErrors_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("reason");
        QTest::newRow("unknown type") << R"({"type": "adagrad"})" << "optimizer.type" << "unknown optimizer \"adagrad\"; known: sgd, adam, adamw, rmsprop";
        QTest::newRow("no type") << R"({"learning_rate": 0.1})" << "optimizer.type" << "expected one of sgd, adam, adamw, rmsprop, got nothing";
        QTest::newRow("not an object") << "3" << "optimizer" << "expected an object with a \"type\" or an optimizer name, got 3";
        QTest::newRow("beta_1") << R"({"type": "adam", "beta_1": 1.0})" << "optimizer.beta_1" << "expected a number in [0, 1), got 1.0";
        QTest::newRow("momentum type") << R"({"type": "sgd", "momentum": "0.9"})" << "optimizer.momentum" << "expected a number in [0, 1], got \"0.9\"";
        QTest::newRow("nesterov type") << R"({"type": "sgd", "nesterov": 1})" << "optimizer.nesterov" << "expected true or false, got 1";
        QTest::newRow("epsilon") << R"({"type": "rmsprop", "epsilon": -1})" << "optimizer.epsilon" << "expected a number at least 0, got -1";
        QTest::newRow("clipnorm") << R"({"type": "adam", "global_clipnorm": 0})" << "optimizer.global_clipnorm" << "expected a number greater than 0, got 0";
        QTest::newRow("unknown key") << R"({"type": "sgd", "clipvalue": 1})" << "optimizer.clipvalue"
                                     << "unknown key for sgd; known keys: global_clipnorm, learning_rate, momentum, nesterov, type, weight_decay";
        QTest::newRow("key of another optimizer") << R"({"type": "sgd", "beta_1": 0.9})" << "optimizer.beta_1" << "unknown key for sgd";
        QTest::newRow("learning rate type") << R"({"type": "adam", "learning_rate": "fast"})" << "optimizer.learning_rate"
                                            << "expected a number or a schedule object";
        QTest::newRow("negative learning rate") << R"({"type": "adam", "learning_rate": -0.1})" << "optimizer.learning_rate"
                                                << "expected a non-negative number or a schedule object, got -0.1";
    }
    void optimizerErrors()
    {
        QFETCH(QString, spec);
        QFETCH(QString, what);
        QFETCH(QString, reason);
        auto opt = createOptimizer(json::parse(spec.toStdString()), 10);
        QVERIFY(!opt.ok());
        QCOMPARE(QString::fromStdString(opt.error().what), what);
        QVERIFY2(QString::fromStdString(opt.error().reason).startsWith(reason), opt.error().reason.c_str());
    }

    void optimizerSpecsAccepted()
    {
        // learning_rate as a number or a schedule object (checked by createSchedule, not here),
        // global_clipnorm and weight_decay on every optimizer, null meaning the default.
        for (const char *spec : {R"({"type": "sgd", "learning_rate": 0.1, "global_clipnorm": 1.0})",
                                 R"({"type": "adam", "learning_rate": {"type": "cosine", "initial_learning_rate": 0.1, "decay_steps": 10}})",
                                 R"({"type": "rmsprop", "weight_decay": 0.01, "global_clipnorm": null})", R"("adamw")"}) {
            auto opt = createOptimizer(json::parse(spec), 4);
            QVERIFY2(opt.ok(), opt.ok() ? spec : opt.error().message().c_str());
        }
        QCOMPARE(knownOptimizers(), (std::vector<std::string>{"sgd", "adam", "adamw", "rmsprop"}));
    }

    void scheduleErrors_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("reason");
        QTest::newRow("unknown type") << R"({"type": "exponential"})" << "learning_rate.type" << "unknown schedule \"exponential\"; known: constant, step, cosine, warmup";
        QTest::newRow("no type") << R"({"decay_steps": 3})" << "learning_rate.type" << "expected one of constant, step, cosine, warmup, got nothing";
        QTest::newRow("string") << R"("0.1")" << "learning_rate" << "expected a number or a schedule object";
        QTest::newRow("negative") << "-1" << "learning_rate" << "expected a non-negative learning rate, got -1";
        QTest::newRow("decay_steps missing") << R"({"type": "cosine", "initial_learning_rate": 0.1})" << "learning_rate.decay_steps" << "missing";
        QTest::newRow("decay_steps zero") << R"({"type": "cosine", "initial_learning_rate": 0.1, "decay_steps": 0})" << "learning_rate.decay_steps"
                                          << "expected a whole number at least 1, got 0";
        QTest::newRow("decay_steps fraction") << R"({"type": "cosine", "initial_learning_rate": 0.1, "decay_steps": 2.5})" << "learning_rate.decay_steps"
                                              << "expected a whole number at least 1, got 2.5";
        QTest::newRow("alpha") << R"({"type": "cosine", "initial_learning_rate": 0.1, "decay_steps": 5, "alpha": "x"})" << "learning_rate.alpha"
                               << "expected a number at least 0";
        QTest::newRow("step_size") << R"({"type": "step", "initial_learning_rate": 0.1})" << "learning_rate.step_size" << "missing";
        QTest::newRow("unknown key") << R"({"type": "step", "initial_learning_rate": 0.1, "step_size": 3, "decay": 2})" << "learning_rate.decay"
                                     << "unknown key for a step schedule; known keys: gamma, initial_learning_rate, step_size, type";
        QTest::newRow("nested") << R"({"type": "warmup", "warmup_steps": 5, "after": {"type": "cosine", "initial_learning_rate": 0.1}})"
                                << "learning_rate.after.decay_steps" << "missing";
        QTest::newRow("warmup without after") << R"({"type": "warmup", "warmup_steps": 5})" << "learning_rate.after" << "missing";
    }
    void scheduleErrors()
    {
        QFETCH(QString, spec);
        QFETCH(QString, what);
        QFETCH(QString, reason);
        auto s = createSchedule(json::parse(spec.toStdString()));
        QVERIFY(!s.ok());
        QCOMPARE(QString::fromStdString(s.error().what), what);
        QVERIFY2(QString::fromStdString(s.error().reason).startsWith(reason), s.error().reason.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTrainOptimizers)
#include "tst_train_optimizers.moc"
