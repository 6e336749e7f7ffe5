// Keras's convolution and pooling layers of the CPU backend (Conv1D/2D, Max/AveragePooling1D/2D,
// Global{Average,Max}Pooling1D/2D): forward values against naive double-precision references
// written from TensorFlow's definitions, every input and weight gradient against finite
// differences, the same results with one thread and several, Keras's weight shapes and
// initializer fans, the configuration and shape errors, and PyTorch's values for the same
// layers (tests/data/train/conv_reference.json, from make_conv_reference.py).
#include "support/gradient_check.h"
#include "support/train_reference.h"

#include "train/model/initializers.h"
#include "train/model/layer_registry.h"
#include "train/layers/conv/conv_direct.h"

#include <QtTest>

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace sluice;
using namespace sluice::train;
using nlohmann::json;
using test::checkGradient;
using test::randomTensor;

namespace {

// --- Fixtures ---------------------------------------------------------------------------------

// A built layer with random inputs [B, sample...] and random weights.
struct Fixture
{
    std::string cls;
    json config;
    std::unique_ptr<Layer> layer;
    FloatTensor x;
    std::vector<FloatTensor> params;
    Shape sample, outSample;

    std::vector<const float *> paramPtrs() const
    {
        std::vector<const float *> p;
        for (const auto &t : params)
            p.push_back(t.ptr());
        return p;
    }
    FloatTensor forward(LayerState &state) const
    {
        FloatTensor out;
        const FloatTensor *in[] = {&x};
        layer->forward(PassContext{}, paramPtrs(), in, out, state);
        return out;
    }
    FloatTensor forward() const
    {
        LayerState state;
        return forward(state);
    }
};

bool isMaxPooling(const std::string &cls) { return cls.find("MaxPooling") != std::string::npos; }

// Distinct values 0.01 apart in random order: max pooling then has one maximum per window, and
// finite differences with a step below 0.005 never move it.
void makeDistinct(FloatTensor &t, unsigned seed)
{
    std::vector<std::int64_t> order(t.size());
    std::iota(order.begin(), order.end(), std::int64_t(0));
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    const double half = double(t.size()) / 2;
    for (std::size_t i = 0; i < t.size(); ++i)
        t.data[i] = float((double(order[i]) - half) * 0.01);
}

// Fails the current test (and returns a fixture without a layer) when the layer cannot be made
// or built.
Fixture fixture(const std::string &cls, const json &config, const Shape &sample, std::int64_t batch, unsigned seed = 1)
{
    Fixture f;
    f.cls = cls;
    f.config = config;
    f.sample = sample;
    auto made = createLayer(cls, "c", config);
    if (!made) {
        QTest::qFail(made.error().message().c_str(), __FILE__, __LINE__);
        return f;
    }
    auto out = (*made)->build({sample});
    if (!out) {
        QTest::qFail(out.error().message().c_str(), __FILE__, __LINE__);
        return f;
    }
    f.layer = std::move(*made);
    f.outSample = *out;
    Shape full{batch};
    full.insert(full.end(), sample.begin(), sample.end());
    f.x = randomTensor(full, seed++, -1.5f, 1.5f);
    if (isMaxPooling(cls) || cls.find("GlobalMax") != std::string::npos)
        makeDistinct(f.x, seed);
    for (const auto &spec : f.layer->params())
        f.params.push_back(randomTensor(spec.shape, seed++, -0.8f, 0.8f));
    return f;
}

// Finite-difference check of the input's and every weight's gradient for loss = sum(out * R).
// Gradients start at 0.25 to check that backward adds into them.
void checkLayerGradients(Fixture &f, float epsilon, std::size_t probes = 64)
{
    LayerState state;
    const FloatTensor out = f.forward(state);
    Shape expected{f.x.shape[0]};
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

    FloatTensor dx;
    FloatTensor *dInputs[] = {&dx};
    std::vector<std::vector<float>> grads;
    std::vector<float *> gradPtrs;
    for (const auto &p : f.params)
        grads.emplace_back(p.size(), 0.25f);
    for (auto &g : grads)
        gradPtrs.push_back(g.data());
    const FloatTensor *in[] = {&f.x};
    f.layer->backward(PassContext{}, f.paramPtrs(), in, out, r, dInputs, gradPtrs, state);

    QCOMPARE(dx.shape, f.x.shape);
    const auto c = checkGradient(f.x.span(), dx.span(), loss, epsilon, probes);
    QVERIFY2(c.maxRelativeError < 1e-2, qPrintable("input: " + c.text()));
    const auto specs = f.layer->params();
    for (std::size_t p = 0; p < f.params.size(); ++p) {
        for (auto &g : grads[p])
            g -= 0.25f;
        const auto cp = checkGradient(f.params[p].span(), grads[p], loss, epsilon, probes);
        QVERIFY2(cp.maxRelativeError < 1e-2, qPrintable(QString::fromStdString(specs[p].name + ": ") + cp.text()));
    }
}

// --- Naive references, in double, from TensorFlow's definitions -------------------------------

// One spatial axis: out = ceil(in / stride) for "same" (padded by max((out - 1) * stride + span
// - in, 0), the smaller half before), (in - span) / stride + 1 for "valid".
struct Axis
{
    std::int64_t in = 1, size = 1, stride = 1, dilation = 1, out = 1, pad = 0;
};

Axis axis(std::int64_t in, std::int64_t size, std::int64_t stride, std::int64_t dilation, bool same)
{
    Axis a{in, size, stride, dilation, 0, 0};
    const std::int64_t span = (size - 1) * dilation + 1;
    if (same) {
        a.out = (in + stride - 1) / stride;
        a.pad = std::max<std::int64_t>((a.out - 1) * stride + span - in, 0) / 2;
    } else {
        a.out = in >= span ? (in - span) / stride + 1 : 0;
    }
    return a;
}

std::vector<std::int64_t> tupleOf(const json &config, const char *key, std::size_t rank, std::vector<std::int64_t> fallback)
{
    if (!config.contains(key) || config[key].is_null())
        return fallback;
    if (config[key].is_array())
        return config[key].get<std::vector<std::int64_t>>();
    return std::vector<std::int64_t>(rank, config[key].get<std::int64_t>());
}

bool samePadding(const json &config)
{
    std::string p = config.value("padding", "valid");
    std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return p == "same";
}

// The two axes of a layer's window over samples (W, C) or (H, W, C); 1-D windows are 1 high.
struct Window
{
    Axis h, w;
    std::int64_t channels = 1;
};

Window windowOf(const Shape &sample, const std::vector<std::int64_t> &size, const std::vector<std::int64_t> &strides,
                const std::vector<std::int64_t> &dilation, bool same)
{
    Window win;
    win.channels = sample.back();
    if (sample.size() == 2) {
        win.w = axis(sample[0], size[0], strides[0], dilation[0], same);
    } else {
        win.h = axis(sample[0], size[0], strides[0], dilation[0], same);
        win.w = axis(sample[1], size[1], strides[1], dilation[1], same);
    }
    return win;
}

Shape spatialOut(const Window &win, std::size_t rank, std::int64_t last)
{
    return rank == 1 ? Shape{win.w.out, last} : Shape{win.h.out, win.w.out, last};
}

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

// Conv1D / Conv2D: returns the output values and sets `outSample`.
std::vector<double> convRef(const Fixture &f, Shape &outSample)
{
    const std::size_t rank = f.sample.size() - 1;
    const auto size = tupleOf(f.config, "kernel_size", rank, {});
    const Window win = windowOf(f.sample, size, tupleOf(f.config, "strides", rank, std::vector<std::int64_t>(rank, 1)),
                                tupleOf(f.config, "dilation_rate", rank, std::vector<std::int64_t>(rank, 1)), samePadding(f.config));
    const std::int64_t B = f.x.shape[0], C = win.channels, F = f.config["filters"].get<std::int64_t>();
    const std::int64_t H = win.h.in, W = win.w.in, kh = win.h.size, kw = win.w.size;
    const float *kernel = f.params[0].ptr();
    const float *bias = f.config.value("use_bias", true) ? f.params[1].ptr() : nullptr;
    const std::string activation = f.config.value("activation", "linear");
    outSample = spatialOut(win, rank, F);
    std::vector<double> out;
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t oy = 0; oy < win.h.out; ++oy)
            for (std::int64_t ox = 0; ox < win.w.out; ++ox) {
                std::vector<double> z(static_cast<std::size_t>(F));
                for (std::int64_t o = 0; o < F; ++o) {
                    double s = bias ? bias[o] : 0.0;
                    for (std::int64_t ky = 0; ky < kh; ++ky)
                        for (std::int64_t kx = 0; kx < kw; ++kx) {
                            const std::int64_t iy = oy * win.h.stride - win.h.pad + ky * win.h.dilation;
                            const std::int64_t ix = ox * win.w.stride - win.w.pad + kx * win.w.dilation;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                continue;
                            for (std::int64_t c = 0; c < C; ++c)
                                s += double(f.x.data[std::size_t(((b * H + iy) * W + ix) * C + c)]) * kernel[((ky * kw + kx) * C + c) * F + o];
                        }
                    z[std::size_t(o)] = s;
                }
                if (activation == "softmax") {
                    double sum = 0;
                    for (double v : z)
                        sum += std::exp(v);
                    for (double &v : z)
                        v = std::exp(v) / sum;
                } else {
                    for (double &v : z)
                        v = activationRef(activation, v);
                }
                out.insert(out.end(), z.begin(), z.end());
            }
    return out;
}

// Max/AveragePooling1D/2D: the maximum or the mean over each window's positions inside the input.
std::vector<double> poolRef(const Fixture &f, Shape &outSample)
{
    const std::size_t rank = f.sample.size() - 1;
    const auto size = tupleOf(f.config, "pool_size", rank, std::vector<std::int64_t>(rank, 2));
    const Window win = windowOf(f.sample, size, tupleOf(f.config, "strides", rank, size), std::vector<std::int64_t>(rank, 1), samePadding(f.config));
    const std::int64_t B = f.x.shape[0], C = win.channels, H = win.h.in, W = win.w.in;
    const bool isMax = isMaxPooling(f.cls);
    outSample = spatialOut(win, rank, C);
    std::vector<double> out;
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t oy = 0; oy < win.h.out; ++oy)
            for (std::int64_t ox = 0; ox < win.w.out; ++ox)
                for (std::int64_t c = 0; c < C; ++c) {
                    double best = -INFINITY, sum = 0;
                    int count = 0;
                    for (std::int64_t ky = 0; ky < win.h.size; ++ky)
                        for (std::int64_t kx = 0; kx < win.w.size; ++kx) {
                            const std::int64_t iy = oy * win.h.stride - win.h.pad + ky, ix = ox * win.w.stride - win.w.pad + kx;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                continue;
                            const double v = f.x.data[std::size_t(((b * H + iy) * W + ix) * C + c)];
                            best = std::max(best, v);
                            sum += v;
                            ++count;
                        }
                    out.push_back(isMax ? best : sum / count);
                }
    return out;
}

// Global{Average,Max}Pooling1D/2D.
std::vector<double> globalRef(const Fixture &f, Shape &outSample)
{
    const std::size_t rank = f.sample.size() - 1;
    const std::int64_t B = f.x.shape[0], C = f.sample.back(), P = shapeCount(f.sample) / C;
    const bool isMax = f.cls.find("GlobalMax") != std::string::npos;
    outSample = f.config.value("keepdims", false) ? Shape(rank, 1) : Shape{};
    outSample.push_back(C);
    std::vector<double> out;
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t c = 0; c < C; ++c) {
            double best = -INFINITY, sum = 0;
            for (std::int64_t p = 0; p < P; ++p) {
                const double v = f.x.data[std::size_t((b * P + p) * C + c)];
                best = std::max(best, v);
                sum += v;
            }
            out.push_back(isMax ? best : sum / double(P));
        }
    return out;
}

void compareValues(const FloatTensor &got, const std::vector<double> &want, double tolerance = 1e-5)
{
    QCOMPARE(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
        QVERIFY2(std::abs(got.data[i] - want[i]) <= tolerance * (1.0 + std::abs(want[i])),
                 qPrintable(QString("element %1: got %2, expected %3").arg(i).arg(got.data[i]).arg(want[i])));
}

// A fixture from the columns every data-driven test here has.
Fixture fetchFixture()
{
    QFETCH(QString, cls);
    QFETCH(QString, config);
    QFETCH(QString, sample);
    QFETCH(int, batch);
    return fixture(cls.toStdString(), json::parse(config.toStdString()), json::parse(sample.toStdString()).get<Shape>(), batch);
}

void addColumns()
{
    QTest::addColumn<QString>("cls");
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("sample");
    QTest::addColumn<int>("batch");
}

void addConvolutionRows()
{
    addColumns();
    QTest::newRow("1d valid") << "Conv1D" << R"({"filters": 4, "kernel_size": 3})" << "[7, 3]" << 2;
    QTest::newRow("1d same stride 2 even kernel") << "Conv1D" << R"({"filters": 3, "kernel_size": 4, "strides": 2, "padding": "same"})" << "[9, 2]" << 2;
    QTest::newRow("1d same dilated tanh") << "Conv1D" << R"({"filters": 2, "kernel_size": 3, "dilation_rate": 2, "padding": "same", "activation": "tanh"})"
                                          << "[8, 3]" << 2;
    QTest::newRow("1d valid stride 3 odd length") << "Conv1D" << R"({"filters": 3, "kernel_size": [2], "strides": [3]})" << "[11, 2]" << 3;
    QTest::newRow("1d kernel as long as the input") << "Conv1D" << R"({"filters": 2, "kernel_size": 5, "use_bias": false})" << "[5, 3]" << 2;
    QTest::newRow("2d valid") << "Conv2D" << R"({"filters": 4, "kernel_size": [3, 3]})" << "[5, 6, 3]" << 2;
    QTest::newRow("2d same strides") << "Conv2D" << R"({"filters": 3, "kernel_size": [3, 2], "strides": [2, 2], "padding": "same"})" << "[5, 7, 2]" << 2;
    QTest::newRow("2d same even kernel") << "Conv2D" << R"({"filters": 2, "kernel_size": 4, "padding": "same", "use_bias": false})" << "[6, 5, 2]" << 2;
    QTest::newRow("2d same kernel larger than input") << "Conv2D" << R"({"filters": 2, "kernel_size": 5, "padding": "same"})" << "[3, 3, 2]" << 2;
    QTest::newRow("2d valid dilated sigmoid") << "Conv2D" << R"({"filters": 3, "kernel_size": [2, 3], "dilation_rate": [2, 1], "activation": "sigmoid"})"
                                              << "[6, 7, 2]" << 2;
    QTest::newRow("2d same dilated") << "Conv2D" << R"({"filters": 2, "kernel_size": 3, "dilation_rate": 2, "padding": "same"})" << "[5, 6, 2]" << 2;
    QTest::newRow("2d strides beyond the kernel") << "Conv2D" << R"({"filters": 2, "kernel_size": 2, "strides": 3})" << "[7, 8, 2]" << 2;
    // Few outputs: each is a chance for a finite difference to cross ReLU's kink.
    QTest::newRow("2d relu") << "Conv2D" << R"({"filters": 2, "kernel_size": [2, 2], "activation": "relu"})" << "[3, 3, 2]" << 2;
    QTest::newRow("2d pointwise gelu") << "Conv2D" << R"({"filters": 3, "kernel_size": 1, "activation": "gelu"})" << "[3, 4, 5]" << 2;
    QTest::newRow("2d pointwise softmax") << "Conv2D" << R"({"filters": 4, "kernel_size": [1, 1], "activation": "softmax"})" << "[2, 3, 3]" << 2;
    QTest::newRow("2d 1x1 stride 2 same") << "Conv2D" << R"({"filters": 2, "kernel_size": 1, "strides": 2, "padding": "same"})" << "[5, 5, 3]" << 2;
    // Multiples of 8 filters take the direct kernels (conv_direct.h) where the CPU has AVX2:
    // every gradient direct (8 channels, stride 1), the input's by im2col (stride 2, 3 channels),
    // 16 + 8 filters, and rows whose positions are not a multiple of the kernels' blocks.
    QTest::newRow("direct 2d same 16 filters") << "Conv2D" << R"({"filters": 16, "kernel_size": 3, "padding": "same", "activation": "tanh"})" << "[6, 7, 8]" << 2;
    QTest::newRow("direct 2d valid stride 2") << "Conv2D" << R"({"filters": 8, "kernel_size": [3, 2], "strides": 2})" << "[7, 6, 3]" << 2;
    QTest::newRow("direct 1d same 24 filters") << "Conv1D" << R"({"filters": 24, "kernel_size": 5, "padding": "same", "use_bias": false})" << "[13, 8]" << 2;
    QTest::newRow("direct 2d valid even kernel") << "Conv2D" << R"({"filters": 32, "kernel_size": 2, "activation": "sigmoid"})" << "[4, 9, 16]" << 1;
    QTest::newRow("direct 2d same stride 2 even") << "Conv2D" << R"({"filters": 8, "kernel_size": 4, "strides": 2, "padding": "same"})" << "[7, 9, 5]" << 2;
}

void addPoolingRows()
{
    addColumns();
    QTest::newRow("max1d defaults") << "MaxPooling1D" << "{}" << "[7, 3]" << 2;
    QTest::newRow("max1d same stride 1") << "MaxPooling1D" << R"({"pool_size": 3, "strides": 1, "padding": "same"})" << "[6, 2]" << 2;
    QTest::newRow("max2d defaults") << "MaxPooling2D" << "{}" << "[5, 6, 3]" << 2;
    QTest::newRow("max2d same overlapping") << "MaxPooling2D" << R"({"pool_size": [3, 3], "strides": [2, 2], "padding": "same"})" << "[5, 7, 2]" << 2;
    QTest::newRow("max2d same asymmetric") << "MaxPooling2D" << R"({"pool_size": 2, "padding": "same"})" << "[5, 5, 2]" << 2;
    QTest::newRow("max2d strides beyond the pool") << "MaxPooling2D" << R"({"pool_size": 2, "strides": [3, 1]})" << "[7, 4, 1]" << 2;
    QTest::newRow("max2d strides null") << "MaxPooling2D" << R"({"pool_size": [2, 3], "strides": null})" << "[4, 6, 1]" << 2;
    QTest::newRow("avg1d valid") << "AveragePooling1D" << R"({"pool_size": 3})" << "[9, 2]" << 2;
    QTest::newRow("avg1d same") << "AveragePooling1D" << R"({"pool_size": 2, "padding": "same"})" << "[7, 3]" << 2;
    QTest::newRow("avg2d valid overlapping") << "AveragePooling2D" << R"({"pool_size": 3, "strides": 2})" << "[6, 6, 2]" << 2;
    QTest::newRow("avg2d same") << "AveragePooling2D" << R"({"pool_size": [3, 2], "strides": [2, 3], "padding": "same"})" << "[5, 7, 2]" << 2;
    QTest::newRow("avg2d same stride 1 upper case") << "AveragePooling2D" << R"({"pool_size": 3, "strides": 1, "padding": "SAME"})" << "[4, 4, 2]" << 2;
}

void addGlobalPoolingRows()
{
    addColumns();
    QTest::newRow("avg1d") << "GlobalAveragePooling1D" << "{}" << "[5, 3]" << 3;
    QTest::newRow("avg1d keepdims") << "GlobalAveragePooling1D" << R"({"keepdims": true})" << "[5, 3]" << 2;
    QTest::newRow("avg2d") << "GlobalAveragePooling2D" << "{}" << "[3, 4, 3]" << 2;
    QTest::newRow("avg2d keepdims") << "GlobalAveragePooling2D" << R"({"keepdims": true})" << "[3, 4, 3]" << 2;
    QTest::newRow("max1d") << "GlobalMaxPooling1D" << "{}" << "[6, 3]" << 2;
    QTest::newRow("max2d keepdims") << "GlobalMaxPooling2D" << R"({"keepdims": true, "data_format": "channels_last"})" << "[3, 4, 3]" << 2;
}

// What one forward and backward pass produce (loss = sum(out * R) for a fixed R).
struct Passes
{
    std::vector<float> out, dx;
    std::vector<std::vector<float>> grads;
};

Passes runPasses(const Fixture &f)
{
    Passes p;
    LayerState state;
    const FloatTensor out = f.forward(state);
    const FloatTensor r = randomTensor(out.shape, 5);
    FloatTensor dx;
    FloatTensor *dInputs[] = {&dx};
    std::vector<float *> gradPtrs;
    for (const auto &t : f.params)
        p.grads.emplace_back(t.size(), 0.0f);
    for (auto &g : p.grads)
        gradPtrs.push_back(g.data());
    const FloatTensor *in[] = {&f.x};
    f.layer->backward(PassContext{}, f.paramPtrs(), in, out, r, dInputs, gradPtrs, state);
    p.out = out.data;
    p.dx = dx.data;
    return p;
}

Passes runInArena(int threads, const Fixture &f)
{
    oneapi::tbb::task_arena arena(threads);
    return arena.execute([&] { return runPasses(f); });
}

} // namespace

class TestTrainConv : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // --- Forward values and gradients -------------------------------------------------------

    void convolutionMatchesReference_data() { addConvolutionRows(); }
    void convolutionMatchesReference()
    {
        const Fixture f = fetchFixture();
        QVERIFY(f.layer);
        Shape outSample;
        const std::vector<double> want = convRef(f, outSample);
        QCOMPARE(f.outSample, outSample);
        const FloatTensor out = f.forward();
        Shape full{f.x.shape[0]};
        full.insert(full.end(), outSample.begin(), outSample.end());
        QCOMPARE(out.shape, full);
        compareValues(out, want);
    }

    void convolutionGradients_data() { addConvolutionRows(); }
    void convolutionGradients()
    {
        Fixture f = fetchFixture();
        QVERIFY(f.layer);
        // ReLU's kink is closer to the probes than 1e-2 somewhere: a smaller step there.
        checkLayerGradients(f, f.config.value("activation", "") == "relu" ? 1e-3f : 1e-2f);
    }

    void poolingMatchesReference_data() { addPoolingRows(); }
    void poolingMatchesReference()
    {
        const Fixture f = fetchFixture();
        QVERIFY(f.layer);
        QVERIFY(f.layer->params().empty());
        Shape outSample;
        const std::vector<double> want = poolRef(f, outSample);
        QCOMPARE(f.outSample, outSample);
        compareValues(f.forward(), want);
    }

    void poolingGradients_data() { addPoolingRows(); }
    void poolingGradients()
    {
        Fixture f = fetchFixture();
        QVERIFY(f.layer);
        // Max pooling's inputs are 0.01 apart: a step of 1e-3 never changes a window's maximum.
        checkLayerGradients(f, isMaxPooling(f.cls) ? 1e-3f : 1e-2f);
    }

    void globalPoolingMatchesReferenceAndGradients_data() { addGlobalPoolingRows(); }
    void globalPoolingMatchesReferenceAndGradients()
    {
        Fixture f = fetchFixture();
        QVERIFY(f.layer);
        QVERIFY(f.layer->params().empty());
        Shape outSample;
        const std::vector<double> want = globalRef(f, outSample);
        QCOMPARE(f.outSample, outSample);
        compareValues(f.forward(), want);
        checkLayerGradients(f, f.cls.find("GlobalMax") != std::string::npos ? 1e-3f : 1e-2f);
    }

    // Backward adds into the weight gradients, writes (not adds) the input gradient, and skips a
    // null one.
    void backwardAddsWeightGradientsAndWritesInputGradients_data()
    {
        addColumns();
        QTest::newRow("conv2d same") << "Conv2D" << R"({"filters": 3, "kernel_size": 3, "strides": 2, "padding": "same"})" << "[5, 6, 2]" << 2;
        QTest::newRow("conv1d pointwise") << "Conv1D" << R"({"filters": 3, "kernel_size": 1, "activation": "tanh"})" << "[5, 4]" << 2;
        QTest::newRow("max pooling overlapping") << "MaxPooling2D" << R"({"pool_size": 3, "strides": 1})" << "[4, 5, 2]" << 2;
        QTest::newRow("average pooling") << "AveragePooling1D" << R"({"padding": "same"})" << "[5, 2]" << 2;
        QTest::newRow("global max") << "GlobalMaxPooling2D" << "{}" << "[3, 3, 2]" << 2;
    }
    void backwardAddsWeightGradientsAndWritesInputGradients()
    {
        const Fixture f = fetchFixture();
        QVERIFY(f.layer);
        LayerState state;
        const FloatTensor out = f.forward(state);
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
        FloatTensor dx1, dx2;
        FloatTensor *d1[] = {&dx1};
        f.layer->backward(PassContext{}, f.paramPtrs(), in, out, dOut, d1, ptrs(once), state);
        FloatTensor *none[] = {nullptr};
        f.layer->backward(PassContext{}, f.paramPtrs(), in, out, dOut, none, ptrs(twice), state);
        dx2.resize({1});
        dx2.fill(42.0f);
        FloatTensor *d2[] = {&dx2};
        f.layer->backward(PassContext{}, f.paramPtrs(), in, out, dOut, d2, ptrs(twice), state);
        QCOMPARE(dx2.shape, f.x.shape);
        QCOMPARE(dx2.data, dx1.data);
        for (std::size_t i = 0; i < once.size(); ++i)
            for (std::size_t j = 0; j < once[i].size(); ++j)
                QCOMPARE(twice[i].data[j], 2.0f * once[i].data[j]);
    }

    // One LayerState serves batches of different sizes, the empty batch included.
    void stateIsReusedAcrossBatchSizes()
    {
        for (const auto &[cls, config, sample] : {std::tuple{"Conv2D", R"({"filters": 3, "kernel_size": 3, "padding": "same", "activation": "gelu"})", Shape{5, 4, 2}},
                                                  std::tuple{"Conv1D", R"({"filters": 2, "kernel_size": 1})", Shape{6, 3}},
                                                  std::tuple{"MaxPooling1D", "{}", Shape{6, 3}},
                                                  std::tuple{"GlobalAveragePooling2D", "{}", Shape{2, 3, 4}}}) {
            Fixture f = fixture(cls, json::parse(config), sample, 3);
            QVERIFY(f.layer);
            LayerState state;
            f.forward(state);
            Shape two{2};
            two.insert(two.end(), sample.begin(), sample.end());
            f.x = randomTensor(two, 3);
            const FloatTensor reused = f.forward(state);
            const FloatTensor clean = f.forward();
            QCOMPARE(reused.shape, clean.shape);
            QCOMPARE(reused.data, clean.data);

            // An empty batch: an empty output and input gradient, the weight gradients untouched.
            Shape none{0};
            none.insert(none.end(), sample.begin(), sample.end());
            f.x = FloatTensor(none);
            const FloatTensor empty = f.forward(state);
            QCOMPARE(empty.shape[0], std::int64_t(0));
            QCOMPARE(empty.size(), std::size_t(0));
            std::vector<FloatTensor> grads;
            std::vector<float *> gradPtrs;
            for (const auto &p : f.params)
                grads.emplace_back(p.shape).fill(1.0f);
            for (auto &g : grads)
                gradPtrs.push_back(g.ptr());
            FloatTensor dx;
            FloatTensor *dInputs[] = {&dx};
            const FloatTensor *in[] = {&f.x};
            f.layer->backward(PassContext{}, f.paramPtrs(), in, empty, empty, dInputs, gradPtrs, state);
            QCOMPARE(dx.shape, f.x.shape);
            for (const auto &g : grads)
                QVERIFY(std::all_of(g.data.begin(), g.data.end(), [](float v) { return v == 1.0f; }));
        }
    }

    // Batches big enough for the gemm, the row passes and the im2col blocks (16 MB: the first
    // case needs two) to split: the same values bit for bit in an arena of 1 thread and of 4,
    // and still the reference's.
    void resultsDoNotDependOnThreadCount()
    {
        struct Case
        {
            const char *cls, *config;
            Shape sample;
            std::int64_t batch;
        };
        const Case cases[] = {
            {"Conv2D", R"({"filters": 16, "kernel_size": 3, "padding": "same", "activation": "tanh"})", {64, 64, 16}, 8},
            {"Conv1D", R"({"filters": 8, "kernel_size": 5, "strides": 2, "padding": "same"})", {600, 8}, 20},
            {"Conv2D", R"({"filters": 32, "kernel_size": 1})", {32, 32, 16}, 4},
            {"MaxPooling2D", R"({"pool_size": 3, "strides": 2, "padding": "same"})", {64, 64, 16}, 8},
            {"AveragePooling2D", "{}", {64, 64, 16}, 8},
            {"GlobalAveragePooling2D", "{}", {64, 64, 16}, 8},
            {"GlobalMaxPooling1D", "{}", {512, 16}, 64},
        };
        for (const auto &c : cases) {
            const Fixture f = fixture(c.cls, json::parse(c.config), c.sample, c.batch);
            QVERIFY(f.layer);
            const Passes one = runInArena(1, f), four = runInArena(4, f);
            QVERIFY2(one.out == four.out, c.cls);
            QVERIFY2(one.dx == four.dx, c.cls);
            QVERIFY2(one.grads == four.grads, c.cls);
        }

        // The blocked im2col path against the reference and finite differences (tanh: a kernel
        // weight moves every output, and ReLU's kink would be crossed somewhere).
        Fixture big = fixture("Conv2D", json::parse(cases[0].config), cases[0].sample, cases[0].batch);
        QVERIFY(big.layer);
        Shape outSample;
        compareValues(big.forward(), convRef(big, outSample), 1e-4);
        checkLayerGradients(big, 1e-2f, 8);
    }

    // The direct kernels and im2col + gemm give the same passes (up to the order of the sums)
    // on shapes that exercise every block and tail of the direct kernels.
    void directAndIm2colPathsAgree()
    {
        struct Case
        {
            const char *config;
            Shape sample;
            std::int64_t batch;
        };
        const Case cases[] = {
            {R"({"filters": 16, "kernel_size": 3, "padding": "same"})", {48, 48, 3}, 4},
            {R"({"filters": 32, "kernel_size": 3, "padding": "same", "activation": "relu"})", {24, 24, 16}, 3},
            {R"({"filters": 40, "kernel_size": [5, 3], "padding": "valid"})", {13, 11, 24}, 2},
            {R"({"filters": 8, "kernel_size": 3, "strides": [2, 1], "padding": "same"})", {17, 15, 8}, 3},
            {R"({"filters": 24, "kernel_size": 7, "strides": 3})", {23, 29, 5}, 2},
        };
        for (const auto &c : cases) {
            const Fixture f = fixture("Conv2D", json::parse(c.config), c.sample, c.batch);
            QVERIFY(f.layer);
            sluice::train::detail::setDirectConvEnabled(false);
            const Passes viaGemm = runPasses(f);
            sluice::train::detail::setDirectConvEnabled(true);
            const Passes direct = runPasses(f);
            const auto close = [&](const std::vector<float> &got, const std::vector<float> &want) {
                if (got.size() != want.size())
                    return false;
                for (std::size_t i = 0; i < got.size(); ++i)
                    if (std::abs(got[i] - want[i]) > 1e-4f * (1.0f + std::abs(want[i])))
                        return false;
                return true;
            };
            QVERIFY2(close(direct.out, viaGemm.out), c.config);
            QVERIFY2(close(direct.dx, viaGemm.dx), c.config);
            for (std::size_t i = 0; i < direct.grads.size(); ++i)
                QVERIFY2(close(direct.grads[i], viaGemm.grads[i]), c.config);
        }
    }

    // --- Keras's layouts, defaults and initializers -------------------------------------------

    void kerasShapesParamsAndDefaults()
    {
        auto conv1 = createLayer("Conv1D", "c1", json{{"filters", 8}, {"kernel_size", 3}});
        QVERIFY(conv1.ok());
        QCOMPARE((*conv1)->className(), std::string("Conv1D"));
        QCOMPARE((*conv1)->build({{10, 4}}).value(), (Shape{8, 8}));
        auto p1 = (*conv1)->params();
        QCOMPARE(p1.size(), std::size_t(2));
        QCOMPARE(p1[0].name, std::string("kernel"));
        QCOMPARE(p1[0].shape, (Shape{3, 4, 8}));
        QCOMPARE(p1[0].initializer, std::string("glorot_uniform"));
        QCOMPARE(p1[1].name, std::string("bias"));
        QCOMPARE(p1[1].shape, (Shape{8}));
        QCOMPARE(p1[1].initializer, std::string("zeros"));
        // What the CUDA backend is told: the convolution's kind, filters and window.
        QVERIFY((*conv1)->kernelSpec().kind == LayerKernelSpec::Kind::Conv);
        QCOMPARE((*conv1)->kernelSpec().units, std::int64_t(8));

        auto conv2 = createLayer("Conv2D", "c2",
                                 json{{"filters", 6}, {"kernel_size", {3, 2}}, {"strides", 2}, {"padding", "same"}, {"use_bias", false},
                                      {"kernel_initializer", "he_normal"}});
        QVERIFY(conv2.ok());
        QCOMPARE((*conv2)->className(), std::string("Conv2D"));
        QCOMPARE((*conv2)->build({{7, 5, 3}}).value(), (Shape{4, 3, 6}));
        auto p2 = (*conv2)->params();
        QCOMPARE(p2.size(), std::size_t(1));
        QCOMPARE(p2[0].shape, (Shape{3, 2, 3, 6}));
        QCOMPARE(p2[0].initializer, std::string("he_normal"));

        // A Keras get_config() object, nested under "config", with its bookkeeping keys.
        auto keras = createLayer("Conv2D", "k", json::parse(R"({"config": {"name": "k", "trainable": true, "dtype": "float32",
            "filters": 2, "kernel_size": [3, 3], "strides": [1, 1], "padding": "valid", "data_format": "channels_last",
            "dilation_rate": [1, 1], "groups": 1, "activation": null, "use_bias": true, "kernel_initializer": "glorot_uniform",
            "bias_initializer": "zeros"}})"));
        QVERIFY2(keras.ok(), keras.ok() ? "" : keras.error().message().c_str());
        QCOMPARE((*keras)->build({{4, 4, 1}}).value(), (Shape{2, 2, 2}));

        const std::vector<std::tuple<std::string, json, Shape, Shape>> pools = {
            {"MaxPooling2D", json::object(), {6, 6, 3}, {3, 3, 3}},
            {"MaxPooling1D", json{{"data_format", nullptr}}, {7, 2}, {3, 2}},
            {"AveragePooling1D", json{{"pool_size", 3}, {"strides", 1}}, {5, 2}, {3, 2}},
            {"AveragePooling2D", json{{"pool_size", {2, 3}}, {"padding", "same"}}, {5, 7, 1}, {3, 3, 1}},
            {"GlobalMaxPooling2D", json{{"keepdims", true}}, {4, 5, 3}, {1, 1, 3}},
            {"GlobalAveragePooling1D", json::object(), {4, 3}, {3}},
            {"GlobalAveragePooling1D", json{{"keepdims", true}}, {4, 3}, {1, 3}},
        };
        for (const auto &[cls, config, in, out] : pools) {
            auto layer = createLayer(cls, "p", config);
            QVERIFY2(layer.ok(), layer.ok() ? "" : layer.error().message().c_str());
            QCOMPARE((*layer)->className(), cls);
            const auto built = (*layer)->build({in});
            QVERIFY2(built.ok(), built.ok() ? "" : built.error().message().c_str());
            QCOMPARE(built.value(), out);
            QVERIFY((*layer)->params().empty());
            const auto kind = (*layer)->kernelSpec().kind;
            QVERIFY(kind == (cls.find("Global") == 0 ? LayerKernelSpec::Kind::GlobalPooling : LayerKernelSpec::Kind::Pooling));
        }
    }

    // Keras's fans for convolution kernels: fan_in = receptive field * channels, fan_out =
    // receptive field * filters.
    void kernelInitializersUseKerasFans()
    {
        const std::vector<std::tuple<std::string, Shape, std::string, double>> cases = {
            {"Conv2D", {9, 9, 4}, "glorot_uniform", std::sqrt(6.0 / (3 * 3 * 4 + 3 * 3 * 8))},
            {"Conv1D", {9, 8}, "glorot_uniform", std::sqrt(6.0 / (5 * 8 + 5 * 16))},
            {"Conv2D", {9, 9, 4}, "he_uniform", std::sqrt(6.0 / (3 * 3 * 4))},
        };
        for (const auto &[cls, sample, initializer, limit] : cases) {
            const json config = cls == "Conv2D" ? json{{"filters", 8}, {"kernel_size", 3}, {"kernel_initializer", initializer}}
                                                : json{{"filters", 16}, {"kernel_size", 5}, {"kernel_initializer", initializer}};
            auto layer = createLayer(cls, "c", config);
            QVERIFY(layer.ok());
            QVERIFY((*layer)->build({sample}).ok());
            const ParamSpec kernel = (*layer)->params()[0];
            std::vector<float> v(std::size_t(shapeCount(kernel.shape)));
            const Status s = initialize(kernel.initializer, kernel.shape, 7, "c/kernel", v);
            QVERIFY2(s.ok(), s.ok() ? "" : s.error().message().c_str());
            const QString what = QString::fromStdString(cls + " " + initializer);
            QVERIFY2(std::all_of(v.begin(), v.end(), [&](float x) { return std::abs(x) <= limit; }), qPrintable(what));
            QVERIFY2(*std::max_element(v.begin(), v.end()) > 0.9 * limit, qPrintable(what));
            QVERIFY2(*std::min_element(v.begin(), v.end()) < -0.9 * limit, qPrintable(what));
        }
    }

    // --- Errors ---------------------------------------------------------------------------------

    void configErrors_data()
    {
        QTest::addColumn<QString>("cls");
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("expected");
        // Messages as for every layer: "<layer>: <class> parameter '<key>': <problem>".
        QTest::newRow("bad padding") << "Conv2D" << R"({"filters": 2, "kernel_size": 3, "padding": "full"})"
                                     << R"(c: Conv2D parameter 'padding': expected "valid" or "same", got "full")";
        QTest::newRow("causal padding") << "Conv1D" << R"({"filters": 2, "kernel_size": 3, "padding": "causal"})"
                                        << R"(c: Conv1D parameter 'padding': expected "valid" or "same" (causal padding is not supported), got "causal")";
        QTest::newRow("padding number") << "MaxPooling1D" << R"({"padding": 1})" << "c: MaxPooling1D parameter 'padding': expected a string, got 1";
        QTest::newRow("pooling bad padding") << "AveragePooling2D" << R"({"padding": "full"})"
                                             << R"(c: AveragePooling2D parameter 'padding': expected "valid" or "same", got "full")";
        QTest::newRow("conv channels_first") << "Conv2D" << R"({"filters": 2, "kernel_size": 3, "data_format": "channels_first"})"
                                             << R"(c: Conv2D parameter 'data_format': only "channels_last" is supported (inputs [batch, ..., channels]), got "channels_first")";
        QTest::newRow("conv1d channels_first") << "Conv1D" << R"({"filters": 2, "kernel_size": 3, "data_format": "channels_first"})"
                                               << R"(c: Conv1D parameter 'data_format': only "channels_last" is supported)";
        QTest::newRow("pooling channels_first") << "AveragePooling2D" << R"({"data_format": "channels_first"})"
                                                << R"(c: AveragePooling2D parameter 'data_format': only "channels_last" is supported)";
        QTest::newRow("global channels_first") << "GlobalMaxPooling1D" << R"({"data_format": "channels_first"})"
                                               << R"(c: GlobalMaxPooling1D parameter 'data_format': only "channels_last" is supported)";
        QTest::newRow("strides with dilation") << "Conv1D" << R"({"filters": 2, "kernel_size": 3, "strides": 2, "dilation_rate": 2})"
                                               << "c: Conv1D parameter 'dilation_rate': above 1 cannot be combined with strides above 1 "
                                                  "(Keras refuses it too), got dilation_rate (2,) and strides (2,)";
        QTest::newRow("strides with dilation on other axes") << "Conv2D" << R"({"filters": 2, "kernel_size": 3, "strides": [2, 1], "dilation_rate": [1, 2]})"
                                                             << "c: Conv2D parameter 'dilation_rate': above 1 cannot be combined with strides above 1";
        QTest::newRow("kernel_size list too short") << "Conv2D" << R"({"filters": 2, "kernel_size": [3]})"
                                                    << "c: Conv2D parameter 'kernel_size': expected a whole number at least 1 or a list of 2 such numbers, got [3]";
        QTest::newRow("kernel_size zero") << "Conv1D" << R"({"filters": 2, "kernel_size": 0})"
                                          << "c: Conv1D parameter 'kernel_size': expected a whole number at least 1, got 0";
        QTest::newRow("kernel_size zero in a list") << "Conv2D" << R"({"filters": 2, "kernel_size": [3, 0]})"
                                                    << "'kernel_size': expected a whole number at least 1 or a list of 2 such numbers, got [3,0]";
        QTest::newRow("kernel_size text") << "Conv2D" << R"({"filters": 2, "kernel_size": "3x3"})"
                                          << "'kernel_size': expected a whole number at least 1, got \"3x3\"";
        QTest::newRow("kernel_size list of text") << "Conv2D" << R"({"filters": 2, "kernel_size": ["3", "3"]})"
                                                  << "'kernel_size': expected a list of whole numbers, got [\"3\",\"3\"]";
        QTest::newRow("missing kernel_size") << "Conv1D" << R"({"filters": 2})"
                                             << "c: Conv1D parameter 'kernel_size': missing (a whole number at least 1 or a list of 1 such number)";
        QTest::newRow("missing filters") << "Conv2D" << R"({"kernel_size": 3})" << "c: Conv2D parameter 'filters': missing (a whole number at least 1)";
        QTest::newRow("zero filters") << "Conv2D" << R"({"filters": 0, "kernel_size": 3})" << "'filters': expected a whole number at least 1, got 0";
        QTest::newRow("groups") << "Conv2D" << R"({"filters": 4, "kernel_size": 3, "groups": 2})"
                                << "c: Conv2D parameter 'groups': only 1 is supported (grouped convolutions are not), got 2";
        QTest::newRow("unknown activation") << "Conv1D" << R"({"filters": 2, "kernel_size": 3, "activation": "swish"})"
                                            << "c: Conv1D parameter 'activation': ";
        QTest::newRow("unknown key") << "Conv2D" << R"({"filters": 2, "kernel_size": 3, "depth_multiplier": 1})"
                                     << "c: Conv2D parameter 'depth_multiplier': unknown key for Conv2D; known keys: ";
        QTest::newRow("pool strides zero") << "MaxPooling2D" << R"({"strides": 0})" << "c: MaxPooling2D parameter 'strides': expected a whole number at least 1, got 0";
        QTest::newRow("pool_size of three") << "MaxPooling2D" << R"({"pool_size": [2, 2, 2]})"
                                            << "'pool_size': expected a whole number at least 1 or a list of 2 such numbers, got [2,2,2]";
        QTest::newRow("pool dilation") << "MaxPooling1D" << R"({"dilation_rate": 2})" << "c: MaxPooling1D parameter 'dilation_rate': unknown key for MaxPooling1D";
        QTest::newRow("keepdims text") << "GlobalAveragePooling2D" << R"({"keepdims": "yes"})"
                                       << "c: GlobalAveragePooling2D parameter 'keepdims': expected true or false, got \"yes\"";
        QTest::newRow("global pool_size") << "GlobalAveragePooling1D" << R"({"pool_size": 2})"
                                          << "c: GlobalAveragePooling1D parameter 'pool_size': unknown key for GlobalAveragePooling1D";
    }
    void configErrors()
    {
        QFETCH(QString, cls);
        QFETCH(QString, config);
        QFETCH(QString, expected);
        auto made = createLayer(cls.toStdString(), "c", json::parse(config.toStdString()));
        QVERIFY2(!made.ok(), "the layer was created");
        QCOMPARE(made.error().what, std::string("c"));
        QVERIFY2(made.error().message().find(expected.toStdString()) != std::string::npos, made.error().message().c_str());
    }

    void buildErrorsNameTheLayerAndTheShape_data()
    {
        QTest::addColumn<QString>("cls");
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("shapes");
        QTest::addColumn<QString>("expected");
        QTest::newRow("kernel larger than the input") << "Conv2D" << R"({"filters": 2, "kernel_size": 5})" << "[[4, 4, 3]]"
                                                      << R"(c: Conv2D kernel_size (5, 5) does not fit inputs of shape (4, 4, 3) with padding "valid")";
        QTest::newRow("kernel larger on one axis") << "Conv2D" << R"({"filters": 2, "kernel_size": [2, 6]})" << "[[4, 5, 3]]"
                                                   << R"(c: Conv2D kernel_size (2, 6) does not fit inputs of shape (4, 5, 3) with padding "valid")";
        QTest::newRow("dilated kernel larger than the input") << "Conv1D" << R"({"filters": 2, "kernel_size": 3, "dilation_rate": 3})" << "[[6, 2]]"
                                                              << R"(c: Conv1D kernel_size (3,) with dilation_rate (3,) does not fit inputs of shape (6, 2) with padding "valid")";
        QTest::newRow("conv2d on sequences") << "Conv2D" << R"({"filters": 2, "kernel_size": 3})" << "[[8, 3]]"
                                             << "c: Conv2D expects inputs of shape (height, width, channels) per sample, got shape (8, 3)";
        QTest::newRow("conv1d on vectors") << "Conv1D" << R"({"filters": 2, "kernel_size": 3})" << "[[8]]"
                                           << "c: Conv1D expects inputs of shape (steps, channels) per sample, got shape (8,)";
        QTest::newRow("unknown steps") << "Conv1D" << R"({"filters": 2, "kernel_size": 3})" << "[[-1, 3]]"
                                       << "c: Conv1D needs known, non-zero input dimensions, got shape (None, 3)";
        QTest::newRow("two inputs") << "Conv1D" << R"({"filters": 2, "kernel_size": 3})" << "[[4, 3], [4, 3]]" << "c: Conv1D expects 1 input, got 2";
        QTest::newRow("pool larger than the input") << "MaxPooling2D" << R"({"pool_size": 3})" << "[[2, 5, 1]]"
                                                    << R"(c: MaxPooling2D pool_size (3, 3) does not fit inputs of shape (2, 5, 1) with padding "valid")";
        QTest::newRow("pool1d rank") << "AveragePooling1D" << "{}" << "[[4, 5, 3]]"
                                     << "c: AveragePooling1D expects inputs of shape (steps, channels) per sample, got shape (4, 5, 3)";
        QTest::newRow("global rank") << "GlobalAveragePooling2D" << "{}" << "[[4, 3]]"
                                     << "c: GlobalAveragePooling2D expects inputs of shape (height, width, channels) per sample, got shape (4, 3)";
        QTest::newRow("global zero channels") << "GlobalMaxPooling1D" << "{}" << "[[4, 0]]"
                                              << "c: GlobalMaxPooling1D needs known, non-zero input dimensions, got shape (4, 0)";
    }
    void buildErrorsNameTheLayerAndTheShape()
    {
        QFETCH(QString, cls);
        QFETCH(QString, config);
        QFETCH(QString, shapes);
        QFETCH(QString, expected);
        auto made = createLayer(cls.toStdString(), "c", json::parse(config.toStdString()));
        QVERIFY2(made.ok(), made.ok() ? "" : made.error().message().c_str());
        const auto built = (*made)->build(json::parse(shapes.toStdString()).get<std::vector<Shape>>());
        QVERIFY(!built.ok());
        QCOMPARE(built.error().what, std::string("c"));
        QCOMPARE(QString::fromStdString(built.error().message()), expected);
    }

    // --- PyTorch's values ---------------------------------------------------------------------

    void matchesPyTorchReference_data()
    {
        QTest::addColumn<int>("index");
        const json &cases = test::trainReference("conv_reference.json")["cases"];
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i]["name"].get<std::string>().c_str()) << int(i);
    }
    void matchesPyTorchReference()
    {
        QFETCH(int, index);
        const json &c = test::trainReference("conv_reference.json")["cases"][std::size_t(index)];
        auto made = createLayer(c["class_name"].get<std::string>(), "ref", c["config"]);
        QVERIFY2(made.ok(), made.ok() ? "" : made.error().message().c_str());
        const FloatTensor x = test::tensorFrom(c["x"]);
        const Shape sample(x.shape.begin() + 1, x.shape.end());
        QVERIFY((*made)->build({sample}).ok());
        const Layer &layer = **made;
        std::vector<FloatTensor> params;
        std::vector<const float *> paramPtrs;
        for (const auto &p : c["params"])
            params.push_back(test::tensorFrom(p));
        const auto specs = layer.params();
        QCOMPARE(specs.size(), params.size());
        for (std::size_t i = 0; i < params.size(); ++i) {
            QCOMPARE(specs[i].shape, params[i].shape);
            paramPtrs.push_back(params[i].ptr());
        }

        auto expectClose = [](const char *what, const FloatTensor &got, const FloatTensor &want) {
            QCOMPARE(got.shape, want.shape);
            for (std::size_t i = 0; i < want.size(); ++i)
                QVERIFY2(test::closeTo(got.data[i], want.data[i], 1e-5),
                         qPrintable(QString("%1[%2]: got %3, torch %4").arg(what).arg(i).arg(got.data[i], 0, 'g', 9).arg(want.data[i], 0, 'g', 9)));
        };
        LayerState state;
        FloatTensor y;
        const FloatTensor *in[] = {&x};
        layer.forward(PassContext{}, paramPtrs, in, y, state);
        expectClose("y", y, test::tensorFrom(c["y"]));

        const FloatTensor dy = test::tensorFrom(c["dy"]);
        FloatTensor dx;
        FloatTensor *dInputs[] = {&dx};
        std::vector<FloatTensor> grads;
        std::vector<float *> gradPtrs;
        for (const auto &p : params)
            grads.emplace_back(p.shape).zero();
        for (auto &g : grads)
            gradPtrs.push_back(g.ptr());
        layer.backward(PassContext{}, paramPtrs, in, y, dy, dInputs, gradPtrs, state);
        expectClose("dx", dx, test::tensorFrom(c["dx"]));
        for (std::size_t i = 0; i < grads.size(); ++i)
            expectClose(specs[i].name.c_str(), grads[i], test::tensorFrom(c["grads"][i]));
    }
};

QTEST_GUILESS_MAIN(TestTrainConv)
#include "tst_train_conv.moc"
