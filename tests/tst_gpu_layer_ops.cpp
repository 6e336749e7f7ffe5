// Each layer's GPU pass (train/gpu/gpu_layer_ops.h) against the same CPU layer, one layer at a
// time, on fresh random data (SLUICE_TEST_SEED=<n> replays a run): the forward output, the input
// gradient and the weight gradients (ADDED onto non-zero starting values, as layers must), with
// every output buffer poisoned with NaN first so an element left unwritten fails. fp32 products:
// relative error (per element, floored by the array's rms) under 1e-4. Passes are training
// passes with a loss scale (BatchNormalization's moving statistics get their updates), except
// the rows marked inference, whose forward pass alone is compared.
//
// Without a GPU the CPU half runs (every row's layer builds and is accepted for GPUs) and the GPU
// half is skipped with the reason; without a CUDA build everything is.
#include "train/gpu/device_query.h"

#include <QtTest>

#ifdef SLUICE_HAVE_CUDA
#include "train/cuda/blas.h"
#include "train/cuda/device_buffer.h"
#include "train/gpu/gpu_layer_ops.h"
#include "train/model/layer_registry.h"

#include <algorithm>
#include <cmath>
#include <random>
#endif

using namespace sluice;

#ifdef SLUICE_HAVE_CUDA
using namespace sluice::train;
using cuda::DeviceBuffer;

namespace {

std::mt19937 &rng()
{
    static std::mt19937 gen = [] {
        const QByteArray fixed = qgetenv("SLUICE_TEST_SEED");
        const unsigned seed = fixed.isEmpty() ? std::random_device{}() : fixed.toUInt();
        qInfo("tst_gpu_layer_ops: random seed %u (SLUICE_TEST_SEED=%u replays it)", seed, seed);
        return std::mt19937(seed);
    }();
    return gen;
}

std::vector<float> uniform(std::size_t n)
{
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto &x : v)
        x = d(rng());
    return v;
}

double maxRelativeError(const std::vector<float> &gpu, const std::vector<float> &cpu)
{
    double sq = 0;
    for (float c : cpu)
        sq += double(c) * c;
    const double floor = std::max(std::sqrt(sq / double(std::max<std::size_t>(cpu.size(), 1))), 1e-12);
    double worst = gpu.size() == cpu.size() ? 0.0 : INFINITY;
    for (std::size_t i = 0; i < std::min(gpu.size(), cpu.size()); ++i) {
        const double e = std::abs(double(gpu[i]) - double(cpu[i])) / std::max(std::abs(double(cpu[i])), floor);
        worst = std::isnan(e) ? INFINITY : std::max(worst, e);
    }
    return worst;
}

DeviceBuffer<float> poisoned(std::size_t n, cuda::Stream s)
{
    DeviceBuffer<float> b(n);
    b.poison(s);
    return b;
}

} // namespace
#endif

class TestGpuLayerOps : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void layersMatchTheCpu_data();
    void layersMatchTheCpu();

#ifdef SLUICE_HAVE_CUDA
private:
    cuda::Stream m_stream = nullptr;
    std::unique_ptr<cuda::Blas> m_blas;
    QString m_noGpu; // why the GPU half is skipped; empty where it runs
#endif
};

void TestGpuLayerOps::initTestCase()
{
#ifndef SLUICE_HAVE_CUDA
    QSKIP("built without CUDA: no GPU layer passes to test");
#else
    const DeviceQuery q = queryGpuDevices();
    if (q.devices.empty()) {
        m_noGpu = "no GPU on this machine (" + QString::fromStdString(q.reason) + "): the CPU reference ran, the GPU pass is skipped";
        return;
    }
    cuda::setDevice(0);
    m_stream = cuda::createStream();
    m_blas = std::make_unique<cuda::Blas>();
    rng();
#endif
}

void TestGpuLayerOps::cleanupTestCase()
{
#ifdef SLUICE_HAVE_CUDA
    m_blas.reset();
    if (m_stream)
        cuda::destroyStream(m_stream);
#endif
}

void TestGpuLayerOps::layersMatchTheCpu_data()
{
    QTest::addColumn<QString>("className");
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("inputShapes"); // per sample, ";" between inputs
    QTest::addColumn<bool>("training");
    auto row = [](const char *tag, const char *className, const char *config, const char *inputShapes, bool training = true) {
        QTest::newRow(tag) << QString::fromLatin1(className) << QString::fromLatin1(config) << QString::fromLatin1(inputShapes) << training;
    };
    row("Dense relu", "Dense", R"({"units": 24, "activation": "relu"})", "33");
    row("Dense gelu on sequences", "Dense", R"({"units": 16, "activation": "gelu"})", "5,12");
    row("Dense softmax, no bias", "Dense", R"({"units": 10, "activation": "softmax", "use_bias": false})", "20");
    row("Activation tanh", "Activation", R"({"activation": "tanh"})", "7,9");
    row("LayerNormalization", "LayerNormalization", R"({})", "4,40");
    row("LayerNormalization, no scale", "LayerNormalization", R"({"scale": false})", "40");
    row("Dropout", "Dropout", R"({"rate": 0.3, "seed": 5})", "50");
    row("Concatenate", "Concatenate", R"({})", "6;3;11");
    row("Reshape", "Reshape", R"({"target_shape": [6, 4]})", "24");
    row("RepeatVector", "RepeatVector", R"({"n": 3})", "9");
    row("GRU", "GRU", R"({"units": 12})", "7,5");
    row("GRU sequences", "GRU", R"({"units": 8, "return_sequences": true})", "6,4");
    row("LSTM", "LSTM", R"({"units": 10})", "7,5");
    row("LSTM sequences, no bias", "LSTM", R"({"units": 6, "return_sequences": true, "use_bias": false})", "5,3");
    row("Conv2D 3x3 same relu", "Conv2D", R"({"filters": 5, "kernel_size": 3, "padding": "same", "activation": "relu"})", "6,7,3");
    row("Conv2D 3x2 strides 2x1 gelu, no bias", "Conv2D",
        R"({"filters": 4, "kernel_size": [3, 2], "strides": [2, 1], "activation": "gelu", "use_bias": false})", "9,6,2");
    row("Conv2D dilated same tanh", "Conv2D", R"({"filters": 3, "kernel_size": 3, "dilation_rate": 2, "padding": "same", "activation": "tanh"})",
        "7,8,2");
    row("Conv2D 1x1", "Conv2D", R"({"filters": 6, "kernel_size": 1})", "4,5,3");
    row("Conv1D 4 strides 3 same sigmoid", "Conv1D", R"({"filters": 4, "kernel_size": 4, "strides": 3, "padding": "same", "activation": "sigmoid"})",
        "11,3");
    row("Conv1D valid softmax", "Conv1D", R"({"filters": 5, "kernel_size": 3, "activation": "softmax"})", "9,4");
    row("MaxPooling2D 3x3 strides 2 same", "MaxPooling2D", R"({"pool_size": 3, "strides": 2, "padding": "same"})", "7,6,3");
    row("MaxPooling2D inference", "MaxPooling2D", R"({})", "6,6,2", false);
    row("AveragePooling2D 2x3 strides 1 same", "AveragePooling2D", R"({"pool_size": [2, 3], "strides": 1, "padding": "same"})", "5,6,2");
    row("MaxPooling1D", "MaxPooling1D", R"({})", "9,4");
    row("AveragePooling1D 3 strides 2", "AveragePooling1D", R"({"pool_size": 3, "strides": 2})", "10,3");
    row("GlobalAveragePooling2D", "GlobalAveragePooling2D", R"({})", "5,4,6");
    row("GlobalMaxPooling2D keepdims", "GlobalMaxPooling2D", R"({"keepdims": true})", "5,4,6");
    row("GlobalAveragePooling1D keepdims", "GlobalAveragePooling1D", R"({"keepdims": true})", "8,5");
    row("GlobalMaxPooling1D", "GlobalMaxPooling1D", R"({})", "8,5");
    row("GlobalMaxPooling1D inference", "GlobalMaxPooling1D", R"({})", "8,5", false);
    row("BatchNormalization on images", "BatchNormalization", R"({})", "6,5,4");
    row("BatchNormalization, no center", "BatchNormalization", R"({"center": false, "momentum": 0.9})", "7");
    row("BatchNormalization inference", "BatchNormalization", R"({"epsilon": 0.01})", "3,8", false);
}

void TestGpuLayerOps::layersMatchTheCpu()
{
#ifdef SLUICE_HAVE_CUDA
    QFETCH(QString, className);
    QFETCH(QString, config);
    QFETCH(QString, inputShapes);
    QFETCH(bool, training);
    auto made = createLayer(className.toStdString(), "layer", nlohmann::json::parse(config.toStdString()));
    QVERIFY2(made.ok(), made.ok() ? "" : made.error().message().c_str());
    Layer &layer = **made;
    std::vector<Shape> shapes;
    for (const QString &part : inputShapes.split(';')) {
        Shape s;
        for (const QString &d : part.split(','))
            s.push_back(d.toLongLong());
        shapes.push_back(s);
    }
    auto built = layer.build(shapes);
    QVERIFY(built.ok());
    const Shape outShape = *built;
    std::string why;
    QVERIFY2(gpu::supportedOnGpu(layer, shapes, outShape, why), why.c_str());

    const std::int64_t B = 37;
    PassContext ctx;
    ctx.training = training;
    ctx.seed = 3;
    ctx.step = 2;
    ctx.globalRowOffset = 5;
    ctx.lossScale = 1.0 / 64; // this replica's 37 rows of a global batch of 64

    // CPU reference.
    std::vector<FloatTensor> inputs(shapes.size());
    std::vector<const FloatTensor *> inputPtrs;
    for (std::size_t j = 0; j < shapes.size(); ++j) {
        Shape s{B};
        s.insert(s.end(), shapes[j].begin(), shapes[j].end());
        inputs[j].resize(s);
        inputs[j].data = uniform(inputs[j].size());
        inputPtrs.push_back(&inputs[j]);
    }
    std::vector<std::vector<float>> params, grads0;
    std::vector<const float *> paramPtrs;
    for (const auto &p : layer.params()) {
        params.push_back(uniform(std::size_t(shapeCount(p.shape))));
        if (p.name == "moving_variance") // a variance: inference divides by its square root
            for (auto &v : params.back())
                v = 0.5f + std::abs(v);
        grads0.push_back(uniform(params.back().size())); // gradients are ADDED onto what is there
    }
    for (const auto &p : params)
        paramPtrs.push_back(p.data());
    FloatTensor out;
    LayerState state;
    layer.forward(ctx, paramPtrs, inputPtrs, out, state);
    FloatTensor dOut;
    dOut.resize(out.shape);
    dOut.data = uniform(dOut.size());
    std::vector<FloatTensor> dIn(shapes.size());
    std::vector<FloatTensor *> dInPtrs;
    for (auto &d : dIn)
        dInPtrs.push_back(&d);
    auto cpuGrads = grads0;
    std::vector<float *> gradPtrs;
    for (auto &g : cpuGrads)
        gradPtrs.push_back(g.data());
    // An inference pass has no backward pass (max pooling keeps no maxima for one).
    if (training)
        layer.backward(ctx, paramPtrs, inputPtrs, out, dOut, dInPtrs, gradPtrs, state);

    if (!m_noGpu.isEmpty())
        QSKIP(qPrintable(m_noGpu));
    // The GPU pass on the same values.
    const cuda::Stream s = m_stream;
    std::vector<DeviceBuffer<float>> dInputs, dParams, dGrads, dDIn;
    gpu::LayerCall call;
    call.layer = &layer;
    call.spec = layer.kernelSpec();
    call.rows = B;
    call.inputShapes = shapes;
    call.outputShape = outShape;
    for (const auto &in : inputs)
        dInputs.push_back(cuda::toDevice<float>(in.data, s));
    for (const auto &d : dInputs)
        call.inputs.push_back(d.data());
    for (std::size_t i = 0; i < params.size(); ++i) {
        dParams.push_back(cuda::toDevice<float>(params[i], s));
        dGrads.push_back(cuda::toDevice<float>(grads0[i], s));
        call.params.push_back(dParams.back().data());
    }
    gpu::DeviceContext dc{s, m_blas.get(), cuda::GemmMode::Fp32, false};
    gpu::LayerScratch scratch;
    auto gpuOut = poisoned(out.size(), s);
    gpu::layerForward(dc, call, ctx, gpuOut.data(), scratch);
    const double forwardError = maxRelativeError(gpuOut.download(s), out.data);
    QVERIFY2(forwardError < 1e-4, qPrintable(QString("forward: relative error %1").arg(forwardError)));
    if (!training)
        return;

    auto gpuDOut = cuda::toDevice<float>(dOut.data, s);
    std::vector<float *> dInGpuPtrs, gradGpuPtrs;
    for (const auto &in : inputs) {
        dDIn.push_back(poisoned(in.size(), s));
        dInGpuPtrs.push_back(dDIn.back().data());
    }
    for (auto &g : dGrads)
        gradGpuPtrs.push_back(g.data());
    gpu::layerBackward(dc, call, ctx, gpuOut.data(), gpuDOut.data(), dInGpuPtrs, gradGpuPtrs, scratch);
    for (std::size_t j = 0; j < dIn.size(); ++j) {
        const double e = maxRelativeError(dDIn[j].download(s), dIn[j].data);
        QVERIFY2(e < 1e-4, qPrintable(QString("input %1 gradient: relative error %2").arg(j).arg(e)));
    }
    for (std::size_t i = 0; i < dGrads.size(); ++i) {
        const double e = maxRelativeError(dGrads[i].download(s), cpuGrads[i]);
        QVERIFY2(e < 1e-4, qPrintable(QString("gradient of %1: relative error %2").arg(QString::fromStdString(layer.params()[i].name)).arg(e)));
    }
#endif
}

QTEST_GUILESS_MAIN(TestGpuLayerOps)
#include "tst_gpu_layer_ops.moc"
