// The CUDA backend's kernels against the CPU backend, on fresh random data each run (the seed
// is printed; SLUICE_TEST_SEED=<n> replays one). Every output buffer is poisoned with NaN
// before its launch, so an element a kernel fails to write shows up as an error.
//
// Relative error: per element |gpu - cpu| / max(|cpu|, rms(cpu)) — the rms floor keeps values
// that cancel to near zero from dominating — and its maximum over the output must stay under
// 1e-5 for fp32 kernels (the column sums: against exact sums, see columnSums). The matrix products in TF32 and bf16 are judged by the normwise error
// ||gpu - cpu|| / ||cpu|| (about 3e-4 and 2e-3 expected; limits 1e-3 and 1e-2).
//
// Without a CUDA build, a GPU or a driver (CI, developer machines) every case is skipped with
// the reason.
#include "train/gpu/device_query.h"

#include <QtTest>

#ifdef SLUICE_HAVE_CUDA
#include "train/model/activations.h"
#include "train/cpu/gemm.h"
#include "train/cuda/kernels/activation_kernels.h"
#include "train/cuda/kernels/batch_norm_kernels.h"
#include "train/cuda/blas.h"
#include "train/cuda/kernels/conv_kernels.h"
#include "train/cuda/device_buffer.h"
#include "train/cuda/kernels/dropout_kernels.h"
#include "train/cuda/kernels/embedding_kernels.h"
#include "train/cuda/kernels/layer_norm_kernels.h"
#include "train/cuda/kernels/loss_kernels.h"
#include "train/cuda/kernels/optimizer_kernels.h"
#include "train/cuda/kernels/pooling_kernels.h"
#include "train/cuda/kernels/reduce_kernels.h"
#include "train/gpu/gpu_layer_ops.h"
#include "train/distribute/gradient_reducer.h"
#include "train/layers/basic_layers.h"
#include "train/layers/conv/conv_geometry.h"
#include "train/layers/conv/conv_layers.h"
#include "train/objectives/loss.h"
#include "train/objectives/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#endif

using namespace sluice;

#ifdef SLUICE_HAVE_CUDA
using namespace sluice::train;
using cuda::DeviceBuffer;
using nlohmann::json;

namespace {

std::mt19937 &rng()
{
    static std::mt19937 gen = [] {
        const QByteArray fixed = qgetenv("SLUICE_TEST_SEED");
        const unsigned seed = fixed.isEmpty() ? std::random_device{}() : fixed.toUInt();
        qInfo("tst_cuda_kernels: random seed %u (SLUICE_TEST_SEED=%u replays it)", seed, seed);
        return std::mt19937(seed);
    }();
    return gen;
}

std::vector<float> uniform(std::size_t n, float lo = -1.0f, float hi = 1.0f)
{
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto &x : v)
        x = d(rng());
    return v;
}

DeviceBuffer<float> upload(const std::vector<float> &host, cuda::Stream s) { return cuda::toDevice<float>(host, s); }

DeviceBuffer<float> poisoned(std::size_t n, cuda::Stream s)
{
    DeviceBuffer<float> b(n);
    b.poison(s);
    return b;
}

// Max over elements of |g - c| / max(|c|, rms(c)); NaN where the CPU has none is infinite.
double maxRelativeError(const std::vector<float> &gpu, const std::vector<float> &cpu)
{
    if (gpu.size() != cpu.size())
        return std::numeric_limits<double>::infinity();
    double sq = 0;
    for (float c : cpu)
        sq += std::isfinite(c) ? double(c) * c : 0.0;
    const double rms = cpu.empty() ? 0.0 : std::sqrt(sq / double(cpu.size()));
    double worst = 0;
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        const double g = gpu[i], c = cpu[i];
        if (std::isnan(c) && std::isnan(g))
            continue;
        if (!std::isfinite(g) || !std::isfinite(c)) {
            if (g != c)
                return std::numeric_limits<double>::infinity();
            continue;
        }
        const double denom = std::max(std::abs(c), rms);
        worst = std::max(worst, denom > 0 ? std::abs(g - c) / denom : std::abs(g - c));
    }
    return worst;
}

double normwiseError(const std::vector<float> &gpu, const std::vector<float> &cpu)
{
    double d = 0, n = 0;
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        if (!std::isfinite(gpu[i]))
            return std::numeric_limits<double>::infinity();
        d += (double(gpu[i]) - cpu[i]) * (double(gpu[i]) - cpu[i]);
        n += double(cpu[i]) * cpu[i];
    }
    return n > 0 ? std::sqrt(d / n) : std::sqrt(d);
}

#define EXPECT_CLOSE(label, gpu, cpu, limit)                                                                            \
    do {                                                                                                                \
        const double err_ = maxRelativeError((gpu), (cpu));                                                             \
        qInfo("%-44s max relative error %.3g", qPrintable(QString(label)), err_);                                      \
        QVERIFY2(err_ < (limit), qPrintable(QStringLiteral("%1: max relative error %2 (limit %3)").arg(label).arg(err_).arg(limit))); \
    } while (0)

#define EXPECT_EQUAL_BITS(label, gpu, cpu)                                                                              \
    do {                                                                                                                \
        QCOMPARE((gpu).size(), (cpu).size());                                                                           \
        QVERIFY2(std::memcmp((gpu).data(), (cpu).data(), (cpu).size() * sizeof(float)) == 0,                            \
                 qPrintable(QStringLiteral("%1: not bit for bit the CPU's").arg(label)));                               \
    } while (0)

constexpr double kFp32 = 1e-5;

FloatTensor tensor(Shape shape, std::vector<float> values)
{
    FloatTensor t(std::move(shape));
    t.data = std::move(values);
    return t;
}

// The kernels' copy of a layer's window, as gpu_conv_ops.cpp hands it to them.
cuda::Window deviceWindow(const detail::Window2D &win) { return gpu::deviceWindow(detail::kernelWindow(win)); }

// A list of ints from "a,b,c".
Shape shapeOf(const QString &s)
{
    Shape out;
    for (const QString &d : s.split(','))
        out.push_back(d.toLongLong());
    return out;
}

} // namespace
#endif

class TestCudaKernels : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void checksAndBuffers();
    void biasActivation_data();
    void biasActivation();
    void softmaxWideRows();
    void columnSums();
    void losses_data();
    void losses();
    void optimizers_data();
    void optimizers();
    void globalNormClipping();
    void layerNormalization_data();
    void layerNormalization();
    void dropoutMasksMatchTheCpu();
    void embeddingMatchesTheCpu();
    void sumOfReplicaBuffers();
    void matrixProducts_data();
    void matrixProducts();
    void convolutionCopies_data();
    void convolutionCopies();
    void pooling_data();
    void pooling();
    void globalPooling();
    void batchNormalization_data();
    void batchNormalization();
    void stateUpdates();

private:
#ifdef SLUICE_HAVE_CUDA
    cuda::Stream m_stream = nullptr;
    std::unique_ptr<cuda::Blas> m_blas;
#endif
};

void TestCudaKernels::initTestCase()
{
#ifndef SLUICE_HAVE_CUDA
    QSKIP("built without CUDA (SLUICE_WITH_CUDA off or no toolkit): no GPU kernels to test");
#else
    const DeviceQuery q = queryGpuDevices();
    if (q.devices.empty())
        QSKIP(qPrintable("no GPU on this machine, every CUDA kernel test is skipped: " + QString::fromStdString(q.reason)));
    qInfo("GPU 0: %s (compute %d.%d)", q.devices[0].name.c_str(), q.devices[0].computeMajor, q.devices[0].computeMinor);
    cuda::setDevice(0);
    m_stream = cuda::createStream();
    m_blas = std::make_unique<cuda::Blas>();
    cpu::useSingleThreadedBlas();
    rng();
#endif
}

void TestCudaKernels::cleanupTestCase()
{
#ifdef SLUICE_HAVE_CUDA
    m_blas.reset();
    cuda::destroyStream(m_stream);
#endif
}

#ifdef SLUICE_HAVE_CUDA

// The check macros' messages, launcher preconditions, and the buffer's ownership.
void TestCudaKernels::checksAndBuffers()
{
    try {
        cuda::setDevice(1 << 20);
        QFAIL("an invalid device must throw");
    } catch (const cuda::CudaError &e) {
        const QString what = QString::fromUtf8(e.what());
        QVERIFY2(what.startsWith(QLatin1String("train/cuda/runtime.cu:")), qPrintable(what)); // the source, not a build path
        QVERIFY2(what.contains(QLatin1String("cudaSetDevice")), qPrintable(what));
    }
    cuda::setDevice(0); // the failed call left no sticky error behind
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, cuda::softmaxRows(m_stream, nullptr, nullptr, 4, 4));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, cuda::layerNormForward(m_stream, nullptr, nullptr, nullptr, nullptr, nullptr, 4, 0, 1e-3));

    DeviceBuffer<float> a(1000);
    const float *p = a.data();
    DeviceBuffer<float> b(std::move(a));
    QCOMPARE(b.data(), p);
    QVERIFY(a.data() == nullptr && a.empty());
    DeviceBuffer<float> c(10);
    c = std::move(b);
    QCOMPARE(c.data(), p);
    QCOMPARE(c.size(), std::size_t(1000));
    const std::vector<float> values = uniform(1000);
    c.upload(values, m_stream);
    EXPECT_EQUAL_BITS(QStringLiteral("upload/download"), c.download(m_stream), values);
}

void TestCudaKernels::biasActivation_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<bool>("withBias");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    const std::pair<const char *, ActivationKind> kinds[] = {{"linear", ActivationKind::Linear}, {"relu", ActivationKind::Relu},
                                                             {"gelu", ActivationKind::Gelu},     {"tanh", ActivationKind::Tanh},
                                                             {"sigmoid", ActivationKind::Sigmoid}, {"softmax", ActivationKind::Softmax}};
    for (const auto &[name, kind] : kinds) {
        QTest::addRow("%s", name) << int(kind) << true << 193 << 257;
        QTest::addRow("%s, no bias, one column", name) << int(kind) << false << 300 << 1;
        QTest::addRow("%s, 128 columns", name) << int(kind) << true << 64 << 128; // the float4 kernels
    }
}

// Forward: y = f(x + bias) with the pre-activation kept; backward from the CPU's own z and y.
void TestCudaKernels::biasActivation()
{
    QFETCH(int, kind);
    QFETCH(bool, withBias);
    QFETCH(int, rows);
    QFETCH(int, cols);
    const auto k = ActivationKind(kind);
    const std::size_t n = std::size_t(rows) * cols;
    const std::vector<float> x = uniform(n, -4, 4), bias = uniform(std::size_t(cols)), dy = uniform(n);

    std::vector<float> z = x, y(n), dx(n);
    if (withBias)
        for (std::size_t i = 0; i < n; ++i)
            z[i] += bias[i % std::size_t(cols)];
    activationForward(k, z.data(), y.data(), std::int64_t(n), cols);
    activationBackward(k, z.data(), y.data(), dy.data(), dx.data(), std::int64_t(n), cols);

    auto dX = upload(x, m_stream), dBias = upload(bias, m_stream), dDy = upload(dy, m_stream);
    auto dY = poisoned(n, m_stream), dZ = poisoned(n, m_stream), dDx = poisoned(n, m_stream);
    cuda::biasActivationForward(m_stream, k, dX.data(), withBias ? dBias.data() : nullptr, dY.data(), dZ.data(), rows, cols);
    EXPECT_CLOSE(QStringLiteral("forward pre-activation"), dZ.download(m_stream), z, kFp32);
    EXPECT_CLOSE(QStringLiteral("forward"), dY.download(m_stream), y, kFp32);

    auto cZ = upload(z, m_stream), cY = upload(y, m_stream);
    cuda::activationBackward(m_stream, k, cZ.data(), cY.data(), dDy.data(), dDx.data(), rows, cols);
    EXPECT_CLOSE(QStringLiteral("backward"), dDx.download(m_stream), dx, kFp32);

    // In place, as the Dense layer applies it.
    cuda::biasActivationForward(m_stream, k, dX.data(), withBias ? dBias.data() : nullptr, dX.data(), nullptr, rows, cols);
    EXPECT_CLOSE(QStringLiteral("forward in place"), dX.download(m_stream), y, kFp32);
}

void TestCudaKernels::softmaxWideRows()
{
    for (const int cols : {1, 31, 1000, 5003}) {
        const int rows = 37;
        const std::vector<float> x = uniform(std::size_t(rows) * cols, -20, 20);
        std::vector<float> y(x.size());
        for (int r = 0; r < rows; ++r)
            softmaxRow(x.data() + std::size_t(r) * cols, cols, y.data() + std::size_t(r) * cols);
        auto dX = upload(x, m_stream), dY = poisoned(x.size(), m_stream);
        cuda::softmaxRows(m_stream, dX.data(), dY.data(), rows, cols);
        EXPECT_CLOSE(QStringLiteral("softmax rows of %1").arg(cols), dY.download(m_stream), y, kFp32);
    }
}

// The Dense layer's bias gradient. The CPU adds each column in float, row by row, which rounds
// by up to about rows * 2^-24 of the column's magnitudes; the device adds in double. So the
// device is held to fp32's limit against exact (double) sums, and to the CPU's own rounding
// against the CPU's float sums.
void TestCudaKernels::columnSums()
{
    for (const auto &[rows, cols] : {std::pair{1000, 77}, std::pair{3, 1}, std::pair{4097, 300}, std::pair{300000, 5}, std::pair{0, 7}}) {
        const std::vector<float> dz = uniform(std::size_t(rows) * cols);
        const std::vector<float> start = uniform(std::size_t(cols));
        std::vector<float> sums(std::size_t(cols), 0.0f), accumulated = start;
        std::vector<double> exact(std::size_t(cols), 0.0);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) {
                sums[std::size_t(c)] += dz[std::size_t(r) * cols + c];
                accumulated[std::size_t(c)] += dz[std::size_t(r) * cols + c];
                exact[std::size_t(c)] += dz[std::size_t(r) * cols + c];
            }
        std::vector<float> exactSums(exact.begin(), exact.end()), exactAccumulated(static_cast<std::size_t>(cols));
        for (int c = 0; c < cols; ++c)
            exactAccumulated[std::size_t(c)] = float(double(start[std::size_t(c)]) + exact[std::size_t(c)]);
        const double cpuRounding = 1e-5 * std::max(1.0, rows / 1000.0);

        auto dDz = upload(dz, m_stream), dSums = poisoned(std::size_t(cols), m_stream);
        cuda::columnSums(m_stream, dDz.data(), dSums.data(), rows, cols, false);
        const std::vector<float> got = dSums.download(m_stream);
        EXPECT_CLOSE(QStringLiteral("column sums %1x%2, exact sums").arg(rows).arg(cols), got, exactSums, kFp32);
        EXPECT_CLOSE(QStringLiteral("column sums %1x%2, CPU float sums").arg(rows).arg(cols), got, sums, cpuRounding);
        auto dAcc = upload(start, m_stream);
        cuda::columnSums(m_stream, dDz.data(), dAcc.data(), rows, cols, true);
        const std::vector<float> gotAcc = dAcc.download(m_stream);
        EXPECT_CLOSE(QStringLiteral("column sums accumulated, exact sums"), gotAcc, exactAccumulated, kFp32);
        EXPECT_CLOSE(QStringLiteral("column sums accumulated, CPU float sums"), gotAcc, accumulated, cpuRounding);
    }
}

void TestCudaKernels::losses_data()
{
    QTest::addColumn<QString>("spec");  // the loss as createLoss takes it
    QTest::addColumn<int>("kind");      // cuda::LossKind
    QTest::addColumn<int>("classes");   // last axis (1 for the elementwise losses)
    QTest::addColumn<int>("steps");     // positions per sample (time steps)
    QTest::addColumn<bool>("weighted");
    using K = cuda::LossKind;
    auto row = [](const char *tag, const char *spec, K kind, int classes, int steps, bool weighted) {
        QTest::newRow(tag) << QString::fromLatin1(spec) << int(kind) << classes << steps << weighted;
    };
    row("mse", R"({"name": "mse"})", K::Mse, 1, 7, false);
    row("mse weighted", R"({"name": "mse"})", K::Mse, 1, 7, true);
    row("mae", R"({"name": "mae"})", K::Mae, 1, 5, true);
    row("huber", R"({"name": "huber", "delta": 0.7})", K::Huber, 1, 9, true);
    row("binary probabilities", R"({"name": "binary_crossentropy"})", K::BinaryCrossentropy, 1, 4, true);
    row("binary logits", R"({"name": "binary_crossentropy", "from_logits": true})", K::BinaryCrossentropy, 1, 4, true);
    row("binary smoothed", R"({"name": "binary_crossentropy", "label_smoothing": 0.1})", K::BinaryCrossentropy, 1, 3, false);
    row("categorical probabilities", R"({"name": "categorical_crossentropy"})", K::CategoricalCrossentropy, 10, 1, true);
    row("categorical logits", R"({"name": "categorical_crossentropy", "from_logits": true})", K::CategoricalCrossentropy, 10, 1, true);
    row("categorical logits smoothed, sequence", R"({"name": "categorical_crossentropy", "from_logits": true, "label_smoothing": 0.2})",
        K::CategoricalCrossentropy, 37, 3, true);
    row("categorical probabilities smoothed, wide", R"({"name": "categorical_crossentropy", "label_smoothing": 0.1})",
        K::CategoricalCrossentropy, 1000, 1, false);
    row("sparse logits", R"({"name": "sparse_categorical_crossentropy", "from_logits": true})", K::SparseCategoricalCrossentropy, 10, 1, true);
    row("sparse probabilities, sequence", R"({"name": "sparse_categorical_crossentropy"})", K::SparseCategoricalCrossentropy, 33, 4, true);
}

// Per-sample values and gradients against Loss::compute, probabilities partly outside the clip
// range (exact 0 and 1) so that the clipping's zero gradients are exercised too.
void TestCudaKernels::losses()
{
    QFETCH(QString, spec);
    QFETCH(int, kind);
    QFETCH(int, classes);
    QFETCH(int, steps);
    QFETCH(bool, weighted);
    const auto lossKind = cuda::LossKind(kind);
    const json j = json::parse(spec.toStdString());
    auto made = createLoss(j);
    QVERIFY2(made.ok(), made.ok() ? "" : made.error().message().c_str());
    const Loss &loss = **made;

    const int batch = 131;
    const bool logits = j.value("from_logits", false);
    const bool categorical = lossKind == cuda::LossKind::CategoricalCrossentropy || lossKind == cuda::LossKind::SparseCategoricalCrossentropy;
    const bool sparse = lossKind == cuda::LossKind::SparseCategoricalCrossentropy;
    const std::int64_t n = std::int64_t(classes) * steps;
    std::vector<float> pred;
    if (logits || (!categorical && lossKind != cuda::LossKind::BinaryCrossentropy))
        pred = uniform(std::size_t(batch * n), -3, 3);
    else
        pred = uniform(std::size_t(batch * n), 0.0f, 1.0f);
    if (!logits && lossKind == cuda::LossKind::BinaryCrossentropy)
        for (std::size_t i = 0; i < pred.size(); i += 17)
            pred[i] = i % 2 ? 1.0f : 0.0f; // outside [eps, 1 - eps]: clipped
    if (!logits && sparse)
        for (std::size_t i = 0; i < pred.size(); i += 13)
            pred[i] = 0.0f;
    std::vector<float> target;
    std::uniform_int_distribution<int> cls(0, classes - 1);
    if (sparse) {
        for (int i = 0; i < batch * steps; ++i)
            target.push_back(float(cls(rng())));
    } else if (categorical) {
        target.assign(std::size_t(batch * n), 0.0f);
        for (int p = 0; p < batch * steps; ++p)
            target[std::size_t(p) * classes + std::size_t(cls(rng()))] = 1.0f;
    } else if (lossKind == cuda::LossKind::BinaryCrossentropy) {
        for (float v : uniform(std::size_t(batch * n), 0, 1))
            target.push_back(v < 0.5f ? 0.0f : 1.0f);
    } else {
        target = uniform(std::size_t(batch * n), -3, 3);
    }
    const std::vector<float> weights = weighted ? uniform(std::size_t(batch), 0.0f, 2.0f) : std::vector<float>{};
    const float scale = 1.0f / 512.0f;

    Shape predShape{batch}, targetShape{batch};
    if (steps > 1)
        predShape.push_back(steps), targetShape.push_back(steps);
    predShape.push_back(classes);
    if (!sparse)
        targetShape.push_back(classes);
    const FloatTensor p = tensor(predShape, pred), t = tensor(targetShape, target);
    std::vector<float> perSample(static_cast<std::size_t>(batch));
    FloatTensor dPred;
    loss.compute(p, t, weights, scale, perSample, &dPred);

    cuda::LossParams params;
    params.kind = lossKind;
    params.fromLogits = logits;
    params.delta = float(j.value("delta", 1.0));
    params.labelSmoothing = float(j.value("label_smoothing", 0.0));
    auto gPred = upload(pred, m_stream), gTarget = upload(target, m_stream), gWeights = upload(weights, m_stream);
    auto gPer = poisoned(std::size_t(batch), m_stream), gD = poisoned(pred.size(), m_stream);
    cuda::computeLoss(m_stream, params, gPred.data(), gTarget.data(), weighted ? gWeights.data() : nullptr, scale, batch, n, classes, gPer.data(),
                      gD.data());
    EXPECT_CLOSE(QStringLiteral("per-sample"), gPer.download(m_stream), perSample, kFp32);
    EXPECT_CLOSE(QStringLiteral("gradient"), gD.download(m_stream), dPred.data, kFp32);

    // Without a gradient buffer only the values are written.
    auto gPer2 = poisoned(std::size_t(batch), m_stream);
    cuda::computeLoss(m_stream, params, gPred.data(), gTarget.data(), weighted ? gWeights.data() : nullptr, scale, batch, n, classes, gPer2.data(),
                      nullptr);
    EXPECT_CLOSE(QStringLiteral("values only"), gPer2.download(m_stream), perSample, kFp32);
}

void TestCudaKernels::optimizers_data()
{
    QTest::addColumn<QString>("spec");
    QTest::newRow("sgd") << R"({"type": "sgd"})";
    QTest::newRow("sgd momentum, weight decay") << R"({"type": "sgd", "momentum": 0.9, "weight_decay": 0.01})";
    QTest::newRow("sgd nesterov") << R"({"type": "sgd", "momentum": 0.8, "nesterov": true})";
    QTest::newRow("adam") << R"({"type": "adam"})";
    QTest::newRow("adam amsgrad") << R"({"type": "adam", "amsgrad": true, "beta_1": 0.8, "epsilon": 1e-5})";
    QTest::newRow("adamw") << R"({"type": "adamw"})";
    QTest::newRow("rmsprop") << R"({"type": "rmsprop"})";
    QTest::newRow("rmsprop centered, momentum") << R"({"type": "rmsprop", "centered": true, "momentum": 0.9, "rho": 0.8})";
    QTest::newRow("rmsprop momentum") << R"({"type": "rmsprop", "momentum": 0.5})";
}

// Four updates with fresh gradients each; weights and every slot against the CPU optimizer.
void TestCudaKernels::optimizers()
{
    QFETCH(QString, spec);
    const json j = json::parse(spec.toStdString());
    const std::size_t n = 100003;
    auto made = createOptimizer(j, n);
    QVERIFY2(made.ok(), made.ok() ? "" : made.error().message().c_str());
    Optimizer &opt = **made;
    const std::string type = j["type"];

    std::vector<float> w = uniform(n);
    auto gW = upload(w, m_stream);
    std::vector<DeviceBuffer<float>> slots;
    for (int i = 0; i < 3; ++i) {
        slots.emplace_back(n);
        slots.back().zero(m_stream);
    }
    const float lr = type == "sgd" ? 0.05f : 0.01f;
    for (std::int64_t it = 1; it <= 4; ++it) {
        const std::vector<float> g = uniform(n, -2, 2);
        opt.apply(w, g, lr, it);
        auto gG = upload(g, m_stream);
        if (type == "sgd") {
            cuda::SgdParams p;
            p.learningRate = lr;
            p.momentum = float(j.value("momentum", 0.0));
            p.nesterov = j.value("nesterov", false);
            p.weightDecay = float(j.value("weight_decay", 0.0));
            cuda::sgdUpdate(m_stream, p, gW.data(), gG.data(), slots[0].data(), std::int64_t(n));
        } else if (type == "rmsprop") {
            cuda::RmsPropParams p;
            p.learningRate = lr;
            p.rho = j.value("rho", 0.9);
            p.momentum = j.value("momentum", 0.0);
            p.centered = j.value("centered", false);
            // Slots in the CPU's order: velocity, [momentum], [average_gradient].
            float *avg = p.momentum > 0 ? slots[2].data() : slots[1].data();
            cuda::rmsPropUpdate(m_stream, p, gW.data(), gG.data(), slots[0].data(), slots[1].data(), avg, std::int64_t(n));
        } else {
            cuda::AdamParams p;
            p.learningRate = lr;
            p.beta1 = j.value("beta_1", 0.9);
            p.epsilon = j.value("epsilon", 1e-7);
            p.amsgrad = j.value("amsgrad", false);
            p.weightDecay = type == "adamw" ? 0.004f : 0.0f;
            p.iteration = it;
            cuda::adamUpdate(m_stream, p, gW.data(), gG.data(), slots[0].data(), slots[1].data(), slots[2].data(), std::int64_t(n));
        }
    }
    EXPECT_CLOSE(QStringLiteral("weights"), gW.download(m_stream), w, kFp32);
    for (std::size_t s = 0; s < opt.slots().size(); ++s)
        EXPECT_CLOSE(QStringLiteral("slot %1").arg(QString::fromStdString(opt.slots()[s].name)),
                     slots[s].download(m_stream), opt.slots()[s].values, kFp32);
}

void TestCudaKernels::globalNormClipping()
{
    const std::size_t n = 1000003;
    DeviceBuffer<double> workspace(std::size_t(cuda::kGlobalNormWorkspace));
    for (const double clipnorm : {1.0, 1e9}) { // clipped, then left alone
        std::vector<float> g = uniform(n);
        auto gG = upload(g, m_stream);
        const double cpuNorm = clipByGlobalNorm(g, clipnorm);
        workspace.poison(m_stream);
        cuda::clipByGlobalNorm(m_stream, gG.data(), std::int64_t(n), clipnorm, workspace.data());
        const double gpuNorm = workspace.download(m_stream)[0];
        qInfo("global norm %.17g (CPU) %.17g (GPU)", cpuNorm, gpuNorm);
        QVERIFY2(std::abs(gpuNorm - cpuNorm) <= 1e-12 * cpuNorm, "the norms differ");
        if (clipnorm > cpuNorm)
            EXPECT_EQUAL_BITS(QStringLiteral("unclipped gradients"), gG.download(m_stream), g);
        else
            EXPECT_CLOSE(QStringLiteral("clipped gradients"), gG.download(m_stream), g, kFp32);
    }
}

void TestCudaKernels::layerNormalization_data()
{
    QTest::addColumn<bool>("scaleAndCenter");
    QTest::addColumn<int>("features");
    QTest::newRow("gamma and beta") << true << 96;
    QTest::newRow("gamma and beta, wide") << true << 3001;
    QTest::newRow("gamma and beta, 1000") << true << 1000;
    QTest::newRow("gamma and beta, 5000") << true << 5000;
    QTest::newRow("neither") << false << 17;
}

// Forward (output and row statistics) and backward (dx, dGamma, dBeta added to their values)
// against the CPU LayerNormalization layer.
void TestCudaKernels::layerNormalization()
{
    QFETCH(bool, scaleAndCenter);
    QFETCH(int, features);
    const int rows = 203;
    LayerNormalizationOptions o;
    o.scale = o.center = scaleAndCenter;
    o.epsilon = 1e-3;
    auto layer = makeLayerNormalization("norm", o);
    QVERIFY(layer->build({{features}}).ok());

    const std::vector<float> x = uniform(std::size_t(rows) * features, -2, 3), dy = uniform(x.size());
    const std::vector<float> gamma = uniform(std::size_t(features), 0.5f, 1.5f), beta = uniform(std::size_t(features));
    std::vector<float> dGamma = uniform(std::size_t(features)), dBeta = uniform(std::size_t(features)); // gradients accumulate
    const std::vector<float> dGamma0 = dGamma, dBeta0 = dBeta;
    const FloatTensor tx = tensor({rows, features}, x), tdy = tensor({rows, features}, dy);
    std::vector<const float *> params;
    std::vector<float *> grads;
    if (scaleAndCenter) {
        params = {gamma.data(), beta.data()};
        grads = {dGamma.data(), dBeta.data()};
    }
    LayerState state;
    FloatTensor y, dx;
    const FloatTensor *inputs[] = {&tx};
    FloatTensor *dInputs[] = {&dx};
    PassContext ctx;
    layer->forward(ctx, params, inputs, y, state);
    layer->backward(ctx, params, inputs, y, tdy, dInputs, grads, state);

    auto gX = upload(x, m_stream), gDy = upload(dy, m_stream), gGamma = upload(gamma, m_stream), gBeta = upload(beta, m_stream);
    auto gDGamma = upload(dGamma0, m_stream), gDBeta = upload(dBeta0, m_stream);
    auto gY = poisoned(x.size(), m_stream), gStats = poisoned(std::size_t(rows) * 2, m_stream), gDx = poisoned(x.size(), m_stream);
    const float *gamma_ = scaleAndCenter ? gGamma.data() : nullptr;
    cuda::layerNormForward(m_stream, gX.data(), gamma_, scaleAndCenter ? gBeta.data() : nullptr, gY.data(), gStats.data(), rows, features, o.epsilon);
    cuda::layerNormBackward(m_stream, gX.data(), gamma_, gStats.data(), gDy.data(), gDx.data(), scaleAndCenter ? gDGamma.data() : nullptr,
                            scaleAndCenter ? gDBeta.data() : nullptr, rows, features);
    EXPECT_CLOSE(QStringLiteral("layer norm y"), gY.download(m_stream), y.data, kFp32);
    EXPECT_CLOSE(QStringLiteral("layer norm mean, 1/std"), gStats.download(m_stream), state.saved[0].data, kFp32);
    EXPECT_CLOSE(QStringLiteral("layer norm dx"), gDx.download(m_stream), dx.data, kFp32);
    if (scaleAndCenter) {
        EXPECT_CLOSE(QStringLiteral("layer norm dGamma"), gDGamma.download(m_stream), dGamma, kFp32);
        EXPECT_CLOSE(QStringLiteral("layer norm dBeta"), gDBeta.download(m_stream), dBeta, kFp32);
        // Without dx (the layer's input needs no gradient) the parameter gradients come alone.
        gDGamma.upload(dGamma0, m_stream);
        gDBeta.upload(dBeta0, m_stream);
        cuda::layerNormBackward(m_stream, gX.data(), gamma_, gStats.data(), gDy.data(), nullptr, gDGamma.data(), gDBeta.data(), rows, features);
        EXPECT_CLOSE(QStringLiteral("layer norm dGamma without dx"), gDGamma.download(m_stream), dGamma, kFp32);
        EXPECT_CLOSE(QStringLiteral("layer norm dBeta without dx"), gDBeta.download(m_stream), dBeta, kFp32);
    }
}

// The same mask as the CPU layer, bit for bit, for a whole batch and for a replica's slice of it
// (rows offset into the global batch), with a layer seed and with the name as the key.
void TestCudaKernels::dropoutMasksMatchTheCpu()
{
    const int rows = 96, cols = 130;
    const std::uint64_t runSeed = rng()(), step = 7, layerSeed = 1234;
    for (const bool seeded : {true, false}) {
        const double rate = seeded ? 0.3 : 0.55;
        auto layer = makeDropout("drop", rate, seeded ? std::optional<std::uint64_t>(layerSeed) : std::nullopt);
        QVERIFY(layer->build({{cols}}).ok());
        const std::vector<float> x = uniform(std::size_t(rows) * cols);
        const FloatTensor tx = tensor({rows, cols}, x);
        FloatTensor y;
        LayerState state;
        const FloatTensor *inputs[] = {&tx};
        PassContext ctx;
        ctx.seed = runSeed;
        ctx.step = step;
        layer->forward(ctx, {}, inputs, y, state);

        cuda::DropoutParams p;
        p.rate = rate;
        p.stepKey = cuda::dropoutStepKey(runSeed, cuda::dropoutLayerKey(seeded ? &layerSeed : nullptr, "drop"), step);
        auto gX = upload(x, m_stream), gY = poisoned(x.size(), m_stream);
        cuda::dropoutApply(m_stream, p, gX.data(), gY.data(), rows, cols);
        EXPECT_EQUAL_BITS(QStringLiteral("dropout rate %1").arg(rate), gY.download(m_stream), y.data);

        // A replica holding every other row from row 1 (stride 2) draws those rows' masks.
        p.rowOffset = 1;
        p.rowStride = 2;
        std::vector<float> slice, expected;
        for (int r = 1; r < rows; r += 2) {
            slice.insert(slice.end(), x.begin() + std::ptrdiff_t(r) * cols, x.begin() + std::ptrdiff_t(r + 1) * cols);
            expected.insert(expected.end(), y.data.begin() + std::ptrdiff_t(r) * cols, y.data.begin() + std::ptrdiff_t(r + 1) * cols);
        }
        auto gS = upload(slice, m_stream), gSy = poisoned(slice.size(), m_stream);
        cuda::dropoutApply(m_stream, p, gS.data(), gSy.data(), rows / 2, cols);
        EXPECT_EQUAL_BITS(QStringLiteral("dropout on a replica's rows"), gSy.download(m_stream), expected);
        std::size_t dropped = std::count(y.data.begin(), y.data.end(), 0.0f);
        QVERIFY(dropped > 0 && dropped < y.data.size());
    }
}

// Logical replicas' gradients summed on the device equal the CPU's in-process sum to the bit.
// The gather and the table gradient against the CPU layer, bit for bit: the gradient is summed
// per row in input order on both (repeated ids included), and a bad id gives a zero row and its
// position.
void TestCudaKernels::embeddingMatchesTheCpu()
{
    const std::int64_t inputDim = 37, dim = 45, rows = 300, perRow = 3;
    EmbeddingOptions o;
    o.inputDim = inputDim;
    o.outputDim = dim;
    auto layer = makeEmbedding("emb", o);
    QVERIFY(layer->build({{perRow}}).ok());
    std::vector<float> ids(std::size_t(rows * perRow));
    for (auto &v : ids)
        v = float(rng()() % std::uint64_t(inputDim)); // about 24 uses a row: long runs in the sort
    const std::vector<float> table = uniform(std::size_t(inputDim * dim)), dOut = uniform(ids.size() * std::size_t(dim));
    const FloatTensor tIds = tensor({rows, perRow}, ids);
    FloatTensor y;
    LayerState state;
    const FloatTensor *inputs[] = {&tIds};
    const float *params[] = {table.data()};
    layer->forward({}, params, inputs, y, state);
    std::vector<float> dTable(table.size(), 0.0f);
    float *grads[] = {dTable.data()};
    FloatTensor *dInputs[] = {nullptr};
    layer->backward({}, params, inputs, y, tensor({rows, perRow, dim}, dOut), dInputs, grads, state);

    auto gIds = upload(ids, m_stream), gTable = upload(table, m_stream), gY = poisoned(y.size(), m_stream);
    cuda::DeviceBuffer<std::int32_t> bad(1);
    cuda::embeddingResetBad(m_stream, bad.data());
    cuda::embeddingForward(m_stream, gIds.data(), gTable.data(), gY.data(), std::int64_t(ids.size()), dim, inputDim, bad.data());
    EXPECT_EQUAL_BITS(QStringLiteral("embedding forward"), gY.download(m_stream), y.data);
    QCOMPARE(bad.download(m_stream)[0], INT32_MAX);
    auto gDOut = upload(dOut, m_stream), gDTable = upload(std::vector<float>(table.size(), 0.0f), m_stream);
    cuda::DeviceBuffer<unsigned char> scratch(cuda::embeddingBackwardScratchBytes(std::int64_t(ids.size()), inputDim));
    cuda::embeddingBackward(m_stream, gIds.data(), gDOut.data(), gDTable.data(), std::int64_t(ids.size()), dim, inputDim, scratch.data(), scratch.size());
    EXPECT_EQUAL_BITS(QStringLiteral("embedding table gradient"), gDTable.download(m_stream), dTable);

    // Ids 37 (= input_dim) at position 5 and -3 at 9: zero rows, the first position reported.
    ids[5] = float(inputDim);
    ids[9] = -3.0f;
    auto gBadIds = upload(ids, m_stream);
    cuda::embeddingResetBad(m_stream, bad.data());
    cuda::embeddingForward(m_stream, gBadIds.data(), gTable.data(), gY.data(), std::int64_t(ids.size()), dim, inputDim, bad.data());
    const std::vector<float> out = gY.download(m_stream);
    QCOMPARE(bad.download(m_stream)[0], 5);
    QVERIFY(std::all_of(out.begin() + 5 * dim, out.begin() + 6 * dim, [](float v) { return v == 0.0f; }));
}

void TestCudaKernels::sumOfReplicaBuffers()
{
    for (const auto &[n, count] : {std::pair<std::size_t, int>{70001, 1}, {70001, 3}, {70001, 11}, {70000, 4}, {70000, 9}}) {
        std::vector<std::vector<float>> host;
        std::vector<DeviceBuffer<float>> dev;
        std::vector<const float *> ptrs;
        for (int k = 0; k < count; ++k) {
            host.push_back(uniform(n));
            dev.push_back(upload(host.back(), m_stream));
            ptrs.push_back(dev.back().data());
        }
        std::vector<std::vector<float> *> cpuBuffers;
        for (auto &h : host)
            cpuBuffers.push_back(&h);
        sumLocalReplicas(cpuBuffers);
        auto out = poisoned(n, m_stream);
        cuda::sumBuffers(m_stream, ptrs.data(), ptrs.size(), out.data(), std::int64_t(n));
        EXPECT_EQUAL_BITS(QStringLiteral("sum of %1 buffers of %2").arg(count).arg(n), out.download(m_stream), host[0]);
        cuda::sumBuffers(m_stream, ptrs.data(), ptrs.size(), dev[0].data(), std::int64_t(n)); // into the first, in place
        EXPECT_EQUAL_BITS(QStringLiteral("sum of %1 buffers in place").arg(count), dev[0].download(m_stream), host[0]);
    }
}

void TestCudaKernels::matrixProducts_data()
{
    QTest::addColumn<bool>("transA");
    QTest::addColumn<bool>("transB");
    QTest::addColumn<int>("precision"); // 0 fp32, 1 tf32, 2 bf16
    QTest::addColumn<float>("beta");
    const char *names[] = {"fp32", "tf32", "bf16"};
    for (int prec = 0; prec < 3; ++prec)
        for (int t = 0; t < 4; ++t)
            QTest::addRow("%s%s%s", names[prec], t & 1 ? " A^T" : "", t & 2 ? " B^T" : "") << bool(t & 1) << bool(t & 2) << prec << 0.0f;
    QTest::newRow("fp32 beta 0.5") << false << true << 0 << 0.5f;
}

// Row-major C = alpha op(A) op(B) + beta C with padded row strides, against the CPU gemm on the
// same fp32 inputs (bf16 therefore includes the inputs' rounding).
void TestCudaKernels::matrixProducts()
{
    QFETCH(bool, transA);
    QFETCH(bool, transB);
    QFETCH(int, precision);
    QFETCH(float, beta);
    const std::int64_t M = 257, N = 193, K = 311;
    const std::int64_t aRows = transA ? K : M, aCols = transA ? M : K, bRows = transB ? N : K, bCols = transB ? K : N;
    const std::int64_t lda = aCols + 3, ldb = bCols + 5, ldc = N + 2;
    const std::vector<float> A = uniform(std::size_t(aRows * lda)), B = uniform(std::size_t(bRows * ldb));
    std::vector<float> C = uniform(std::size_t(M * ldc));
    const float alpha = 0.75f;
    auto gA = upload(A, m_stream), gB = upload(B, m_stream), gC = upload(C, m_stream);
    if (beta == 0.0f)
        gC.poison(m_stream); // beta 0: C is never read
    cpu::gemm(transA, transB, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);

    if (precision == 2) {
        DeviceBuffer<cuda::Bf16> a16(A.size()), b16(B.size());
        cuda::convertToBf16(m_stream, gA.data(), a16.data(), std::int64_t(A.size()));
        cuda::convertToBf16(m_stream, gB.data(), b16.data(), std::int64_t(B.size()));
        // The conversion rounds to nearest even, as the host does it here.
        const std::vector<cuda::Bf16> back = a16.download(m_stream);
        for (std::size_t i = 0; i < A.size(); i += 97) {
            std::uint32_t u;
            std::memcpy(&u, &A[i], 4);
            const std::uint16_t expected = std::uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
            QCOMPARE(back[i].bits, expected);
        }
        m_blas->gemmBf16(m_stream, transA, transB, M, N, K, alpha, a16.data(), lda, b16.data(), ldb, beta, gC.data(), ldc);
    } else {
        m_blas->gemm(m_stream, transA, transB, M, N, K, alpha, gA.data(), lda, gB.data(), ldb, beta, gC.data(), ldc,
                     precision == 1 ? cuda::GemmMode::Tf32 : cuda::GemmMode::Fp32);
    }
    std::vector<float> got = gC.download(m_stream), gotC, wantC;
    for (std::int64_t r = 0; r < M; ++r) // the padding between rows is not C's
        for (std::int64_t c = 0; c < N; ++c) {
            gotC.push_back(got[std::size_t(r * ldc + c)]);
            wantC.push_back(C[std::size_t(r * ldc + c)]);
        }
    const double normwise = normwiseError(gotC, wantC), worst = maxRelativeError(gotC, wantC);
    qInfo("normwise error %.3g, max relative error %.3g", normwise, worst);
    if (precision == 0)
        QVERIFY2(worst < kFp32, qPrintable(QStringLiteral("fp32 product: %1").arg(worst)));
    else
        QVERIFY2(normwise < (precision == 1 ? 1e-3 : 1e-2), qPrintable(QStringLiteral("normwise error %1").arg(normwise)));
}

void TestCudaKernels::convolutionCopies_data()
{
    QTest::addColumn<int>("rank");
    QTest::addColumn<QString>("sample");   // (W, C) or (H, W, C)
    QTest::addColumn<QString>("size");     // per spatial axis
    QTest::addColumn<QString>("strides");
    QTest::addColumn<QString>("dilation");
    QTest::addColumn<bool>("same");
    QTest::newRow("2-D 3x3 same") << 2 << "7,6,3" << "3,3" << "1,1" << "1,1" << true;
    QTest::newRow("2-D 3x2 valid, strides 2x1") << 2 << "9,5,2" << "3,2" << "2,1" << "1,1" << false;
    QTest::newRow("2-D 4x4 same, strides 3 (uneven padding)") << 2 << "10,11,4" << "4,4" << "3,3" << "1,1" << true;
    QTest::newRow("2-D 3x3 same, dilation 2") << 2 << "8,7,2" << "3,3" << "1,1" << "2,2" << true;
    QTest::newRow("2-D valid, input left over") << 2 << "8,8,1" << "3,3" << "2,2" << "1,1" << false;
    QTest::newRow("1-D 5 same, stride 2") << 1 << "13,5" << "5" << "2" << "1" << true;
    QTest::newRow("1-D 3 valid, dilation 3") << 1 << "15,3" << "3" << "1" << "3" << false;
}

// im2col against the CPU's, bit for bit (a copy), over the whole matrix and a block of rows
// starting inside a sample; col2imAdd against the CPU's (both add onto dx's values; the sums
// run in other orders) for blocks that split a sample.
void TestCudaKernels::convolutionCopies()
{
    QFETCH(int, rank);
    QFETCH(QString, sample);
    QFETCH(QString, size);
    QFETCH(QString, strides);
    QFETCH(QString, dilation);
    QFETCH(bool, same);
    const detail::Window2D win = detail::makeWindow(rank, shapeOf(sample), shapeOf(size), shapeOf(strides), shapeOf(dilation),
                                                    same ? ConvPadding::Same : ConvPadding::Valid);
    const cuda::Window w = deviceWindow(win);
    const std::int64_t B = 5, K = win.colWidth(), rows = B * win.outPositions(), inCount = B * win.inPositions() * win.channels;
    QVERIFY(rows > 0);
    const std::vector<float> x = uniform(std::size_t(inCount));
    std::vector<float> cols(std::size_t(rows * K));
    detail::im2col(win, x.data(), 0, rows, cols.data());
    auto gX = upload(x, m_stream), gCols = poisoned(cols.size(), m_stream);
    cuda::im2col(m_stream, w, gX.data(), 0, rows, gCols.data());
    EXPECT_EQUAL_BITS(QStringLiteral("im2col"), gCols.download(m_stream), cols);

    const std::int64_t r0 = win.outPositions() + win.outPositions() / 2 + 1, r1 = std::min(rows, r0 + 2 * win.outPositions() + 3);
    auto gBlock = poisoned(std::size_t((r1 - r0) * K), m_stream);
    cuda::im2col(m_stream, w, gX.data(), r0, r1, gBlock.data());
    EXPECT_EQUAL_BITS(QStringLiteral("im2col rows %1..%2").arg(r0).arg(r1), gBlock.download(m_stream),
                      std::vector<float>(cols.begin() + r0 * K, cols.begin() + r1 * K));

    const std::vector<float> dCols = uniform(cols.size()), dx0 = uniform(std::size_t(inCount));
    std::vector<float> dx = dx0;
    detail::col2imAdd(win, dCols.data(), 0, rows, dx.data());
    auto gDCols = upload(dCols, m_stream), gDx = upload(dx0, m_stream);
    // Three blocks, the first two ending inside a sample.
    const std::int64_t cut1 = win.outPositions() / 2 + 1, cut2 = std::max(cut1, rows - win.outPositions() - 1);
    for (auto [a, b] : {std::pair{std::int64_t(0), cut1}, {cut1, cut2}, {cut2, rows}})
        cuda::col2imAdd(m_stream, w, gDCols.data() + a * K, a, b, gDx.data());
    EXPECT_CLOSE(QStringLiteral("col2imAdd"), gDx.download(m_stream), dx, kFp32);
}

void TestCudaKernels::pooling_data()
{
    QTest::addColumn<int>("rank");
    QTest::addColumn<bool>("max");
    QTest::addColumn<QString>("sample");
    QTest::addColumn<QString>("size");
    QTest::addColumn<QString>("strides");
    QTest::addColumn<bool>("same");
    QTest::newRow("max 2x2") << 2 << true << "8,6,5" << "2,2" << "2,2" << false;
    QTest::newRow("max 3x3 stride 2 same (overlapping)") << 2 << true << "9,7,3" << "3,3" << "2,2" << true;
    QTest::newRow("average 3x3 stride 2 same (overlapping)") << 2 << false << "9,7,3" << "3,3" << "2,2" << true;
    QTest::newRow("average 2x3 stride 1 same") << 2 << false << "5,6,4" << "2,3" << "1,1" << true;
    QTest::newRow("max 1-D 3 stride 1 same") << 1 << true << "11,6" << "3" << "1" << true;
    QTest::newRow("average 1-D 4 stride 3 valid") << 1 << false << "14,2" << "4" << "3" << false;
}

// Forward and backward against the CPU layer, bit for bit: the same comparisons (max) and the
// same sums in the same order (average). Ties are added on purpose (rounded inputs) so that the
// first maximum in window order is exercised.
void TestCudaKernels::pooling()
{
    QFETCH(int, rank);
    QFETCH(bool, max);
    QFETCH(QString, sample);
    QFETCH(QString, size);
    QFETCH(QString, strides);
    QFETCH(bool, same);
    PoolingOptions o;
    o.rank = rank;
    o.kind = max ? PoolKind::Max : PoolKind::Average;
    o.poolSize = shapeOf(size);
    o.strides = shapeOf(strides);
    o.padding = same ? ConvPadding::Same : ConvPadding::Valid;
    auto layer = makePooling("pool", o);
    const Shape in = shapeOf(sample);
    auto out = layer->build({in});
    QVERIFY(out.ok());
    const std::int64_t B = 7;
    Shape xShape{B}, yShape{B};
    xShape.insert(xShape.end(), in.begin(), in.end());
    yShape.insert(yShape.end(), out->begin(), out->end());
    std::vector<float> x = uniform(std::size_t(shapeCount(xShape)));
    for (std::size_t i = 0; i < x.size(); i += 3)
        x[i] = std::round(x[i] * 2.0f) / 2.0f; // ties
    const FloatTensor tx = tensor(xShape, x);
    FloatTensor y, dx;
    LayerState state;
    const FloatTensor *inputs[] = {&tx};
    FloatTensor *dInputs[] = {&dx};
    PassContext ctx;
    layer->forward(ctx, {}, inputs, y, state);
    const FloatTensor dy = tensor(yShape, uniform(std::size_t(shapeCount(yShape))));
    layer->backward(ctx, {}, inputs, y, dy, dInputs, {}, state);

    const cuda::Window w = deviceWindow(detail::makeWindow(rank, in, o.poolSize, o.strides, Shape(std::size_t(rank), 1), o.padding));
    auto gX = upload(x, m_stream), gY = poisoned(y.size(), m_stream), gDy = upload(dy.data, m_stream), gDx = poisoned(x.size(), m_stream);
    DeviceBuffer<std::int32_t> positions(y.size());
    cuda::poolForward(m_stream, w, max, gX.data(), gY.data(), positions.data(), B);
    EXPECT_EQUAL_BITS(QStringLiteral("pooling forward"), gY.download(m_stream), y.data);
    cuda::poolBackward(m_stream, w, max, positions.data(), gDy.data(), gDx.data(), B);
    EXPECT_EQUAL_BITS(QStringLiteral("pooling backward"), gDx.download(m_stream), dx.data);
    // Inference keeps no positions and gives the same output.
    auto gY2 = poisoned(y.size(), m_stream);
    cuda::poolForward(m_stream, w, max, gX.data(), gY2.data(), nullptr, B);
    EXPECT_EQUAL_BITS(QStringLiteral("pooling forward without positions"), gY2.download(m_stream), y.data);
    if (max)
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, cuda::poolBackward(m_stream, w, true, nullptr, gDy.data(), gDx.data(), B));
}

// GlobalMax / GlobalAveragePooling against the CPU layers, bit for bit (the mean summed in
// double in position order by both), up to positions enough to matter for float sums.
void TestCudaKernels::globalPooling()
{
    for (const bool max : {true, false})
        for (const auto &[positions, channels] : {std::pair<std::int64_t, std::int64_t>{1, 5}, {12, 7}, {4096, 3}, {49, 130}}) {
            GlobalPoolingOptions o;
            o.rank = 1;
            o.kind = max ? PoolKind::Max : PoolKind::Average;
            auto layer = makeGlobalPooling("gp", o);
            QVERIFY(layer->build({{positions, channels}}).ok());
            const std::int64_t B = 9;
            std::vector<float> x = uniform(std::size_t(B * positions * channels));
            for (std::size_t i = 0; i < x.size(); i += 5)
                x[i] = std::round(x[i] * 2.0f) / 2.0f; // ties
            const FloatTensor tx = tensor({B, positions, channels}, x);
            FloatTensor y, dx;
            LayerState state;
            const FloatTensor *inputs[] = {&tx};
            FloatTensor *dInputs[] = {&dx};
            PassContext ctx;
            layer->forward(ctx, {}, inputs, y, state);
            const FloatTensor dy = tensor({B, channels}, uniform(std::size_t(B * channels)));
            layer->backward(ctx, {}, inputs, y, dy, dInputs, {}, state);

            const QString label = QStringLiteral("global %1 pooling %2x%3").arg(max ? "max" : "average").arg(positions).arg(channels);
            auto gX = upload(x, m_stream), gY = poisoned(y.size(), m_stream), gDy = upload(dy.data, m_stream), gDx = poisoned(x.size(), m_stream);
            DeviceBuffer<std::int32_t> argmax(y.size());
            cuda::globalPoolForward(m_stream, max, gX.data(), gY.data(), argmax.data(), B, positions, channels);
            EXPECT_EQUAL_BITS(label + " forward", gY.download(m_stream), y.data);
            cuda::globalPoolBackward(m_stream, max, argmax.data(), gDy.data(), gDx.data(), B, positions, channels);
            EXPECT_EQUAL_BITS(label + " backward", gDx.download(m_stream), dx.data);
        }
}

void TestCudaKernels::batchNormalization_data()
{
    QTest::addColumn<bool>("scaleAndCenter");
    QTest::addColumn<bool>("training");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("channels");
    QTest::newRow("training") << true << true << 1000 << 7;
    QTest::newRow("training, many chunks of rows") << true << true << 70000 << 5;
    QTest::newRow("training, wide, few rows") << true << true << 3 << 70;
    QTest::newRow("training, neither gamma nor beta") << false << true << 517 << 33;
    QTest::newRow("inference") << true << false << 300 << 9;
}

// Forward (output and the per-channel statistics) and backward (dx; dGamma, dBeta and the
// moving statistics' updates added to their values) against the CPU layer. The statistics are
// sums in double in other orders than the CPU's: fp32's limit; inference takes the moving
// statistics as they are, to the bit.
void TestCudaKernels::batchNormalization()
{
    QFETCH(bool, scaleAndCenter);
    QFETCH(bool, training);
    QFETCH(int, rows);
    QFETCH(int, channels);
    BatchNormalizationOptions o;
    o.scale = o.center = scaleAndCenter;
    o.momentum = 0.9;
    auto layer = makeBatchNormalization("bn", o);
    QVERIFY(layer->build({{channels}}).ok());
    const auto C = std::size_t(channels);
    const std::vector<float> x = uniform(std::size_t(rows) * C, -2, 3), dy = uniform(x.size());
    const std::vector<float> gamma = uniform(C, 0.5f, 1.5f), beta = uniform(C), movingMean = uniform(C), movingVariance = uniform(C, 0.5f, 2.0f);
    std::vector<std::vector<float>> grads0;
    for (int i = 0; i < (scaleAndCenter ? 4 : 2); ++i)
        grads0.push_back(uniform(C)); // gradients accumulate
    auto grads = grads0;
    std::vector<const float *> params;
    if (scaleAndCenter)
        params = {gamma.data(), beta.data()};
    params.push_back(movingMean.data());
    params.push_back(movingVariance.data());
    std::vector<float *> gradPtrs;
    for (auto &g : grads)
        gradPtrs.push_back(g.data());
    const FloatTensor tx = tensor({rows, channels}, x), tdy = tensor({rows, channels}, dy);
    LayerState state;
    FloatTensor y, dx;
    const FloatTensor *inputs[] = {&tx};
    FloatTensor *dInputs[] = {&dx};
    PassContext ctx;
    ctx.training = training;
    ctx.lossScale = 1.0 / 4096;
    layer->forward(ctx, params, inputs, y, state);
    layer->backward(ctx, params, inputs, y, tdy, dInputs, gradPtrs, state);
    const double share = double(rows) * ctx.lossScale * (1.0 - o.momentum); // as the layer computes it

    auto gX = upload(x, m_stream), gDy = upload(dy, m_stream), gGamma = upload(gamma, m_stream), gBeta = upload(beta, m_stream);
    auto gMean = upload(movingMean, m_stream), gVar = upload(movingVariance, m_stream);
    std::vector<DeviceBuffer<float>> gGrads;
    for (const auto &g : grads0)
        gGrads.push_back(upload(g, m_stream));
    auto gY = poisoned(x.size(), m_stream), gStats = poisoned(3 * C, m_stream), gDx = poisoned(x.size(), m_stream);
    const float *gamma_ = scaleAndCenter ? gGamma.data() : nullptr;
    const std::size_t m = scaleAndCenter ? 2 : 0; // the moving statistics' gradients
    cuda::batchNormForward(m_stream, gX.data(), gamma_, scaleAndCenter ? gBeta.data() : nullptr, gMean.data(), gVar.data(), training, gY.data(),
                           gStats.data(), rows, channels, o.epsilon);
    cuda::batchNormBackward(m_stream, gX.data(), gamma_, gMean.data(), gVar.data(), gStats.data(), gDy.data(), gDx.data(),
                            scaleAndCenter ? gGrads[0].data() : nullptr, scaleAndCenter ? gGrads[1].data() : nullptr, gGrads[m].data(),
                            gGrads[m + 1].data(), rows, channels, share);
    EXPECT_CLOSE(QStringLiteral("batch norm y"), gY.download(m_stream), y.data, kFp32);
    if (training)
        EXPECT_CLOSE(QStringLiteral("batch norm mean, 1/std, variance"), gStats.download(m_stream), state.saved[0].data, kFp32);
    else
        EXPECT_EQUAL_BITS(QStringLiteral("batch norm moving statistics (inference)"), gStats.download(m_stream), state.saved[0].data);
    EXPECT_CLOSE(QStringLiteral("batch norm dx"), gDx.download(m_stream), dx.data, kFp32);
    const char *names[] = {"dGamma", "dBeta", "moving mean update", "moving variance update"};
    for (std::size_t i = 0; i < grads.size(); ++i)
        EXPECT_CLOSE(QStringLiteral("batch norm %1").arg(names[i + 2 - m]), gGrads[i].download(m_stream), grads[i], kFp32);

    // Without dx (the layer's input needs no gradient) the parameters' gradients come alone.
    for (std::size_t i = 0; i < grads0.size(); ++i)
        gGrads[i].upload(grads0[i], m_stream);
    cuda::batchNormBackward(m_stream, gX.data(), gamma_, gMean.data(), gVar.data(), gStats.data(), gDy.data(), nullptr,
                            scaleAndCenter ? gGrads[0].data() : nullptr, scaleAndCenter ? gGrads[1].data() : nullptr, gGrads[m].data(),
                            gGrads[m + 1].data(), rows, channels, share);
    for (std::size_t i = 0; i < grads.size(); ++i)
        EXPECT_CLOSE(QStringLiteral("batch norm %1 without dx").arg(names[i + 2 - m]), gGrads[i].download(m_stream), grads[i], kFp32);
}

// The non-trainable state's step: the CPU's weights[i] += updates[i] (to the bit), updates zeroed.
void TestCudaKernels::stateUpdates()
{
    const std::size_t n = 70003;
    std::vector<float> w = uniform(n);
    const std::vector<float> u = uniform(n, -1e-3f, 1e-3f);
    auto gW = upload(w, m_stream), gU = upload(u, m_stream);
    cuda::applyStateUpdates(m_stream, gW.data(), gU.data(), std::int64_t(n));
    for (std::size_t i = 0; i < n; ++i)
        w[i] += u[i];
    EXPECT_EQUAL_BITS(QStringLiteral("state updates"), gW.download(m_stream), w);
    EXPECT_EQUAL_BITS(QStringLiteral("updates zeroed"), gU.download(m_stream), std::vector<float>(n, 0.0f));
}

#else // no CUDA build: initTestCase skipped everything

void TestCudaKernels::checksAndBuffers() {}
void TestCudaKernels::biasActivation_data() {}
void TestCudaKernels::biasActivation() {}
void TestCudaKernels::softmaxWideRows() {}
void TestCudaKernels::columnSums() {}
void TestCudaKernels::losses_data() {}
void TestCudaKernels::losses() {}
void TestCudaKernels::optimizers_data() {}
void TestCudaKernels::optimizers() {}
void TestCudaKernels::globalNormClipping() {}
void TestCudaKernels::layerNormalization_data() {}
void TestCudaKernels::layerNormalization() {}
void TestCudaKernels::dropoutMasksMatchTheCpu() {}
void TestCudaKernels::embeddingMatchesTheCpu() {}
void TestCudaKernels::sumOfReplicaBuffers() {}
void TestCudaKernels::matrixProducts_data() {}
void TestCudaKernels::matrixProducts() {}
void TestCudaKernels::convolutionCopies_data() {}
void TestCudaKernels::convolutionCopies() {}
void TestCudaKernels::pooling_data() {}
void TestCudaKernels::pooling() {}
void TestCudaKernels::globalPooling() {}
void TestCudaKernels::batchNormalization_data() {}
void TestCudaKernels::batchNormalization() {}
void TestCudaKernels::stateUpdates() {}

#endif

QTEST_GUILESS_MAIN(TestCudaKernels)
#include "tst_cuda_kernels.moc"
