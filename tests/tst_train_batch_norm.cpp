// Keras's BatchNormalization on the CPU backend (train/layers/batch_normalization.cpp): training
// normalises each channel (the last axis) by the batch's mean and biased variance over every
// other axis, inference by the moving statistics; the input, gamma and beta gradients against
// finite differences; the moving statistics' updates that backward writes into their
// "gradient" (share * (1 - momentum) * (batch statistic - moving), share = rows * lossScale);
// the same bits on one thread and four; Keras's weights (order, shapes, trainable flags,
// initializers); a Model's layout of its non-trainable arrays after every trainable one; and
// the configuration and build errors.
#include "support/gradient_check.h"

#include "pipeline/engine/element.h"
#include "train/model/layer_registry.h"
#include "train/model/model.h"

#include <QTemporaryDir>
#include <QtTest>

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>

using namespace sluice;
using namespace sluice::train;
using nlohmann::json;
using test::checkGradient;
using test::randomTensor;

namespace {

// --- Fixtures ---------------------------------------------------------------------------------

// A built BatchNormalization layer, inputs [B, ..., C] and random weights (moving variance
// positive). Each channel of the inputs gets its own scale and offset, so that a layer mixing up
// channels, or not subtracting the mean, shows.
struct Fixture
{
    json config;
    std::unique_ptr<Layer> layer;
    FloatTensor x;
    std::vector<ParamSpec> specs;
    std::vector<FloatTensor> params;

    std::int64_t channels() const { return x.shape.back(); }
    // The values of the parameter called `name`; null when the layer has none (center/scale off).
    float *param(const std::string &name)
    {
        for (std::size_t i = 0; i < specs.size(); ++i)
            if (specs[i].name == name)
                return params[i].ptr();
        return nullptr;
    }
    const float *param(const std::string &name) const { return const_cast<Fixture *>(this)->param(name); }
    std::vector<const float *> paramPtrs() const
    {
        std::vector<const float *> p;
        for (const auto &t : params)
            p.push_back(t.ptr());
        return p;
    }
    FloatTensor forward(const PassContext &ctx, LayerState &state) const
    {
        FloatTensor out;
        const FloatTensor *in[] = {&x};
        layer->forward(ctx, paramPtrs(), in, out, state);
        return out;
    }
    FloatTensor forward(const PassContext &ctx) const
    {
        LayerState state;
        return forward(ctx, state);
    }
};

// Fails the current test (and returns a fixture without a layer) when the layer cannot be made
// or built.
Fixture fixture(const json &config, const Shape &shape, unsigned seed = 1)
{
    Fixture f;
    f.config = config;
    auto made = createLayer("BatchNormalization", "bn", config);
    if (!made) {
        QTest::qFail(made.error().message().c_str(), __FILE__, __LINE__);
        return f;
    }
    const Shape sample(shape.begin() + 1, shape.end());
    auto built = (*made)->build({sample});
    if (!built) {
        QTest::qFail(built.error().message().c_str(), __FILE__, __LINE__);
        return f;
    }
    if (*built != sample) {
        QTest::qFail("BatchNormalization changed the shape", __FILE__, __LINE__);
        return f;
    }
    f.layer = std::move(*made);
    f.x = randomTensor(shape, seed++, -1.0f, 1.0f);
    const std::int64_t C = shape.back();
    for (std::size_t i = 0; i < f.x.size(); ++i) {
        const auto c = float(std::int64_t(i) % C);
        f.x.data[i] = f.x.data[i] * (1.0f + 0.5f * c) + 0.3f * c - 0.2f;
    }
    f.specs = f.layer->params();
    for (const auto &spec : f.specs) {
        const bool variance = spec.name == "moving_variance", gamma = spec.name == "gamma";
        f.params.push_back(randomTensor(spec.shape, seed++, variance ? 0.3f : gamma ? 0.5f : -0.5f, variance ? 2.0f : gamma ? 1.5f : 0.5f));
    }
    return f;
}

Fixture fetchFixture()
{
    QFETCH(QString, config);
    QFETCH(QString, shape);
    return fixture(json::parse(config.toStdString()), json::parse(shape.toStdString()).get<Shape>());
}

void addRows()
{
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("shape");
    QTest::newRow("rank 2") << "{}" << "[7, 3]";
    QTest::newRow("rank 4") << "{}" << "[2, 3, 4, 5]";
    // Epsilon large enough to matter: it belongs inside the square root.
    QTest::newRow("rank 3, epsilon 0.5") << R"({"epsilon": 0.5})" << "[3, 4, 2]";
    QTest::newRow("rank 4, no center") << R"({"center": false})" << "[2, 3, 3, 4]";
    QTest::newRow("rank 2, no scale") << R"({"scale": false})" << "[6, 3]";
    QTest::newRow("rank 4, neither") << R"({"center": false, "scale": false, "momentum": 0.5})" << "[2, 2, 2, 3]";
}

// --- The naive reference, in double -----------------------------------------------------------

// Per channel (the last axis): the mean and the biased variance over every other axis.
struct Moments
{
    std::vector<double> mean, variance;
};

Moments moments(const FloatTensor &x)
{
    const std::size_t C = std::size_t(x.shape.back()), N = x.size() / C;
    Moments m{std::vector<double>(C, 0.0), std::vector<double>(C, 0.0)};
    for (std::size_t i = 0; i < x.size(); ++i)
        m.mean[i % C] += x.data[i];
    for (auto &v : m.mean)
        v /= double(N);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double d = x.data[i] - m.mean[i % C];
        m.variance[i % C] += d * d;
    }
    for (auto &v : m.variance)
        v /= double(N);
    return m;
}

// gamma * (x - mean) / sqrt(variance + epsilon) + beta, gamma and beta optional.
std::vector<double> normalizeRef(const Fixture &f, const std::vector<double> &mean, const std::vector<double> &variance)
{
    const double eps = f.config.value("epsilon", 1e-3);
    const std::size_t C = std::size_t(f.channels());
    const float *gamma = f.param("gamma"), *beta = f.param("beta");
    std::vector<double> out(f.x.size());
    for (std::size_t i = 0; i < f.x.size(); ++i) {
        const std::size_t c = i % C;
        double v = (f.x.data[i] - mean[c]) / std::sqrt(variance[c] + eps);
        if (gamma)
            v *= gamma[c];
        if (beta)
            v += beta[c];
        out[i] = v;
    }
    return out;
}

void compareValues(const FloatTensor &got, const std::vector<double> &want, double tolerance = 1e-5)
{
    QCOMPARE(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
        QVERIFY2(std::abs(got.data[i] - want[i]) <= tolerance * (1.0 + std::abs(want[i])),
                 qPrintable(QString("element %1: got %2, expected %3").arg(i).arg(got.data[i], 0, 'g', 9).arg(want[i], 0, 'g', 9)));
}

// What one training forward and backward pass produce (loss = sum(out * R) for a fixed R).
struct Passes
{
    std::vector<float> out, dx;
    std::vector<std::vector<float>> grads;
};

Passes runPasses(const Fixture &f, const PassContext &ctx)
{
    Passes p;
    LayerState state;
    const FloatTensor out = f.forward(ctx, state);
    const FloatTensor r = randomTensor(out.shape, 5);
    FloatTensor dx;
    FloatTensor *dInputs[] = {&dx};
    std::vector<float *> gradPtrs;
    for (const auto &t : f.params)
        p.grads.emplace_back(t.size(), 0.0f);
    for (auto &g : p.grads)
        gradPtrs.push_back(g.data());
    const FloatTensor *in[] = {&f.x};
    f.layer->backward(ctx, f.paramPtrs(), in, out, r, dInputs, gradPtrs, state);
    p.out = out.data;
    p.dx = dx.data;
    return p;
}

Passes runInArena(int threads, const Fixture &f, const PassContext &ctx)
{
    oneapi::tbb::task_arena arena(threads);
    return arena.execute([&] { return runPasses(f, ctx); });
}

pipeline::ElementSpec regressionSpec()
{
    pipeline::ElementSpec spec;
    spec.features.push_back({"x", pipeline::ValueType{}, {8, 6}});
    spec.features.push_back({"y", pipeline::ValueType{}, {8, 2}});
    return spec;
}

} // namespace

class TestTrainBatchNorm : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // --- Values ---------------------------------------------------------------------------------

    void trainingForwardMatchesReference_data() { addRows(); }
    void trainingForwardMatchesReference()
    {
        Fixture f = fetchFixture();
        QVERIFY(f.layer);
        const Moments m = moments(f.x);
        const FloatTensor out = f.forward(PassContext{});
        QCOMPARE(out.shape, f.x.shape);
        compareValues(out, normalizeRef(f, m.mean, m.variance));

        // Training ignores the moving statistics: other values give the same output bit for bit.
        for (float &v : std::span<float>(f.param("moving_mean"), std::size_t(f.channels())))
            v += 3.0f;
        for (float &v : std::span<float>(f.param("moving_variance"), std::size_t(f.channels())))
            v *= 5.0f;
        QCOMPARE(f.forward(PassContext{}).data, out.data);
    }

    void inferenceUsesMovingStatistics_data() { addRows(); }
    void inferenceUsesMovingStatistics()
    {
        const Fixture f = fetchFixture();
        QVERIFY(f.layer);
        const std::size_t C = std::size_t(f.channels());
        const float *mm = f.param("moving_mean"), *mv = f.param("moving_variance");
        QVERIFY(mm && mv);
        PassContext ctx;
        ctx.training = false;
        const FloatTensor out = f.forward(ctx);
        QCOMPARE(out.shape, f.x.shape);
        compareValues(out, normalizeRef(f, std::vector<double>(mm, mm + C), std::vector<double>(mv, mv + C)));
    }

    // --- Gradients ------------------------------------------------------------------------------

    // Training mode, loss = sum(out * R): the input's gradient runs through the batch's mean and
    // variance too. The moving statistics are left out: what backward writes for them is their
    // update, not a derivative (movingStatisticsUpdates checks it). Gradients start at 0.25 to
    // check that backward adds into them.
    void gradientsMatchFiniteDifferences_data() { addRows(); }
    void gradientsMatchFiniteDifferences()
    {
        Fixture f = fetchFixture();
        QVERIFY(f.layer);
        PassContext ctx;
        ctx.lossScale = 0.125; // moving updates on: they must not leak into gamma's or beta's gradients
        LayerState state;
        const FloatTensor out = f.forward(ctx, state);
        const FloatTensor r = randomTensor(out.shape, 99);
        auto loss = [&] {
            const FloatTensor o = f.forward(ctx);
            double sum = 0;
            for (std::size_t i = 0; i < o.size(); ++i)
                sum += double(o.data[i]) * r.data[i];
            return sum;
        };
        FloatTensor dx;
        FloatTensor *dInputs[] = {&dx};
        std::vector<std::vector<float>> grads;
        std::vector<float *> gradPtrs;
        for (const auto &p : f.params)
            grads.emplace_back(p.size(), 0.25f);
        for (auto &g : grads)
            gradPtrs.push_back(g.data());
        const FloatTensor *in[] = {&f.x};
        f.layer->backward(ctx, f.paramPtrs(), in, out, r, dInputs, gradPtrs, state);

        QCOMPARE(dx.shape, f.x.shape);
        const auto c = checkGradient(f.x.span(), dx.span(), loss, 1e-2f, 64);
        QVERIFY2(c.maxRelativeError < 1e-2, qPrintable("input: " + c.text()));
        int checked = 0;
        for (std::size_t p = 0; p < f.params.size(); ++p) {
            if (!f.specs[p].trainable)
                continue;
            for (auto &g : grads[p])
                g -= 0.25f;
            const auto cp = checkGradient(f.params[p].span(), grads[p], loss, 1e-2f, 64);
            QVERIFY2(cp.maxRelativeError < 1e-2, qPrintable(QString::fromStdString(f.specs[p].name + ": ") + cp.text()));
            ++checked;
        }
        QCOMPARE(checked, int(f.config.value("center", true)) + int(f.config.value("scale", true)));
    }

    // What backward writes for the moving statistics: share * (1 - momentum) * (batch statistic
    // - moving), share = the slice's rows (the batch dimension, not the positions) times
    // lossScale, added to what the gradient held. Summed over replicas and added to the weights
    // that is Keras's moving = momentum * moving + (1 - momentum) * statistic.
    void movingStatisticsUpdates_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<double>("lossScale");
        QTest::newRow("rank 2, whole batch") << "{}" << "[8, 3]" << 1.0 / 8;
        QTest::newRow("rank 4, a quarter of the batch") << R"({"momentum": 0.9})" << "[3, 2, 2, 4]" << 1.0 / 12;
        QTest::newRow("momentum 0: the statistic itself") << R"({"momentum": 0, "center": false})" << "[4, 3]" << 1.0 / 4;
        QTest::newRow("momentum 1: no update") << R"({"momentum": 1, "scale": false})" << "[2, 3, 2]" << 1.0 / 2;
        QTest::newRow("rank 3, a third of the batch") << R"({"momentum": 0.7})" << "[5, 4, 3]" << 1.0 / 15;
    }
    void movingStatisticsUpdates()
    {
        QFETCH(QString, config);
        QFETCH(QString, shape);
        QFETCH(double, lossScale);
        Fixture f = fixture(json::parse(config.toStdString()), json::parse(shape.toStdString()).get<Shape>());
        QVERIFY(f.layer);
        PassContext ctx;
        ctx.lossScale = lossScale;
        const Passes zero = runPasses(f, ctx); // gradients from 0
        const std::size_t C = std::size_t(f.channels());
        const double momentum = f.config.value("momentum", 0.99);
        const double share = double(f.x.shape[0]) * lossScale;
        const Moments m = moments(f.x);
        for (const auto &[name, stat] : {std::pair{std::string("moving_mean"), &m.mean}, std::pair{std::string("moving_variance"), &m.variance}}) {
            const std::size_t index = std::size_t(std::find_if(f.specs.begin(), f.specs.end(), [&](const ParamSpec &s) { return s.name == name; }) -
                                                  f.specs.begin());
            QVERIFY(index < f.specs.size());
            const float *moving = f.params[index].ptr();
            for (std::size_t c = 0; c < C; ++c) {
                const double want = share * (1.0 - momentum) * ((*stat)[c] - moving[c]);
                const double got = zero.grads[index][c];
                QVERIFY2(std::abs(got - want) <= 1e-6 * std::max(1.0, std::abs(want)),
                         qPrintable(QString("%1[%2]: got %3, expected %4").arg(QString::fromStdString(name)).arg(c).arg(got, 0, 'g', 9).arg(want, 0, 'g', 9)));
                if (share == 1.0) // one replica on the whole batch: Keras's formula once added to the weight
                    QVERIFY(std::abs((moving[c] + got) - (momentum * moving[c] + (1 - momentum) * (*stat)[c])) <= 1e-6);
            }
        }
        // Backward adds: starting from 0.25 gives 0.25 more, for every parameter.
        LayerState state;
        const FloatTensor out = f.forward(ctx, state);
        const FloatTensor r = randomTensor(out.shape, 5);
        std::vector<std::vector<float>> grads;
        std::vector<float *> gradPtrs;
        for (const auto &p : f.params)
            grads.emplace_back(p.size(), 0.25f);
        for (auto &g : grads)
            gradPtrs.push_back(g.data());
        FloatTensor *none[] = {nullptr}; // no input gradient wanted: the weights' still come
        const FloatTensor *in[] = {&f.x};
        f.layer->backward(ctx, f.paramPtrs(), in, out, r, none, gradPtrs, state);
        for (std::size_t p = 0; p < grads.size(); ++p)
            for (std::size_t i = 0; i < grads[p].size(); ++i)
                QVERIFY2(std::abs(grads[p][i] - (zero.grads[p][i] + 0.25f)) <= 1e-6f,
                         qPrintable(QString::fromStdString(f.specs[p].name) + QString("[%1]").arg(i)));
    }

    // An empty slice (a replica with no rows of an uneven last batch): an empty output and input
    // gradient, and no change to any gradient, the moving statistics' included.
    void emptyBatchChangesNothing()
    {
        Fixture f = fixture(json::object(), {4, 3, 3});
        QVERIFY(f.layer);
        f.x = FloatTensor(Shape{0, 3, 3});
        PassContext ctx;
        ctx.lossScale = 0.5;
        LayerState state;
        const FloatTensor out = f.forward(ctx, state);
        QCOMPARE(out.shape, f.x.shape);
        std::vector<FloatTensor> grads;
        std::vector<float *> gradPtrs;
        for (const auto &p : f.params)
            grads.emplace_back(p.shape).fill(1.0f);
        for (auto &g : grads)
            gradPtrs.push_back(g.ptr());
        FloatTensor dx;
        FloatTensor *dInputs[] = {&dx};
        const FloatTensor *in[] = {&f.x};
        f.layer->backward(ctx, f.paramPtrs(), in, out, out, dInputs, gradPtrs, state);
        QCOMPARE(dx.shape, f.x.shape);
        for (const auto &g : grads)
            QVERIFY(std::all_of(g.data.begin(), g.data.end(), [](float v) { return v == 1.0f; }));
    }

    // Enough rows for the statistics' fixed blocks (256 rows) and the row passes to split: the
    // same bits in an arena of 1 thread and of 4, and still the reference's values.
    void resultsDoNotDependOnThreadCount()
    {
        const Fixture f = fixture(json{{"momentum", 0.8}}, {16, 24, 24, 8}, 3);
        QVERIFY(f.layer);
        PassContext ctx;
        ctx.lossScale = 1.0 / 64;
        const Passes one = runInArena(1, f, ctx);
        const Passes four = runInArena(4, f, ctx);
        QVERIFY(one.out == four.out);
        QVERIFY(one.dx == four.dx);
        QCOMPARE(one.grads.size(), four.grads.size());
        for (std::size_t p = 0; p < one.grads.size(); ++p)
            QVERIFY2(one.grads[p] == four.grads[p], f.specs[p].name.c_str());
        const Moments m = moments(f.x);
        FloatTensor out(f.x.shape);
        out.data = four.out;
        compareValues(out, normalizeRef(f, m.mean, m.variance));
    }

    // --- Weights --------------------------------------------------------------------------------

    // Keras's order (gamma, beta, moving_mean, moving_variance), shapes (C,), initializers, and
    // only gamma and beta trainable.
    void paramsFollowKeras_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("names");
        QTest::newRow("defaults") << "{}" << "gamma beta moving_mean moving_variance";
        QTest::newRow("no center") << R"({"center": false})" << "gamma moving_mean moving_variance";
        QTest::newRow("no scale") << R"({"scale": false})" << "beta moving_mean moving_variance";
        QTest::newRow("neither") << R"({"center": false, "scale": false})" << "moving_mean moving_variance";
    }
    void paramsFollowKeras()
    {
        QFETCH(QString, config);
        QFETCH(QString, names);
        auto made = createLayer("BatchNormalization", "bn", json::parse(config.toStdString()));
        QVERIFY2(made.ok(), made.ok() ? "" : made.error().message().c_str());
        QVERIFY((*made)->build({{5, 4, 6}}).ok());
        QCOMPARE((*made)->className(), std::string("BatchNormalization"));
        const auto specs = (*made)->params();
        QStringList got;
        for (const auto &s : specs) {
            got << QString::fromStdString(s.name);
            QCOMPARE(s.shape, Shape{6});
            QCOMPARE(s.trainable, s.name == "gamma" || s.name == "beta");
            const std::string initializer = s.name == "gamma" || s.name == "moving_variance" ? "ones" : "zeros";
            QCOMPARE(s.initializer, initializer);
        }
        QCOMPARE(got.join(' '), names);

        // The initializers as configured.
        auto custom = createLayer("BatchNormalization", "bn",
                                  json{{"gamma_initializer", "zeros"}, {"beta_initializer", "ones"}, {"moving_mean_initializer", "ones"},
                                       {"moving_variance_initializer", "zeros"}});
        QVERIFY(custom.ok());
        QVERIFY((*custom)->build({{3}}).ok());
        QStringList initializers;
        for (const auto &s : (*custom)->params())
            initializers << QString::fromStdString(s.initializer);
        QCOMPARE(initializers.join(' '), QString("zeros ones ones zeros"));
    }

    // In a Model the optimizer owns [0, trainableParameterCount()); every moving statistic lies
    // after every trainable array, the arrays do not overlap, and the summary counts them apart.
    void modelPlacesNonTrainableArraysLast()
    {
        const json model = json::parse(R"({
            "inputs": [{"name": "x", "feature": "x"}],
            "layers": [{"class_name": "Dense", "name": "d1", "units": 5, "activation": "relu"},
                       {"class_name": "BatchNormalization", "name": "bn1"},
                       {"class_name": "Dense", "name": "d2", "units": 4},
                       {"class_name": "BatchNormalization", "name": "bn2", "center": false},
                       {"class_name": "Dense", "name": "out", "units": 2}],
            "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}]})");
        auto built = Model::build(model, regressionSpec());
        QVERIFY2(built.ok(), built.ok() ? "" : built.error().message().c_str());
        const Model &m = **built;

        QStringList names;
        for (const auto &p : m.parameters())
            names << QString::fromStdString(p.name) + (p.trainable ? "" : "*");
        QCOMPARE(names.join(' '), QString("d1/kernel d1/bias bn1/gamma bn1/beta bn1/moving_mean* bn1/moving_variance* d2/kernel d2/bias "
                                          "bn2/gamma bn2/moving_mean* bn2/moving_variance* out/kernel out/bias"));
        const std::size_t trainable = m.trainableParameterCount();
        QVERIFY(trainable < m.parameterCount());
        std::size_t trainableFloats = 0, stateFloats = 0;
        for (const auto &p : m.parameters()) {
            QCOMPARE(p.count, std::size_t(shapeCount(p.shape)));
            if (p.trainable) {
                QVERIFY2(p.offset + p.count <= trainable, p.name.c_str());
                trainableFloats += p.count;
            } else {
                QVERIFY2(p.offset >= trainable && p.offset + p.count <= m.parameterCount(), p.name.c_str());
                stateFloats += p.count;
            }
            for (const auto &q : m.parameters())
                if (&q != &p)
                    QVERIFY2(p.offset + p.count <= q.offset || q.offset + q.count <= p.offset, (p.name + " overlaps " + q.name).c_str());
        }
        QCOMPARE(trainableFloats, std::size_t(6 * 5 + 5 + 5 + 5 + 5 * 4 + 4 + 4 + 4 * 2 + 2));
        QCOMPARE(stateFloats, std::size_t(2 * 5 + 2 * 4));

        // Initial weights land where the entries say: moving variances 1, moving means 0.
        auto initial = m.initialWeights(3);
        QVERIFY(initial.ok());
        for (const auto &p : m.parameters()) {
            const float want = p.name.ends_with("moving_variance") || p.name.ends_with("gamma") ? 1.0f : 0.0f;
            if (p.name.find("/moving_") != std::string::npos || p.name.ends_with("gamma"))
                for (std::size_t i = 0; i < p.count; ++i)
                    QVERIFY2((*initial)[p.offset + i] == want, p.name.c_str());
        }

        // Saved and loaded with the other weights, under Keras's names.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::vector<float> weights = *initial;
        for (std::size_t i = 0; i < weights.size(); ++i)
            weights[i] += 0.001f * float(i % 97);
        const std::string path = dir.filePath("w.npz").toStdString();
        QVERIFY(m.saveWeights(path, weights).ok());
        std::vector<float> loaded(m.parameterCount(), 0.0f);
        const Status s = m.loadWeights(path, loaded);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message().c_str());
        for (const auto &p : m.parameters())
            for (std::size_t i = 0; i < p.count; ++i)
                QVERIFY2(loaded[p.offset + i] == weights[p.offset + i], p.name.c_str());

        const std::string summary = m.summary();
        QVERIFY2(summary.find("Total params: 101\n") != std::string::npos, summary.c_str());
        QVERIFY2(summary.find("Trainable params: 83\n") != std::string::npos, summary.c_str());
        QVERIFY2(summary.find("Non-trainable params: 18") != std::string::npos, summary.c_str());

        // Without BatchNormalization everything is trainable, and the summary says nothing more.
        const json plain = json::parse(R"({
            "inputs": [{"name": "x", "feature": "x"}],
            "layers": [{"class_name": "Dense", "name": "d1", "units": 5}, {"class_name": "Dense", "name": "out", "units": 2}],
            "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}]})");
        auto plainModel = Model::build(plain, regressionSpec());
        QVERIFY(plainModel.ok());
        QCOMPARE((*plainModel)->trainableParameterCount(), (*plainModel)->parameterCount());
        QVERIFY((*plainModel)->summary().find("Non-trainable") == std::string::npos);
    }

    // --- Errors ---------------------------------------------------------------------------------

    void configErrors_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("expected");
        QTest::newRow("synchronized") << R"({"synchronized": "yes"})" << "synchronized" << "bn: BatchNormalization parameter 'synchronized'";
        QTest::newRow("momentum above 1") << R"({"momentum": 1.5})" << "momentum"
                                          << "bn: BatchNormalization parameter 'momentum': expected a number in [0, 1], got 1.5";
        QTest::newRow("momentum below 0") << R"({"momentum": -0.1})" << "momentum"
                                          << "bn: BatchNormalization parameter 'momentum': expected a number in [0, 1], got -0.1";
        QTest::newRow("momentum text") << R"({"momentum": "high"})" << "momentum" << "bn: BatchNormalization parameter 'momentum': expected a number";
        QTest::newRow("epsilon 0") << R"({"epsilon": 0})" << "epsilon" << "bn: BatchNormalization parameter 'epsilon': expected a number greater than 0";
        QTest::newRow("two axes") << R"({"axis": [1, 2]})" << "axis" << "bn: BatchNormalization parameter 'axis': expected a single axis";
        QTest::newRow("unknown key") << R"({"virtual_batch_size": 8})" << "virtual_batch_size"
                                     << "bn: BatchNormalization parameter 'virtual_batch_size': unknown key";
        QTest::newRow("renorm") << R"({"renorm": true})" << "renorm"
                                << "bn: BatchNormalization parameter 'renorm': false only: batch renormalization is not supported, got true";
        QTest::newRow("unknown initializer") << R"({"gamma_initializer": "pi"})" << "gamma_initializer"
                                             << "bn: BatchNormalization parameter 'gamma_initializer': unknown initializer 'pi'";
    }
    void configErrors()
    {
        QFETCH(QString, config);
        QFETCH(QString, key);
        QFETCH(QString, expected);
        auto made = createLayer("BatchNormalization", "bn", json::parse(config.toStdString()));
        QVERIFY2(!made.ok(), "the layer was created");
        QCOMPARE(made.error().what, std::string("bn"));
        QCOMPARE(QString::fromStdString(made.error().key), key);
        QVERIFY2(made.error().message().find(expected.toStdString()) != std::string::npos, made.error().message().c_str());
    }

    // The limits of those ranges, and "synchronized" either way, are accepted.
    void configLimitsAccepted()
    {
        for (const char *config : {R"({"momentum": 0})", R"({"momentum": 1})", R"({"synchronized": false})", R"({"synchronized": true})", R"({"axis": [-1]})",
                                   R"({"epsilon": 1e-9, "center": false, "scale": false})"}) {
            auto made = createLayer("BatchNormalization", "bn", json::parse(config));
            QVERIFY2(made.ok(), made.ok() ? config : made.error().message().c_str());
            QVERIFY2((*made)->build({{4, 3}}).ok(), config);
        }
    }

    // Only the last axis: -1, or the input's rank counting the batch dimension. Any other is
    // refused when the layer is built (only then is the rank known), naming the layer.
    void buildRefusesAnAxisOtherThanTheLast_data()
    {
        QTest::addColumn<int>("axis");
        QTest::addColumn<QString>("sample");
        QTest::addColumn<bool>("accepted");
        QTest::newRow("-1") << -1 << "[4, 5, 3]" << true;
        QTest::newRow("3 of rank 4") << 3 << "[4, 5, 3]" << true;
        QTest::newRow("1 of rank 2") << 1 << "[6]" << true;
        QTest::newRow("1 of rank 4") << 1 << "[4, 5, 3]" << false;
        QTest::newRow("2 of rank 4") << 2 << "[4, 5, 3]" << false;
        QTest::newRow("-2") << -2 << "[4, 5, 3]" << false;
        QTest::newRow("beyond the rank") << 4 << "[4, 5, 3]" << false;
    }
    void buildRefusesAnAxisOtherThanTheLast()
    {
        QFETCH(int, axis);
        QFETCH(QString, sample);
        QFETCH(bool, accepted);
        auto made = createLayer("BatchNormalization", "bn", json{{"axis", axis}});
        QVERIFY2(made.ok(), made.ok() ? "" : made.error().message().c_str());
        const Shape shape = json::parse(sample.toStdString()).get<Shape>();
        const auto built = (*made)->build({shape});
        QCOMPARE(built.ok(), accepted);
        if (accepted)
            return;
        QCOMPARE(built.error().what, std::string("bn"));
        const std::string message = built.error().message();
        QVERIFY2(message.find("bn: BatchNormalization supports only the last axis") != std::string::npos, message.c_str());
        QVERIFY2(message.find("axis " + std::to_string(axis)) != std::string::npos, message.c_str());
        QVERIFY2(message.find(shapeString(shape)) != std::string::npos, message.c_str());
    }

    // In a model, the same refusal names the entry.
    void modelRefusesAnAxisOtherThanTheLast()
    {
        const json model = json::parse(R"({
            "inputs": [{"name": "x", "feature": "x"}],
            "layers": [{"class_name": "Dense", "name": "d1", "units": 5},
                       {"class_name": "BatchNormalization", "name": "bn", "axis": 0},
                       {"class_name": "Dense", "name": "out", "units": 2}],
            "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}]})");
        auto built = Model::build(model, regressionSpec());
        QVERIFY(!built.ok());
        QCOMPARE(built.error().layer, std::string("layers[1]"));
        QVERIFY2(built.error().message().find("supports only the last axis") != std::string::npos, built.error().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestTrainBatchNorm)
#include "tst_train_batch_norm.moc"
