// Each layer's GPU pass (train/gpu/gpu_layer_ops.h) against the same CPU layer, one layer at a
// time, on fresh random data (SLUICE_TEST_SEED=<n> replays a run): the forward output, the input
// gradient and the weight gradients (ADDED onto non-zero starting values, as layers must), with
// every output buffer poisoned with NaN first so an element left unwritten fails. fp32 products:
// relative error (per element, floored by the array's rms) under 1e-4.
//
// Without a GPU the CPU half runs (every row's layer builds and is accepted for GPUs) and the GPU
// half is skipped with the reason; without a CUDA build everything is.
#include "train/device_query.h"

#include <QtTest>

#ifdef SLUICE_HAVE_CUDA
#include "train/cuda/blas.h"
#include "train/cuda/device_buffer.h"
#include "train/gpu/gpu_layer_ops.h"
#include "train/layer_registry.h"

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
    QTest::newRow("Dense relu") << "Dense" << R"({"units": 24, "activation": "relu"})" << "33";
    QTest::newRow("Dense gelu on sequences") << "Dense" << R"({"units": 16, "activation": "gelu"})" << "5,12";
    QTest::newRow("Dense softmax, no bias") << "Dense" << R"({"units": 10, "activation": "softmax", "use_bias": false})" << "20";
    QTest::newRow("Activation tanh") << "Activation" << R"({"activation": "tanh"})" << "7,9";
    QTest::newRow("LayerNormalization") << "LayerNormalization" << R"({})" << "4,40";
    QTest::newRow("LayerNormalization, no scale") << "LayerNormalization" << R"({"scale": false})" << "40";
    QTest::newRow("Dropout") << "Dropout" << R"({"rate": 0.3, "seed": 5})" << "50";
    QTest::newRow("Concatenate") << "Concatenate" << R"({})" << "6;3;11";
    QTest::newRow("Reshape") << "Reshape" << R"({"target_shape": [6, 4]})" << "24";
    QTest::newRow("RepeatVector") << "RepeatVector" << R"({"n": 3})" << "9";
    QTest::newRow("GRU") << "GRU" << R"({"units": 12})" << "7,5";
    QTest::newRow("GRU sequences") << "GRU" << R"({"units": 8, "return_sequences": true})" << "6,4";
    QTest::newRow("LSTM") << "LSTM" << R"({"units": 10})" << "7,5";
    QTest::newRow("LSTM sequences, no bias") << "LSTM" << R"({"units": 6, "return_sequences": true, "use_bias": false})" << "5,3";
}

void TestGpuLayerOps::layersMatchTheCpu()
{
#ifdef SLUICE_HAVE_CUDA
    QFETCH(QString, className);
    QFETCH(QString, config);
    QFETCH(QString, inputShapes);
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
    ctx.seed = 3;
    ctx.step = 2;
    ctx.globalRowOffset = 5;

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
