// GRU and LSTM of the CPU backend: forward against a naive double-precision reference written
// straight from Keras's equations, every gradient (inputs, kernel, recurrent kernel, bias)
// against finite differences, Keras's weight shapes, the vectorised gate activations against
// std::, the configuration and shape errors, and the unit-forget bias initializer.
#include "support/gradient_check.h"
#include "train/model/initializers.h"
#include "train/model/layer_registry.h"
#include "train/layers/recurrent/recurrent_internal.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace sluice;
using namespace sluice::train;
using nlohmann::json;
using test::randomTensor;

namespace {

struct Case
{
    std::int64_t B = 3, T = 4, F = 5, U = 6;
    bool returnSequences = false;
    bool useBias = true;
    std::string activation = "tanh", recurrentActivation = "sigmoid";

    json config() const
    {
        return {{"units", U},
                {"return_sequences", returnSequences},
                {"use_bias", useBias},
                {"activation", activation},
                {"recurrent_activation", recurrentActivation}};
    }
};

double apply(const std::string &activation, double x) { return activation == "tanh" ? std::tanh(x) : 1.0 / (1.0 + std::exp(-x)); }

// A built layer with random weights in [-0.5, 0.5) (kept away from saturation) and inputs in [-1, 1).
struct Fixture
{
    Case c;
    std::unique_ptr<Layer> layer;
    std::vector<FloatTensor> params;
    FloatTensor x;
    LayerState state;

    Fixture(bool lstm, Case cs) : c(std::move(cs))
    {
        auto made = createLayer(lstm ? "LSTM" : "GRU", "enc", c.config());
        if (!made.ok())
            qFatal("%s", made.error().message().c_str());
        layer = std::move(*made);
        auto shape = layer->build({{c.T, c.F}});
        if (!shape.ok())
            qFatal("%s", shape.error().message().c_str());
        unsigned seed = 11;
        for (const auto &p : layer->params())
            params.push_back(randomTensor(p.shape, seed++, -0.5f, 0.5f));
        x = randomTensor({c.B, c.T, c.F}, 7);
    }

    std::vector<const float *> paramPtrs() const
    {
        std::vector<const float *> p;
        for (const auto &t : params)
            p.push_back(t.ptr());
        return p;
    }

    FloatTensor forward()
    {
        FloatTensor out;
        const FloatTensor *in[] = {&x};
        const auto p = paramPtrs();
        layer->forward(PassContext{}, p, in, out, state);
        return out;
    }
};

// Keras GRU (reset_after=True), in double, scalar loops. Returns [B, T, U] or [B, U].
std::vector<double> referenceGru(const Fixture &f)
{
    const auto &c = f.c;
    const std::int64_t B = c.B, T = c.T, F = c.F, U = c.U, G = 3 * U;
    const float *W = f.params[0].ptr(), *R = f.params[1].ptr();
    const float *bIn = c.useBias ? f.params[2].ptr() : nullptr, *bRec = c.useBias ? f.params[2].ptr() + G : nullptr;
    std::vector<double> out;
    for (std::int64_t b = 0; b < B; ++b) {
        std::vector<double> h(std::size_t(U), 0.0);
        for (std::int64_t t = 0; t < T; ++t) {
            std::vector<double> xp(static_cast<std::size_t>(G)), hp(static_cast<std::size_t>(G));
            for (std::int64_t k = 0; k < G; ++k) {
                double sx = bIn ? bIn[k] : 0.0, sh = bRec ? bRec[k] : 0.0;
                for (std::int64_t i = 0; i < F; ++i)
                    sx += double(f.x.data[std::size_t((b * T + t) * F + i)]) * W[i * G + k];
                for (std::int64_t i = 0; i < U; ++i)
                    sh += h[std::size_t(i)] * R[i * G + k];
                xp[std::size_t(k)] = sx;
                hp[std::size_t(k)] = sh;
            }
            std::vector<double> next(static_cast<std::size_t>(U));
            for (std::int64_t j = 0; j < U; ++j) {
                const auto J = std::size_t(j), Uz = std::size_t(U);
                const double z = apply(c.recurrentActivation, xp[J] + hp[J]);
                const double r = apply(c.recurrentActivation, xp[Uz + J] + hp[Uz + J]);
                const double hh = apply(c.activation, xp[2 * Uz + J] + r * hp[2 * Uz + J]);
                next[J] = z * h[J] + (1 - z) * hh;
            }
            h = next;
            if (c.returnSequences || t == T - 1)
                out.insert(out.end(), h.begin(), h.end());
        }
    }
    return out;
}

// Keras LSTM, in double, scalar loops.
std::vector<double> referenceLstm(const Fixture &f)
{
    const auto &c = f.c;
    const std::int64_t B = c.B, T = c.T, F = c.F, U = c.U, G = 4 * U;
    const float *W = f.params[0].ptr(), *R = f.params[1].ptr(), *bias = c.useBias ? f.params[2].ptr() : nullptr;
    std::vector<double> out;
    for (std::int64_t b = 0; b < B; ++b) {
        std::vector<double> h(std::size_t(U), 0.0), cell(std::size_t(U), 0.0);
        for (std::int64_t t = 0; t < T; ++t) {
            std::vector<double> pre(static_cast<std::size_t>(G));
            for (std::int64_t k = 0; k < G; ++k) {
                double s = bias ? bias[k] : 0.0;
                for (std::int64_t i = 0; i < F; ++i)
                    s += double(f.x.data[std::size_t((b * T + t) * F + i)]) * W[i * G + k];
                for (std::int64_t i = 0; i < U; ++i)
                    s += h[std::size_t(i)] * R[i * G + k];
                pre[std::size_t(k)] = s;
            }
            for (std::int64_t j = 0; j < U; ++j) {
                const auto J = std::size_t(j), Uz = std::size_t(U);
                const double i = apply(c.recurrentActivation, pre[J]);
                const double fg = apply(c.recurrentActivation, pre[Uz + J]);
                const double g = apply(c.activation, pre[2 * Uz + J]);
                const double o = apply(c.recurrentActivation, pre[3 * Uz + J]);
                cell[J] = fg * cell[J] + i * g;
                h[J] = o * apply(c.activation, cell[J]);
            }
            if (c.returnSequences || t == T - 1)
                out.insert(out.end(), h.begin(), h.end());
        }
    }
    return out;
}

void addCases()
{
    QTest::addColumn<bool>("lstm");
    QTest::addColumn<bool>("returnSequences");
    QTest::addColumn<bool>("useBias");
    QTest::addColumn<QString>("activation");
    QTest::addColumn<QString>("recurrentActivation");
    QTest::addColumn<int>("steps");
    for (bool lstm : {false, true}) {
        const char *cls = lstm ? "lstm" : "gru";
        for (bool seq : {false, true}) {
            const QByteArray tag = QByteArray(cls) + (seq ? " sequences" : " last");
            QTest::newRow(tag.constData()) << lstm << seq << true << "tanh" << "sigmoid" << 4;
        }
        QTest::newRow((QByteArray(cls) + " no bias").constData()) << lstm << true << false << "tanh" << "sigmoid" << 4;
        QTest::newRow((QByteArray(cls) + " swapped activations").constData()) << lstm << true << true << "sigmoid" << "tanh" << 3;
        QTest::newRow((QByteArray(cls) + " one step").constData()) << lstm << false << true << "tanh" << "sigmoid" << 1;
    }
}

Case fetchCase()
{
    QFETCH(bool, returnSequences);
    QFETCH(bool, useBias);
    QFETCH(QString, activation);
    QFETCH(QString, recurrentActivation);
    QFETCH(int, steps);
    Case c;
    c.returnSequences = returnSequences;
    c.useBias = useBias;
    c.activation = activation.toStdString();
    c.recurrentActivation = recurrentActivation.toStdString();
    c.T = steps;
    return c;
}

} // namespace

class TestTrainRecurrent : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void forwardMatchesReference_data() { addCases(); }
    void forwardMatchesReference()
    {
        QFETCH(bool, lstm);
        Fixture f(lstm, fetchCase());
        const FloatTensor out = f.forward();
        const Shape expected = f.c.returnSequences ? Shape{f.c.B, f.c.T, f.c.U} : Shape{f.c.B, f.c.U};
        QCOMPARE(out.shape, expected);
        const std::vector<double> ref = lstm ? referenceLstm(f) : referenceGru(f);
        QCOMPARE(out.size(), ref.size());
        double worst = 0;
        for (std::size_t i = 0; i < ref.size(); ++i)
            worst = std::max(worst, std::abs(double(out.data[i]) - ref[i]));
        QVERIFY2(worst < 2e-6, qPrintable(QString("max abs error %1").arg(worst)));
    }

    // loss = sum(output * Rw): every analytic gradient against central differences.
    void gradientsMatchFiniteDifferences_data() { addCases(); }
    void gradientsMatchFiniteDifferences()
    {
        QFETCH(bool, lstm);
        Fixture f(lstm, fetchCase());
        FloatTensor out = f.forward();
        const FloatTensor weights = randomTensor(out.shape, 99);
        const auto loss = [&] {
            const FloatTensor o = f.forward();
            double s = 0;
            for (std::size_t i = 0; i < o.size(); ++i)
                s += double(o.data[i]) * weights.data[i];
            return s;
        };
        loss();
        std::vector<FloatTensor> grads;
        std::vector<float *> gradPtrs;
        for (const auto &p : f.params)
            grads.emplace_back(p.shape).zero();
        for (auto &g : grads)
            gradPtrs.push_back(g.ptr());
        FloatTensor dx;
        FloatTensor *dInputs[] = {&dx};
        const FloatTensor *in[] = {&f.x};
        const auto p = f.paramPtrs();
        f.layer->backward(PassContext{}, p, in, out, weights, dInputs, gradPtrs, f.state);
        QCOMPARE(dx.shape, f.x.shape);

        auto check = [&](const char *what, std::span<float> values, const FloatTensor &analytic) {
            const auto r = test::checkGradient(values, analytic.span(), loss);
            QVERIFY2(r.maxRelativeError < 1e-2, qPrintable(QString(what) + ": " + r.text()));
        };
        check("inputs", f.x.span(), dx);
        const auto specs = f.layer->params();
        for (std::size_t i = 0; i < specs.size(); ++i)
            check(specs[i].name.c_str(), f.params[i].span(), grads[i]);
    }

    // Backward adds into the parameter gradients, writes (not adds) dInputs and skips null ones.
    void backwardAccumulatesAndSkipsNullInputs_data()
    {
        QTest::addColumn<bool>("lstm");
        QTest::newRow("gru") << false;
        QTest::newRow("lstm") << true;
    }
    void backwardAccumulatesAndSkipsNullInputs()
    {
        QFETCH(bool, lstm);
        Case c;
        c.returnSequences = true;
        Fixture f(lstm, c);
        const FloatTensor out = f.forward();
        const FloatTensor dOut = randomTensor(out.shape, 5);
        std::vector<FloatTensor> once, twice;
        for (const auto &p : f.params) {
            once.emplace_back(p.shape).zero();
            twice.emplace_back(p.shape).zero();
        }
        auto ptrs = [](std::vector<FloatTensor> &g) {
            std::vector<float *> v;
            for (auto &t : g)
                v.push_back(t.ptr());
            return v;
        };
        const FloatTensor *in[] = {&f.x};
        const auto p = f.paramPtrs();
        FloatTensor dx1, dx2;
        FloatTensor *d1[] = {&dx1};
        f.layer->backward(PassContext{}, p, in, out, dOut, d1, ptrs(once), f.state);
        FloatTensor *none[] = {nullptr};
        f.layer->backward(PassContext{}, p, in, out, dOut, none, ptrs(twice), f.state);
        FloatTensor *d2[] = {&dx2};
        dx2.resize({1});
        dx2.fill(42.0f);
        f.layer->backward(PassContext{}, p, in, out, dOut, d2, ptrs(twice), f.state);
        QCOMPARE(dx2.shape, dx1.shape);
        QCOMPARE(dx2.data, dx1.data);
        for (std::size_t i = 0; i < once.size(); ++i)
            for (std::size_t j = 0; j < once[i].size(); ++j)
                QCOMPARE(twice[i].data[j], 2.0f * once[i].data[j]);
    }

    // One LayerState serves batches of different sizes (the last batch of an epoch is smaller).
    void stateIsReusedAcrossBatchSizes()
    {
        for (bool lstm : {false, true}) {
            Case c;
            c.returnSequences = true;
            Fixture f(lstm, c);
            f.forward();
            f.x = randomTensor({2, c.T, c.F}, 3);
            const FloatTensor reused = f.forward();
            LayerState fresh;
            std::swap(fresh, f.state);
            const FloatTensor clean = f.forward();
            QCOMPARE(reused.shape, (Shape{2, c.T, c.U}));
            QCOMPARE(reused.data, clean.data);

            // An empty batch: empty output, empty input gradient, parameter gradients untouched.
            f.x = FloatTensor({0, c.T, c.F});
            const FloatTensor empty = f.forward();
            QCOMPARE(empty.shape, (Shape{0, c.T, c.U}));
            std::vector<FloatTensor> grads;
            std::vector<float *> gradPtrs;
            for (const auto &p : f.params)
                grads.emplace_back(p.shape).fill(1.0f);
            for (auto &g : grads)
                gradPtrs.push_back(g.ptr());
            FloatTensor dx;
            FloatTensor *dInputs[] = {&dx};
            const FloatTensor *in[] = {&f.x};
            f.layer->backward(PassContext{}, f.paramPtrs(), in, empty, empty, dInputs, gradPtrs, f.state);
            QCOMPARE(dx.shape, f.x.shape);
            for (const auto &g : grads)
                QVERIFY(std::all_of(g.data.begin(), g.data.end(), [](float v) { return v == 1.0f; }));
        }
    }

    void shapesAndParamsAsKeras()
    {
        auto gru = createLayer("GRU", "g", json{{"units", 6}});
        QVERIFY(gru.ok());
        QCOMPARE((*gru)->className(), std::string("GRU"));
        QCOMPARE((*gru)->build({{4, 5}}).value(), (Shape{6}));
        auto gp = (*gru)->params();
        QCOMPARE(gp.size(), std::size_t(3));
        QCOMPARE(gp[0].name, std::string("kernel"));
        QCOMPARE(gp[0].shape, (Shape{5, 18}));
        QCOMPARE(gp[0].initializer, std::string("glorot_uniform"));
        QCOMPARE(gp[1].name, std::string("recurrent_kernel"));
        QCOMPARE(gp[1].shape, (Shape{6, 18}));
        QCOMPARE(gp[1].initializer, std::string("orthogonal"));
        QCOMPARE(gp[2].name, std::string("bias"));
        QCOMPARE(gp[2].shape, (Shape{2, 18}));
        QCOMPARE(gp[2].initializer, std::string("zeros"));

        auto lstm = createLayer("LSTM", "l", json{{"units", 6}, {"return_sequences", true}, {"kernel_initializer", "he_normal"}});
        QVERIFY(lstm.ok());
        QCOMPARE((*lstm)->className(), std::string("LSTM"));
        QCOMPARE((*lstm)->build({{4, 5}}).value(), (Shape{4, 6}));
        auto lp = (*lstm)->params();
        QCOMPARE(lp.size(), std::size_t(3));
        QCOMPARE(lp[0].shape, (Shape{5, 24}));
        QCOMPARE(lp[0].initializer, std::string("he_normal"));
        QCOMPARE(lp[1].shape, (Shape{6, 24}));
        QCOMPARE(lp[2].name, std::string("bias"));
        QCOMPARE(lp[2].shape, (Shape{24}));
        QCOMPARE(lp[2].initializer, std::string(detail::kLstmUnitForgetBias));

        auto plain = createLayer("LSTM", "l", json{{"units", 6}, {"unit_forget_bias", false}});
        QVERIFY(plain.ok());
        QVERIFY((*plain)->build({{4, 5}}).ok());
        QCOMPARE((*plain)->params()[2].initializer, std::string("zeros"));

        auto noBias = createLayer("GRU", "g", json{{"units", 6}, {"use_bias", false}});
        QVERIFY(noBias.ok());
        QVERIFY((*noBias)->build({{4, 5}}).ok());
        QCOMPARE((*noBias)->params().size(), std::size_t(2));
    }

    void configErrors_data()
    {
        QTest::addColumn<bool>("lstm");
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("expected");
        // Messages as for every layer: "<layer>: <class> parameter '<key>': <problem>".
        QTest::newRow("no units") << false << R"({})" << "enc: GRU parameter 'units': missing (a whole number at least 1)";
        QTest::newRow("zero units") << false << R"({"units": 0})" << "enc: GRU parameter 'units': expected a whole number at least 1, got 0";
        QTest::newRow("units as text") << true << R"({"units": "8"})"
                                       << "enc: LSTM parameter 'units': expected a whole number at least 1, got \"8\"";
        QTest::newRow("unknown key") << false << R"({"units": 4, "time_major": true})"
                                     << "enc: GRU parameter 'time_major': unknown key for GRU; known keys: activation, bias_initializer, ";
        // Keras's own keys with other than Keras's neutral value (tst_keras_config has the rest).
        QTest::newRow("recurrent dropout") << false << R"({"units": 4, "dropout": 0.1})"
                                           << "enc: GRU parameter 'dropout': 0 only: recurrent dropout is not supported (a Dropout layer is), got 0.1";
        QTest::newRow("gru key on lstm") << true << R"({"units": 4, "reset_after": true})"
                                         << "enc: LSTM parameter 'reset_after': unknown key for LSTM";
        QTest::newRow("lstm key on gru") << false << R"({"units": 4, "unit_forget_bias": true})"
                                         << "enc: GRU parameter 'unit_forget_bias': unknown key for GRU";
        QTest::newRow("relu") << false << R"({"units": 4, "activation": "relu"})"
                              << "enc: GRU parameter 'activation': expected \"tanh\" or \"sigmoid\" (the activations recurrent layers "
                                 "support), got \"relu\"";
        QTest::newRow("linear as null") << false << R"({"units": 4, "activation": null})"
                                        << "enc: GRU parameter 'activation': expected \"tanh\" or \"sigmoid\" (the activations recurrent "
                                           "layers support), got null (linear)";
        QTest::newRow("hard sigmoid") << true << R"({"units": 4, "recurrent_activation": "hard_sigmoid"})"
                                      << "enc: LSTM parameter 'recurrent_activation': expected \"tanh\" or \"sigmoid\"";
        QTest::newRow("bool as text") << false << R"({"units": 4, "return_sequences": "yes"})"
                                      << "enc: GRU parameter 'return_sequences': expected true or false, got \"yes\"";
        QTest::newRow("reset_after false") << false << R"({"units": 4, "reset_after": false})"
                                           << "enc: GRU parameter 'reset_after': only true is supported";
        QTest::newRow("initializer object") << true << R"({"units": 4, "kernel_initializer": {"class_name": "Identity"}})"
                                            << "enc: LSTM parameter 'kernel_initializer': initializer Identity is not supported (known: GlorotUniform, ";
        QTest::newRow("unknown initializer") << false << R"({"units": 4, "recurrent_initializer": "identity"})"
                                             << "enc: GRU parameter 'recurrent_initializer': unknown initializer 'identity' (known: glorot_uniform, ";
        QTest::newRow("unit forget with random bias") << true << R"({"units": 4, "bias_initializer": "random_normal"})"
                                                      << "enc: LSTM parameter 'bias_initializer': expected \"zeros\" or \"ones\" with "
                                                         "unit_forget_bias, got \"random_normal\"";
        QTest::newRow("not an object") << false << R"([4])" << "enc: GRU parameters must be a JSON object, got [4]";
    }
    void configErrors()
    {
        QFETCH(bool, lstm);
        QFETCH(QString, config);
        QFETCH(QString, expected);
        const json cfg = json::parse(config.toStdString());
        auto made = createLayer(lstm ? "LSTM" : "GRU", "enc", cfg);
        QVERIFY(!made.ok());
        QCOMPARE(made.error().what, std::string("enc"));
        QVERIFY2(made.error().message().find(expected.toStdString()) != std::string::npos, made.error().message().c_str());
    }

    void buildErrors()
    {
        struct Bad
        {
            std::vector<Shape> inputs;
            std::string expected;
        };
        const std::vector<Bad> cases = {
            {{{32}}, "GRU expects inputs of shape (timesteps, features), got (32,)"},
            {{{2, 3, 4}}, "GRU expects inputs of shape (timesteps, features), got (2, 3, 4)"},
            {{{-1, 8}}, "GRU needs a known number of timesteps, got inputs of shape (None, 8)"},
            {{{4, 0}}, "GRU needs a known, non-zero number of features"},
            {{{4, 5}, {4, 5}}, "GRU expects 1 input, got 2"},
        };
        for (const auto &bad : cases) {
            auto gru = createLayer("GRU", "enc", json{{"units", 3}});
            QVERIFY(gru.ok());
            auto r = (*gru)->build(bad.inputs);
            QVERIFY(!r.ok());
            QCOMPARE(r.error().what, std::string("enc"));
            QVERIFY2(r.error().reason.find(bad.expected) != std::string::npos, r.error().message().c_str());
        }
        auto lstm = createLayer("LSTM", "dec", json{{"units", 3}});
        QVERIFY(lstm.ok());
        auto r = (*lstm)->build({{7}});
        QVERIFY(!r.ok());
        QCOMPARE(r.error().message(), std::string("dec: LSTM expects inputs of shape (timesteps, features), got (7,)"));
    }

    // The vectorised tanh and sigmoid against std:: over the range gates see, the tails and
    // special values (lengths not a multiple of the vector width exercise the padded tail).
    void gateActivationsMatchStd()
    {
        std::vector<float> xs;
        for (int i = -40000; i <= 40000; ++i)
            xs.push_back(float(i) * 5e-4f);
        for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 0.6249f, 0.625f, -0.625f, 44.0f, 87.5f, 88.5f, 100.0f, -100.0f, 1e30f, -1e30f})
            xs.push_back(v);
        xs.push_back(std::numeric_limits<float>::infinity());
        xs.push_back(-std::numeric_limits<float>::infinity());
        for (auto kind : {GateActivation::Tanh, GateActivation::Sigmoid}) {
            std::vector<float> y = xs;
            detail::activate(kind, y.data(), std::int64_t(y.size()));
            for (std::size_t i = 0; i < xs.size(); ++i) {
                const double ref = kind == GateActivation::Tanh ? std::tanh(double(xs[i])) : 1.0 / (1.0 + std::exp(-double(xs[i])));
                const double err = std::abs(double(y[i]) - ref);
                QVERIFY2(err <= 4e-7 * std::abs(ref) + 1e-30,
                         qPrintable(QString("f(%1) = %2, expected %3").arg(double(xs[i]), 0, 'g', 9).arg(double(y[i]), 0, 'g', 9).arg(ref, 0, 'g', 9)));
            }
            float nan[] = {std::numeric_limits<float>::quiet_NaN(), 1.0f, 2.0f};
            detail::activate(kind, nan, 3);
            QVERIFY(std::isnan(nan[0]));
            QVERIFY(!std::isnan(nan[1]));
        }
    }

    // unit_forget_bias: the LSTM's bias initializer gives ones to the forget gate only, as Keras.
    void lstmUnitForgetBiasInitializer()
    {
        auto lstm = createLayer("LSTM", "l", json{{"units", 3}});
        QVERIFY(lstm.ok());
        QVERIFY((*lstm)->build({{4, 5}}).ok());
        const ParamSpec bias = (*lstm)->params()[2];
        std::vector<float> values(12, -7.0f);
        const Status s = initialize(bias.initializer, bias.shape, 1, "l/bias", values);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message().c_str());
        QCOMPARE(values, (std::vector<float>{0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0}));

        std::vector<float> odd(6);
        const Status bad = initialize(detail::kLstmUnitForgetBias, {6}, 1, "l/bias", odd);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().what, std::string("l/bias"));
    }
};

QTEST_GUILESS_MAIN(TestTrainRecurrent)
#include "tst_train_recurrent.moc"
