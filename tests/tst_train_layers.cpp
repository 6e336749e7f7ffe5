// The CPU backend's non-recurrent Keras layers, activations, initializers and layer registry:
// forward values against naive double-precision references, every input and weight gradient
// against finite differences (loss = sum(output * R) for a fixed random R), dropout masks that
// do not depend on how a batch is split, Keras's initializer statistics, and registry errors.
#include "support/gradient_check.h"

#include "train/model/activations.h"
#include "train/model/initializers.h"
#include "train/model/layer_registry.h"

#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace sluice;
using namespace sluice::train;
using sluice::test::checkGradient;
using sluice::test::randomTensor;
using nlohmann::json;

namespace {

// A layer from a JSON literal with "class_name" and "name" (style: fixtures from small text).
Result<std::unique_ptr<Layer>> tryLayer(const std::string &text)
{
    json j = json::parse(text);
    const std::string cls = j.value("class_name", ""), name = j.value("name", "layer");
    j.erase("class_name");
    j.erase("name");
    return createLayer(cls, name, j);
}

std::unique_ptr<Layer> layerFrom(const std::string &text)
{
    auto made = tryLayer(text);
    if (!made) {
        QTest::qFail(made.error().message().c_str(), __FILE__, __LINE__);
        return nullptr;
    }
    return std::move(made.value());
}

// A built layer with random inputs (batch first) and random weights.
struct Fixture
{
    std::unique_ptr<Layer> layer;
    std::vector<FloatTensor> inputs;
    std::vector<FloatTensor> params;
    Shape outSample;
    PassContext ctx;

    std::vector<const float *> paramPtrs() const
    {
        std::vector<const float *> p;
        for (const auto &t : params)
            p.push_back(t.ptr());
        return p;
    }
    std::vector<const FloatTensor *> inputPtrs() const
    {
        std::vector<const FloatTensor *> p;
        for (const auto &t : inputs)
            p.push_back(&t);
        return p;
    }
    FloatTensor forward() const
    {
        FloatTensor out;
        LayerState state;
        layer->forward(ctx, paramPtrs(), inputPtrs(), out, state);
        return out;
    }
};

Fixture fixture(const std::string &layerJson, const std::vector<Shape> &sampleShapes, std::int64_t batch, unsigned seed = 1)
{
    Fixture f;
    f.layer = layerFrom(layerJson);
    if (!f.layer)
        return f;
    auto out = f.layer->build(sampleShapes);
    if (!out) {
        QTest::qFail(out.error().message().c_str(), __FILE__, __LINE__);
        f.layer.reset();
        return f;
    }
    f.outSample = *out;
    for (const auto &s : sampleShapes) {
        Shape full{batch};
        full.insert(full.end(), s.begin(), s.end());
        f.inputs.push_back(randomTensor(full, seed++, -1.5f, 1.5f));
    }
    for (const auto &spec : f.layer->params())
        f.params.push_back(randomTensor(spec.shape, seed++, -0.8f, 0.8f));
    return f;
}

// Finite-difference check of every input's and every weight's gradient for loss = sum(out * R).
// Gradients start at 0.25 to check that backward adds into them.
void checkLayerGradients(Fixture &f, float epsilon = 1e-2f, double tolerance = 1e-2, std::size_t probes = 64)
{
    FloatTensor out;
    LayerState state;
    f.layer->forward(f.ctx, f.paramPtrs(), f.inputPtrs(), out, state);
    Shape expected{f.inputs[0].shape[0]};
    expected.insert(expected.end(), f.outSample.begin(), f.outSample.end());
    QCOMPARE(out.shape, expected);
    const FloatTensor r = randomTensor(out.shape, 99);
    auto loss = [&] {
        const FloatTensor o = f.forward();
        double sum = 0;
        for (std::size_t i = 0; i < o.size(); ++i)
            sum += double(o.data[i]) * r.data[i];
        return sum;
    };

    std::vector<FloatTensor> dIn(f.inputs.size());
    std::vector<FloatTensor *> dInPtrs;
    for (auto &t : dIn)
        dInPtrs.push_back(&t);
    std::vector<std::vector<float>> grads;
    std::vector<float *> gradPtrs;
    for (const auto &p : f.params)
        grads.emplace_back(p.size(), 0.25f);
    for (auto &g : grads)
        gradPtrs.push_back(g.data());
    f.layer->backward(f.ctx, f.paramPtrs(), f.inputPtrs(), out, r, dInPtrs, gradPtrs, state);

    for (std::size_t i = 0; i < f.inputs.size(); ++i) {
        QCOMPARE(dIn[i].shape, f.inputs[i].shape);
        const auto c = checkGradient(f.inputs[i].span(), dIn[i].span(), loss, epsilon, probes);
        QVERIFY2(c.maxRelativeError < tolerance, qPrintable(QString("input %1: ").arg(i) + c.text()));
    }
    const auto specs = f.layer->params();
    for (std::size_t p = 0; p < f.params.size(); ++p) {
        for (auto &g : grads[p])
            g -= 0.25f;
        const auto c = checkGradient(f.params[p].span(), grads[p], loss, epsilon, probes);
        QVERIFY2(c.maxRelativeError < tolerance, qPrintable(QString::fromStdString(specs[p].name + ": ") + c.text()));
    }
}

// Naive references, in double.
double activationRef(const std::string &name, double x)
{
    if (name == "relu")
        return std::max(x, 0.0);
    if (name == "gelu")
        return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    if (name == "tanh")
        return std::tanh(x);
    if (name == "sigmoid")
        return 1.0 / (1.0 + std::exp(-x));
    return x;
}

// Applies `name` to rows of `width` values in place (softmax per row).
void activateRef(const std::string &name, std::vector<double> &v, std::size_t width)
{
    if (name != "softmax") {
        for (auto &x : v)
            x = activationRef(name, x);
        return;
    }
    for (std::size_t r = 0; r < v.size() / width; ++r) {
        double sum = 0;
        for (std::size_t i = 0; i < width; ++i)
            sum += std::exp(v[r * width + i]);
        for (std::size_t i = 0; i < width; ++i)
            v[r * width + i] = std::exp(v[r * width + i]) / sum;
    }
}

std::vector<double> denseRef(const FloatTensor &x, const float *kernel, const float *bias, std::int64_t units, const std::string &activation)
{
    const std::int64_t F = x.shape.back(), R = std::int64_t(x.size()) / F;
    std::vector<double> out(std::size_t(R * units));
    for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t u = 0; u < units; ++u) {
            double z = bias ? bias[u] : 0.0;
            for (std::int64_t i = 0; i < F; ++i)
                z += double(x.data[std::size_t(r * F + i)]) * kernel[i * units + u];
            out[std::size_t(r * units + u)] = z;
        }
    activateRef(activation, out, std::size_t(units));
    return out;
}

void compareValues(const FloatTensor &got, const std::vector<double> &want, double tolerance = 1e-5)
{
    QCOMPARE(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
        QVERIFY2(std::abs(got.data[i] - want[i]) <= tolerance * (1.0 + std::abs(want[i])),
                 qPrintable(QString("element %1: got %2, expected %3").arg(i).arg(got.data[i]).arg(want[i])));
}

std::vector<float> initialized(const std::string &initializer, const Shape &shape, std::uint64_t seed = 42, const std::string &name = "d/kernel")
{
    std::vector<float> v(std::size_t(shapeCount(shape)));
    const Status s = initialize(initializer, shape, seed, name, v);
    if (!s)
        QTest::qFail(s.error().message().c_str(), __FILE__, __LINE__);
    return v;
}

double meanOf(const std::vector<float> &v)
{
    double s = 0;
    for (float x : v)
        s += x;
    return s / double(v.size());
}

double stddevOf(const std::vector<float> &v)
{
    const double m = meanOf(v);
    double s = 0;
    for (float x : v)
        s += (x - m) * (x - m);
    return std::sqrt(s / double(v.size()));
}

// Max |A^T A - I| for a rows x cols row-major matrix (columns orthonormal), or |A A^T - I|
// when `rowsOrthonormal`.
double orthogonalityError(const std::vector<float> &a, std::int64_t rows, std::int64_t cols, bool rowsOrthonormal)
{
    const std::int64_t n = rowsOrthonormal ? rows : cols, len = rowsOrthonormal ? cols : rows;
    auto at = [&](std::int64_t vec, std::int64_t k) { return double(rowsOrthonormal ? a[std::size_t(vec * cols + k)] : a[std::size_t(k * cols + vec)]); };
    double worst = 0;
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double dot = 0;
            for (std::int64_t k = 0; k < len; ++k)
                dot += at(i, k) * at(j, k);
            worst = std::max(worst, std::abs(dot - (i == j ? 1.0 : 0.0)));
        }
    return worst;
}

QString errorOf(const std::string &layerJson)
{
    auto made = tryLayer(layerJson);
    return made ? QString() : QString::fromStdString(made.error().message());
}

} // namespace

class TestTrainLayers : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // --- Dense and the activations ---------------------------------------------------------

    void denseMatchesReferenceAndGradients_data()
    {
        QTest::addColumn<QString>("activation");
        QTest::addColumn<bool>("useBias");
        for (const auto &a : knownActivations())
            QTest::newRow(a.c_str()) << QString::fromStdString(a) << true;
        QTest::newRow("linear, no bias") << "linear" << false;
        QTest::newRow("gelu, no bias") << "gelu" << false;
    }
    void denseMatchesReferenceAndGradients()
    {
        QFETCH(QString, activation);
        QFETCH(bool, useBias);
        const json config = {{"class_name", "Dense"}, {"name", "d1"}, {"units", 6}, {"activation", activation.toStdString()}, {"use_bias", useBias}};
        Fixture f = fixture(config.dump(), {{5}}, 4);
        QVERIFY(f.layer);
        QCOMPARE(f.outSample, (Shape{6}));
        const auto specs = f.layer->params();
        QCOMPARE(specs.size(), useBias ? std::size_t(2) : std::size_t(1));
        QCOMPARE(specs[0].name, std::string("kernel"));
        QCOMPARE(specs[0].shape, (Shape{5, 6}));
        QCOMPARE(specs[0].initializer, std::string("glorot_uniform"));
        if (useBias) {
            QCOMPARE(specs[1].name, std::string("bias"));
            QCOMPARE(specs[1].shape, (Shape{6}));
            QCOMPARE(specs[1].initializer, std::string("zeros"));
        }
        compareValues(f.forward(), denseRef(f.inputs[0], f.params[0].ptr(), useBias ? f.params[1].ptr() : nullptr, 6, activation.toStdString()));
        // ReLU's kink is closer to the probes than 1e-2 somewhere: a smaller step there.
        checkLayerGradients(f, activation == "relu" ? 1e-3f : 1e-2f);
    }

    void denseActsOnTheLastAxisOfAnyRank()
    {
        Fixture f = fixture(R"({"class_name": "Dense", "name": "d", "units": 3, "activation": "tanh"})", {{4, 5}}, 3);
        QVERIFY(f.layer);
        QCOMPARE(f.outSample, (Shape{4, 3}));
        const FloatTensor out = f.forward();
        QCOMPARE(out.shape, (Shape{3, 4, 3}));
        compareValues(out, denseRef(f.inputs[0], f.params[0].ptr(), f.params[1].ptr(), 3, "tanh"));
        checkLayerGradients(f);
    }

    void largeBatchesSplitOverTasks()
    {
        // Just big enough for the gemm and the row passes to split into oneTBB tasks (the
        // thresholds of cpu/gemm.cpp and layers/layer_util.cpp); fewer probes, for ASan's sake.
        Fixture dense = fixture(R"({"class_name": "Dense", "name": "d", "units": 32, "activation": "gelu"})", {{24}}, 600);
        QVERIFY(dense.layer);
        compareValues(dense.forward(), denseRef(dense.inputs[0], dense.params[0].ptr(), dense.params[1].ptr(), 32, "gelu"));
        checkLayerGradients(dense, 1e-2f, 1e-2, 16);

        Fixture norm = fixture(R"({"class_name": "LayerNormalization", "name": "ln"})", {{16}}, 1400);
        QVERIFY(norm.layer);
        checkLayerGradients(norm, 1e-2f, 1e-2, 16);

        const char *dropout = R"({"class_name": "Dropout", "name": "drop", "rate": 0.25})";
        Fixture drop = fixture(dropout, {{16}}, 4200);
        QVERIFY(drop.layer);
        const FloatTensor whole = drop.forward();
        Fixture half = fixture(dropout, {{16}}, 2100);
        QVERIFY(half.layer);
        std::copy_n(drop.inputs[0].data.begin() + 2100 * 16, 2100 * 16, half.inputs[0].data.begin());
        half.ctx.globalRowOffset = 2100;
        const FloatTensor second = half.forward();
        QVERIFY(std::equal(second.data.begin(), second.data.end(), whole.data.begin() + 2100 * 16));
        checkLayerGradients(drop, 1e-2f, 1e-2, 16);
    }

    void denseSkipsNullInputGradient()
    {
        Fixture f = fixture(R"({"class_name": "Dense", "name": "d", "units": 2})", {{3}}, 2);
        QVERIFY(f.layer);
        FloatTensor out;
        LayerState state;
        f.layer->forward(f.ctx, f.paramPtrs(), f.inputPtrs(), out, state);
        std::vector<float> gk(6, 0.0f), gb(2, 0.0f);
        std::vector<FloatTensor *> dIn{nullptr};
        std::vector<float *> grads{gk.data(), gb.data()};
        f.layer->backward(f.ctx, f.paramPtrs(), f.inputPtrs(), out, out, dIn, grads, state);
        QVERIFY(std::any_of(gk.begin(), gk.end(), [](float v) { return v != 0.0f; }));
    }

    void activationLayerMatchesReferenceAndGradients_data()
    {
        QTest::addColumn<QString>("activation");
        for (const auto &a : knownActivations())
            QTest::newRow(a.c_str()) << QString::fromStdString(a);
    }
    void activationLayerMatchesReferenceAndGradients()
    {
        QFETCH(QString, activation);
        const json config = {{"class_name", "Activation"}, {"name", "a"}, {"activation", activation.toStdString()}};
        Fixture f = fixture(config.dump(), {{2, 7}}, 3, 5);
        QVERIFY(f.layer);
        QCOMPARE(f.outSample, (Shape{2, 7}));
        std::vector<double> want(f.inputs[0].data.begin(), f.inputs[0].data.end());
        activateRef(activation.toStdString(), want, 7);
        compareValues(f.forward(), want);
        checkLayerGradients(f, activation == "relu" ? 1e-3f : 1e-2f);
    }

    void activationsAreStableForLargeInputs()
    {
        const std::vector<float> x{-100.0f, -30.0f, 0.0f, 30.0f, 100.0f};
        std::vector<float> y(x.size());
        activationForward(ActivationKind::Sigmoid, x.data(), y.data(), 5, 5);
        QCOMPARE(y[0], 0.0f);
        QCOMPARE(y[4], 1.0f);
        activationForward(ActivationKind::Softmax, x.data(), y.data(), 5, 5);
        QVERIFY(std::all_of(y.begin(), y.end(), [](float v) { return std::isfinite(v); }));
        QVERIFY(std::abs(y[4] - 1.0f) < 1e-6f);
        QVERIFY(!parseActivation("swish").ok());
        QVERIFY(parseActivation("swish").error().reason.find("relu") != std::string::npos);
        QCOMPARE(*parseActivation(""), ActivationKind::Linear);
    }

    // --- LayerNormalization ---------------------------------------------------------------

    void layerNormalizationMatchesReferenceAndGradients_data()
    {
        QTest::addColumn<bool>("center");
        QTest::addColumn<bool>("scale");
        QTest::newRow("gamma and beta") << true << true;
        QTest::newRow("beta only") << true << false;
        QTest::newRow("gamma only") << false << true;
        QTest::newRow("neither") << false << false;
    }
    void layerNormalizationMatchesReferenceAndGradients()
    {
        QFETCH(bool, center);
        QFETCH(bool, scale);
        const json config = {{"class_name", "LayerNormalization"}, {"name", "ln"}, {"center", center}, {"scale", scale}, {"epsilon", 0.01}};
        Fixture f = fixture(config.dump(), {{3, 6}}, 2);
        QVERIFY(f.layer);
        const auto specs = f.layer->params();
        QCOMPARE(specs.size(), std::size_t(center) + std::size_t(scale));
        if (center && scale) {
            QCOMPARE(specs[0].name, std::string("gamma"));
            QCOMPARE(specs[0].initializer, std::string("ones"));
            QCOMPARE(specs[1].name, std::string("beta"));
            QCOMPARE(specs[1].initializer, std::string("zeros"));
            QCOMPARE(specs[1].shape, (Shape{6}));
        }
        const float *gamma = scale ? f.params[0].ptr() : nullptr;
        const float *beta = center ? f.params[scale ? 1 : 0].ptr() : nullptr;
        const FloatTensor &x = f.inputs[0];
        std::vector<double> want(x.size());
        for (std::size_t r = 0; r < x.size() / 6; ++r) {
            double mean = 0, var = 0;
            for (std::size_t i = 0; i < 6; ++i)
                mean += x.data[r * 6 + i] / 6.0;
            for (std::size_t i = 0; i < 6; ++i)
                var += (x.data[r * 6 + i] - mean) * (x.data[r * 6 + i] - mean) / 6.0;
            for (std::size_t i = 0; i < 6; ++i)
                want[r * 6 + i] = (x.data[r * 6 + i] - mean) / std::sqrt(var + 0.01) * (gamma ? gamma[i] : 1.0) + (beta ? beta[i] : 0.0);
        }
        compareValues(f.forward(), want);
        checkLayerGradients(f);
    }

    // --- Dropout ---------------------------------------------------------------------------

    void dropoutMasksDoNotDependOnTheSplit()
    {
        auto layer = layerFrom(R"({"class_name": "Dropout", "name": "drop", "rate": 0.4})");
        QVERIFY(layer);
        QVERIFY(layer->build({{5, 3}}).ok());
        const FloatTensor whole = randomTensor({8, 5, 3}, 3);
        PassContext ctx;
        ctx.seed = 11;
        ctx.step = 4;
        FloatTensor all;
        LayerState state;
        const FloatTensor *in[] = {&whole};
        layer->forward(ctx, {}, in, all, state);

        FloatTensor joined;
        for (std::int64_t half = 0; half < 2; ++half) {
            FloatTensor part({4, 5, 3});
            std::copy_n(whole.data.begin() + half * 60, 60, part.data.begin());
            PassContext replica = ctx;
            replica.globalRowOffset = half * 4;
            FloatTensor out;
            const FloatTensor *partIn[] = {&part};
            layer->forward(replica, {}, partIn, out, state);
            joined.data.insert(joined.data.end(), out.data.begin(), out.data.end());
        }
        QVERIFY(joined.data == all.data);

        // Two workers sharing the batch element by element: worker w has global rows w, w + 2, ...
        for (std::int64_t worker = 0; worker < 2; ++worker) {
            FloatTensor part({4, 5, 3});
            for (std::int64_t r = 0; r < 4; ++r)
                std::copy_n(whole.data.begin() + (2 * r + worker) * 15, 15, part.data.begin() + r * 15);
            PassContext replica = ctx;
            replica.globalRowOffset = worker;
            replica.globalRowStride = 2;
            FloatTensor out;
            const FloatTensor *partIn[] = {&part};
            layer->forward(replica, {}, partIn, out, state);
            for (std::int64_t r = 0; r < 4; ++r)
                QVERIFY(std::equal(out.data.begin() + r * 15, out.data.begin() + (r + 1) * 15, all.data.begin() + (2 * r + worker) * 15));
        }

        // Another step draws other masks; so does another layer seed.
        PassContext next = ctx;
        next.step = 5;
        FloatTensor other;
        layer->forward(next, {}, in, other, state);
        QVERIFY(other.data != all.data);
        auto seeded = layerFrom(R"({"class_name": "Dropout", "name": "drop", "rate": 0.4, "seed": 7})");
        QVERIFY(seeded && seeded->build({{5, 3}}).ok());
        seeded->forward(ctx, {}, in, other, state);
        QVERIFY(other.data != all.data);
    }

    void dropoutDropsTheRateAndScalesTheRest()
    {
        auto layer = layerFrom(R"({"class_name": "Dropout", "name": "drop", "rate": 0.3})");
        QVERIFY(layer && layer->build({{50}}).ok());
        FloatTensor ones({400, 50});
        ones.fill(1.0f);
        PassContext ctx;
        FloatTensor out;
        LayerState state;
        const FloatTensor *in[] = {&ones};
        layer->forward(ctx, {}, in, out, state);
        const auto dropped = std::count(out.data.begin(), out.data.end(), 0.0f);
        const double fraction = double(dropped) / double(out.size());
        QVERIFY2(std::abs(fraction - 0.3) < 0.015, qPrintable(QString::number(fraction))); // 3 sigma over 20000 draws
        for (float v : out.data)
            QVERIFY(v == 0.0f || std::abs(v - 1.0f / 0.7f) < 1e-6f);

        ctx.training = false;
        const FloatTensor x = randomTensor({4, 50}, 8);
        const FloatTensor *xin[] = {&x};
        layer->forward(ctx, {}, xin, out, state);
        QVERIFY(out.data == x.data);
    }

    void dropoutGradients_data()
    {
        QTest::addColumn<bool>("training");
        QTest::newRow("training") << true;
        QTest::newRow("inference") << false;
    }
    void dropoutGradients()
    {
        QFETCH(bool, training);
        Fixture f = fixture(R"({"class_name": "Dropout", "name": "drop", "rate": 0.5})", {{3, 4}}, 4);
        QVERIFY(f.layer);
        f.ctx.training = training;
        f.ctx.step = 2;
        f.ctx.globalRowOffset = 12;
        checkLayerGradients(f);
    }

    // --- Concatenate, RepeatVector, TimeDistributed, Flatten, Reshape -----------------------

    void concatenateJoinsTheLastAxis()
    {
        Fixture f = fixture(R"({"class_name": "Concatenate", "name": "cat"})", {{2, 3}, {2, 1}, {2, 4}}, 3);
        QVERIFY(f.layer);
        QCOMPARE(f.outSample, (Shape{2, 8}));
        const FloatTensor out = f.forward();
        QCOMPARE(out.shape, (Shape{3, 2, 8}));
        for (std::int64_t r = 0; r < 6; ++r) {
            QCOMPARE(out.data[std::size_t(r * 8 + 0)], f.inputs[0].data[std::size_t(r * 3 + 0)]);
            QCOMPARE(out.data[std::size_t(r * 8 + 2)], f.inputs[0].data[std::size_t(r * 3 + 2)]);
            QCOMPARE(out.data[std::size_t(r * 8 + 3)], f.inputs[1].data[std::size_t(r)]);
            QCOMPARE(out.data[std::size_t(r * 8 + 7)], f.inputs[2].data[std::size_t(r * 4 + 3)]);
        }
        checkLayerGradients(f);

        // Keras counts the batch dimension: axis 2 is the last of [B, 2, 3].
        auto last = layerFrom(R"({"class_name": "Concatenate", "name": "cat", "axis": 2})");
        QVERIFY(last && last->build({{2, 3}, {2, 1}}).ok());
    }

    void repeatVectorRepeatsEachSample()
    {
        Fixture f = fixture(R"({"class_name": "RepeatVector", "name": "rep", "n": 3})", {{4}}, 2);
        QVERIFY(f.layer);
        QCOMPARE(f.outSample, (Shape{3, 4}));
        const FloatTensor out = f.forward();
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t t = 0; t < 3; ++t)
                for (std::size_t i = 0; i < 4; ++i)
                    QCOMPARE(out.data[(b * 3 + t) * 4 + i], f.inputs[0].data[b * 4 + i]);
        checkLayerGradients(f);
    }

    void timeDistributedDenseIsDensePerStep()
    {
        Fixture f = fixture(R"({"class_name": "TimeDistributed", "name": "td",
                                "layer": {"class_name": "Dense", "config": {"units": 3, "activation": "sigmoid"}}})",
                            {{4, 5}}, 2);
        QVERIFY(f.layer);
        QCOMPARE(f.outSample, (Shape{4, 3}));
        const auto specs = f.layer->params();
        QCOMPARE(specs.size(), std::size_t(2));
        QCOMPARE(specs[0].name, std::string("kernel"));
        QCOMPARE(specs[0].shape, (Shape{5, 3}));
        QCOMPARE(specs[1].name, std::string("bias"));
        compareValues(f.forward(), denseRef(f.inputs[0], f.params[0].ptr(), f.params[1].ptr(), 3, "sigmoid"));
        checkLayerGradients(f);
    }

    void flattenAndReshapeMoveValues()
    {
        Fixture flat = fixture(R"({"class_name": "Flatten", "name": "flat"})", {{2, 3}}, 2);
        QVERIFY(flat.layer);
        QCOMPARE(flat.outSample, (Shape{6}));
        QVERIFY(flat.forward().data == flat.inputs[0].data);
        checkLayerGradients(flat);

        Fixture re = fixture(R"({"class_name": "Reshape", "name": "re", "target_shape": [3, -1]})", {{2, 3}}, 2);
        QVERIFY(re.layer);
        QCOMPARE(re.outSample, (Shape{3, 2}));
        const FloatTensor out = re.forward();
        QCOMPARE(out.shape, (Shape{2, 3, 2}));
        QVERIFY(out.data == re.inputs[0].data);
        checkLayerGradients(re);
    }

    void buildErrorsNameTheLayerAndTheShape_data()
    {
        QTest::addColumn<QString>("layer");
        QTest::addColumn<QString>("shapes");
        QTest::addColumn<QString>("expected");
        QTest::newRow("dense scalar") << R"({"class_name": "Dense", "name": "d1", "units": 2})" << "[[]]"
                                      << "d1: Dense expects inputs with a last dimension, got shape ()";
        QTest::newRow("dense two inputs") << R"({"class_name": "Dense", "name": "d1", "units": 2})" << "[[3], [3]]" << "expects 1 input, got 2";
        QTest::newRow("concatenate axis") << R"({"class_name": "Concatenate", "name": "c", "axis": 1})" << "[[2, 3], [2, 3]]"
                                          << "supports only the last axis";
        QTest::newRow("concatenate shapes") << R"({"class_name": "Concatenate", "name": "c"})" << "[[2, 3], [4, 3]]"
                                            << "input 1 has shape (4, 3)";
        QTest::newRow("layer norm axis") << R"({"class_name": "LayerNormalization", "name": "ln", "axis": 1})" << "[[2, 3]]"
                                         << "supports only the last axis";
        QTest::newRow("repeat rank") << R"({"class_name": "RepeatVector", "name": "r", "n": 2})" << "[[2, 3]]"
                                     << "expects inputs of shape (features,) per sample, got shape (2, 3)";
        QTest::newRow("reshape count") << R"({"class_name": "Reshape", "name": "r", "target_shape": [4]})" << "[[2, 3]]"
                                       << "cannot reshape inputs of shape (2, 3)";
        QTest::newRow("time distributed rank") << R"({"class_name": "TimeDistributed", "name": "td", "layer": {"class_name": "Dense", "units": 2}})"
                                               << "[[3]]" << "td: TimeDistributed expects inputs of shape (time steps";
    }
    void buildErrorsNameTheLayerAndTheShape()
    {
        QFETCH(QString, layer);
        QFETCH(QString, shapes);
        QFETCH(QString, expected);
        auto l = layerFrom(layer.toStdString());
        QVERIFY(l);
        const auto built = l->build(json::parse(shapes.toStdString()).get<std::vector<Shape>>());
        QVERIFY(!built.ok());
        QCOMPARE(built.error().what, l->name());
        QVERIFY2(QString::fromStdString(built.error().message()).contains(expected), built.error().message().c_str());
    }

    // --- Initializers -----------------------------------------------------------------------

    void glorotUniformUsesKerasLimits()
    {
        const auto v = initialized("glorot_uniform", {64, 32});
        const double limit = std::sqrt(6.0 / (64 + 32));
        QVERIFY(std::all_of(v.begin(), v.end(), [&](float x) { return std::abs(x) <= limit; }));
        QVERIFY(*std::max_element(v.begin(), v.end()) > 0.95 * limit);
        QVERIFY(*std::min_element(v.begin(), v.end()) < -0.95 * limit);
        QVERIFY(std::abs(meanOf(v)) < 0.02);
        QVERIFY(std::abs(stddevOf(v) - limit / std::sqrt(3.0)) < 0.03 * limit);

        // Keras's fans for a rank-3 kernel (3, 4, 5): fan_in = 12, fan_out = 15.
        const auto conv = initialized("glorot_uniform", {3, 4, 5});
        const double convLimit = std::sqrt(6.0 / 27.0);
        QVERIFY(std::all_of(conv.begin(), conv.end(), [&](float x) { return std::abs(x) <= convLimit; }));
        QVERIFY(*std::max_element(conv.begin(), conv.end()) > 0.8 * convLimit);
    }

    // The other variance-scaling initializers, as Keras defines them: uniform within
    // sqrt(3 * scale / fan), scale 1 (lecun) or 2 (he) over fan_in.
    void lecunAndHeUniformUseKerasLimits()
    {
        for (const auto &[name, scale] : {std::pair{"lecun_uniform", 1.0}, std::pair{"he_uniform", 2.0}}) {
            const auto v = initialized(name, {100, 40});
            const double limit = std::sqrt(3.0 * scale / 100.0);
            QVERIFY2(std::all_of(v.begin(), v.end(), [&](float x) { return std::abs(x) <= limit; }), name);
            QVERIFY2(*std::max_element(v.begin(), v.end()) > 0.95 * limit, name);
            QVERIFY2(std::abs(stddevOf(v) - limit / std::sqrt(3.0)) < 0.03 * limit, name);
        }
    }

    void heNormalIsKerasTruncatedNormal()
    {
        const auto v = initialized("he_normal", {200, 50});
        const double stddev = std::sqrt(2.0 / 200.0);
        // Truncated at two (corrected) standard deviations; the truncated values have stddev
        // sqrt(2 / fan_in).
        const double bound = 2.0 * stddev / 0.87962566103423978;
        QVERIFY(std::all_of(v.begin(), v.end(), [&](float x) { return std::abs(x) <= bound; }));
        QVERIFY(*std::max_element(v.begin(), v.end()) > 0.97 * bound);
        QVERIFY2(std::abs(stddevOf(v) - stddev) < 0.03 * stddev, qPrintable(QString::number(stddevOf(v))));
        QVERIFY(std::abs(meanOf(v)) < 0.01 * 3);

        const auto n = initialized("random_normal", {100, 100});
        QVERIFY(std::abs(stddevOf(n) - 0.05) < 0.002);
        const auto u = initialized("random_uniform", {100, 100});
        QVERIFY(std::all_of(u.begin(), u.end(), [](float x) { return std::abs(x) <= 0.05f; }));
    }

    void orthogonalIsOrthonormal()
    {
        const auto tall = initialized("orthogonal", {12, 5});
        QVERIFY(orthogonalityError(tall, 12, 5, false) < 1e-5);
        const auto wide = initialized("orthogonal", {4, 12}); // a recurrent kernel (units, 3 units)
        QVERIFY(orthogonalityError(wide, 4, 12, true) < 1e-5);
        const auto square = initialized("orthogonal", {6, 6});
        QVERIFY(orthogonalityError(square, 6, 6, false) < 1e-5);
        QVERIFY(orthogonalityError(square, 6, 6, true) < 1e-5);
        const auto rank3 = initialized("orthogonal", {2, 3, 4}); // flattened to (6, 4)
        QVERIFY(orthogonalityError(rank3, 6, 4, false) < 1e-5);

        std::vector<float> v(4);
        QVERIFY(!initialize("orthogonal", {4}, 1, "x/bias", v).ok());
    }

    void initializersAreSeededByRunAndName()
    {
        for (const auto &name : {"glorot_uniform", "he_normal", "orthogonal", "random_uniform"}) {
            QVERIFY(initialized(name, {8, 6}, 5, "d1/kernel") == initialized(name, {8, 6}, 5, "d1/kernel"));
            QVERIFY(initialized(name, {8, 6}, 5, "d1/kernel") != initialized(name, {8, 6}, 5, "d2/kernel"));
            QVERIFY(initialized(name, {8, 6}, 5, "d1/kernel") != initialized(name, {8, 6}, 6, "d1/kernel"));
        }
        const auto zeros = initialized("zeros", {3, 2});
        QVERIFY(std::all_of(zeros.begin(), zeros.end(), [](float x) { return x == 0.0f; }));
        const auto ones = initialized("ones", {3});
        QVERIFY(std::all_of(ones.begin(), ones.end(), [](float x) { return x == 1.0f; }));

        std::vector<float> v(6);
        const Status unknown = initialize("glorot", {2, 3}, 1, "d/kernel", v);
        QVERIFY(!unknown.ok());
        QCOMPARE(unknown.error().what, std::string("d/kernel"));
        QVERIFY(unknown.error().reason.find("glorot_uniform") != std::string::npos);
        QVERIFY(!initialize("zeros", {2, 2}, 1, "d/kernel", v).ok()); // 6 values for 4
    }

    void counterRngIsReproducible()
    {
        CounterRng a(3, hashString("x")), b(3, hashString("x")), c(3, hashString("y"));
        double sum = 0;
        for (int i = 0; i < 1000; ++i) {
            const float u = a.uniform();
            QVERIFY(u >= 0.0f && u < 1.0f);
            QCOMPARE(u, b.uniform());
            sum += u;
        }
        QVERIFY(std::abs(sum / 1000 - 0.5) < 0.05);
        QVERIFY(a.nextU64() != c.nextU64());
        QVERIFY(mixHash(1, 2) != mixHash(2, 1));
        QVERIFY(mixHash(0, 0) != mixHash(0, 1));
    }

    // --- Registry ---------------------------------------------------------------------------

    void registryErrors_data()
    {
        QTest::addColumn<QString>("layer");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("unknown class") << R"({"class_name": "Conv3D", "name": "c"})"
                                       << QStringList{"c: unknown layer class 'Conv3D'", "Dense", "Dropout", "LayerNormalization", "TimeDistributed"};
        QTest::newRow("unknown key") << R"({"class_name": "Dense", "name": "d", "units": 2, "unitz": 3})"
                                     << QStringList{"d: Dense parameter 'unitz': unknown key for Dense; known keys: ", "units", "kernel_initializer"};
        QTest::newRow("missing units") << R"({"class_name": "Dense", "name": "d"})" << QStringList{"'units': missing (a whole number at least 1)"};
        QTest::newRow("units string") << R"({"class_name": "Dense", "name": "d", "units": "4"})" << QStringList{"'units': expected a whole number at least 1, got \"4\""};
        QTest::newRow("units zero") << R"({"class_name": "Dense", "name": "d", "units": 0})" << QStringList{"'units': expected a whole number at least 1, got 0"};
        QTest::newRow("use_bias int") << R"({"class_name": "Dense", "name": "d", "units": 2, "use_bias": 1})" << QStringList{"'use_bias': expected true or false, got 1"};
        QTest::newRow("activation int") << R"({"class_name": "Dense", "name": "d", "units": 2, "activation": 3})"
                                        << QStringList{"'activation': expected a string, got 3"};
        QTest::newRow("unknown activation") << R"({"class_name": "Dense", "name": "d", "units": 2, "activation": "swish"})"
                                            << QStringList{"'activation'", "swish", "gelu", "softmax"};
        QTest::newRow("unknown initializer") << R"({"class_name": "Dense", "name": "d", "units": 2, "kernel_initializer": "xavier"})"
                                             << QStringList{"'kernel_initializer'", "xavier", "glorot_uniform", "orthogonal"};
        QTest::newRow("rate string") << R"({"class_name": "Dropout", "name": "p", "rate": "half"})" << QStringList{"'rate': expected a number in [0, 1), got \"half\""};
        QTest::newRow("rate one") << R"({"class_name": "Dropout", "name": "p", "rate": 1})" << QStringList{"'rate': expected a number in [0, 1), got 1"};
        QTest::newRow("seed float") << R"({"class_name": "Dropout", "name": "p", "rate": 0.1, "seed": 1.5})" << QStringList{"'seed': expected a whole number, got 1.5"};
        QTest::newRow("repeat n") << R"({"class_name": "RepeatVector", "name": "r", "n": 0})" << QStringList{"'n': expected a whole number at least 1, got 0"};
        QTest::newRow("target_shape") << R"({"class_name": "Reshape", "name": "r", "target_shape": "3"})" << QStringList{"'target_shape': expected a list of whole numbers, got \"3\""};
        QTest::newRow("epsilon") << R"({"class_name": "LayerNormalization", "name": "ln", "epsilon": -1})" << QStringList{"'epsilon': expected a number greater than 0, got -1"};
        QTest::newRow("axis list") << R"({"class_name": "LayerNormalization", "name": "ln", "axis": [1, 2]})" << QStringList{"single axis"};
        QTest::newRow("wrapped LSTM") << R"({"class_name": "TimeDistributed", "name": "td", "layer": {"class_name": "LSTM", "units": 2}})"
                                      << QStringList{"'layer'", "only a Dense", "LSTM"};
        QTest::newRow("wrapped bad Dense") << R"({"class_name": "TimeDistributed", "name": "td", "layer": {"class_name": "Dense"}})"
                                           << QStringList{"td: TimeDistributed parameter 'layer'", "'units': missing"};
        QTest::newRow("not an object") << R"({"class_name": "Flatten", "name": "f", "config": [1]})" << QStringList{"'config'"};
        QTest::newRow("frozen") << R"({"class_name": "Dense", "name": "d", "config": {"units": 2, "trainable": false}})" << QStringList{"trainable"};
        QTest::newRow("dtype") << R"({"class_name": "Dense", "name": "d", "config": {"units": 2, "dtype": "float16"}})" << QStringList{"float32"};
    }
    void registryErrors()
    {
        QFETCH(QString, layer);
        QFETCH(QStringList, expected);
        const QString error = errorOf(layer.toStdString());
        QVERIFY2(!error.isEmpty(), "the layer was created");
        for (const auto &part : expected)
            QVERIFY2(error.contains(part), qPrintable(error + " lacks " + part));
    }

    void registryAcceptsKerasConfigs()
    {
        // A Keras get_config() object nested under "config", with its bookkeeping keys.
        auto dense = layerFrom(R"({"class_name": "Dense", "name": "d", "config": {"name": "d", "trainable": true, "dtype": "float32",
                                   "units": 3, "activation": null, "use_bias": false, "kernel_initializer": "he_normal"}})");
        QVERIFY(dense);
        QCOMPARE(dense->className(), std::string("Dense"));
        QVERIFY(dense->build({{2}}).ok());
        QCOMPARE(dense->params().size(), std::size_t(1));
        QCOMPARE(dense->params()[0].initializer, std::string("he_normal"));
        // Keras 3's dtype policy object, and an integral float as Python's json may write it.
        QVERIFY(layerFrom(R"({"class_name": "Dense", "name": "d", "units": 3.0,
                              "dtype": {"class_name": "DTypePolicy", "config": {"name": "float32"}}})"));
        QVERIFY(layerFrom(R"({"class_name": "LayerNormalization", "name": "ln", "axis": [-1]})"));
    }

    void everyKnownLayerIsDocumentedAndCreatable()
    {
        const std::map<std::string, std::string> minimal = {
            {"Activation", R"({"activation": "relu"})"},
            {"Concatenate", "{}"},
            {"Dense", R"({"units": 2})"},
            {"Dropout", R"({"rate": 0.5})"},
            {"Flatten", "{}"},
            {"LayerNormalization", "{}"},
            {"RepeatVector", R"({"n": 2})"},
            {"Reshape", R"({"target_shape": [-1]})"},
            {"TimeDistributed", R"({"layer": {"class_name": "Dense", "units": 2}})"},
            {"GRU", R"({"units": 2})"},
            {"LSTM", R"({"units": 2})"},
            {"BatchNormalization", "{}"},
            {"Conv1D", R"({"filters": 2, "kernel_size": 3})"},
            {"Conv2D", R"({"filters": 2, "kernel_size": 3})"},
            {"MaxPooling1D", "{}"},
            {"MaxPooling2D", "{}"},
            {"AveragePooling1D", "{}"},
            {"AveragePooling2D", "{}"},
            {"GlobalAveragePooling1D", "{}"},
            {"GlobalAveragePooling2D", "{}"},
            {"GlobalMaxPooling1D", "{}"},
            {"GlobalMaxPooling2D", "{}"},
            {"Embedding", R"({"input_dim": 10, "output_dim": 3})"},
        };
        QVERIFY(knownLayers().size() >= 9);
        for (const auto &info : knownLayers()) {
            QVERIFY2(!info.doc.empty(), info.className.c_str());
            for (const auto &p : info.params)
                QVERIFY2(!p.name.empty() && !p.type.empty() && !p.doc.empty(), (info.className + "." + p.name).c_str());
            const auto it = minimal.find(info.className);
            QVERIFY2(it != minimal.end(), ("no minimal config for " + info.className).c_str());
            auto made = createLayer(info.className, "x", json::parse(it->second));
            QVERIFY2(made.ok(), made.ok() ? "" : made.error().message().c_str());
            QCOMPARE((*made)->className(), info.className);
            QCOMPARE((*made)->name(), std::string("x"));
        }
    }
};

QTEST_GUILESS_MAIN(TestTrainLayers)
#include "tst_train_layers.moc"
