// The trainer's CUDA backend end to end. Everywhere: device lists and precision are read as
// documented, and a run that asks for GPUs where there are none says so once and trains on the
// CPU to the CPU run's weights. On a GPU (skipped with a message elsewhere): K steps on CUDA
// equal K steps on the CPU backend (fp32 within float rounding, TF32 and bf16 within their
// mantissas), small CNNs with BatchNormalization too (its moving statistics included), 1, 2 and
// 4 logical replicas on one GPU equal one replica on the global batch, every layer class has
// GPU kernels, and batches that do not fit are errors naming the layer.
#include "pipeline/engine/pipeline.h"
#include "support/train_test_support.h"
#include "train/loop/batch_slicer.h"
#include "train/model/model.h"
#include "train/gpu/device_query.h"
#include "train/model/layer_registry.h"
#include "train/loop/training_config.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>

using namespace sluice;
using namespace sluice::test;

namespace {

bool hasGpu() { return !queryGpuDevices().devices.empty(); }

// Why the GPU tests cannot run here; empty where they can.
QString gpuMissing()
{
#ifndef SLUICE_HAVE_CUDA
    return QStringLiteral("built without CUDA: no GPU training to test");
#else
    const auto q = queryGpuDevices();
    return q.devices.empty() ? "no GPU on this machine (" + QString::fromStdString(q.reason) + "): GPU training tests skipped" : QString();
#endif
}

// QSKIP returns from the test function itself, so this is a macro.
#define REQUIRE_GPU()                                 \
    do {                                              \
        if (const QString why = gpuMissing(); !why.isEmpty()) \
            QSKIP(qPrintable(why));                   \
    } while (0)

nlohmann::json withDevices(nlohmann::json training, const nlohmann::json &devices)
{
    training["devices"] = devices;
    return training;
}

// Dense (relu, gelu, softmax-free), LayerNormalization, Dropout, Concatenate, two outputs.
nlohmann::json geluModel()
{
    return nlohmann::json::parse(R"({
      "inputs": [{"name": "x", "feature": "x"}],
      "layers": [
        {"class_name": "Dense", "name": "d1", "units": 32, "activation": "gelu"},
        {"class_name": "Dense", "name": "d2", "units": 32, "activation": "relu"},
        {"class_name": "Reshape", "name": "r", "target_shape": [4, 8]},
        {"class_name": "Flatten", "name": "f"},
        {"class_name": "Dense", "name": "d3", "units": 2}
      ],
      "outputs": [{"name": "y", "layer": "d3", "target": "y", "loss": "mse", "metrics": ["mae"]}]})");
}

// seq (5, 3) through a GRU returning sequences, TimeDistributed Dense, a GRU or an LSTM, then
// (LSTM) RepeatVector + Flatten: every recurrent path of the GPU backend.
nlohmann::json recurrentModel(bool lstm)
{
    const std::string second = lstm ? "LSTM" : "GRU";
    return nlohmann::json::parse(R"({
      "inputs": [{"name": "seq", "feature": "seq"}],
      "layers": [
        {"class_name": "GRU", "name": "g1", "units": 6, "return_sequences": true},
        {"class_name": "TimeDistributed", "name": "td", "layer": {"class_name": "Dense", "units": 4, "activation": "tanh"}},
        {"class_name": ")" + second + R"(", "name": "r2", "units": 5},
        {"class_name": "RepeatVector", "name": "rep", "n": 2},
        {"class_name": "Flatten", "name": "flat"},
        {"class_name": "Dense", "name": "out", "units": 2}
      ],
      "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}]})");
}

// Small CNNs on seq (5, 3) with BatchNormalization (momentum 0.9, so that its moving statistics
// move visibly in a few steps) after a ReLU convolution, as in Keras's usual blocks (a bias right
// before BatchNormalization would get a gradient of pure rounding noise). 2-D: the sequence as a
// 5x3 one-channel image, Conv2D same, MaxPooling2D same, Conv2D valid, GlobalAveragePooling2D.
// 1-D: Conv1D same, AveragePooling1D stride 1, a dilated Conv1D same, GlobalMaxPooling1D.
nlohmann::json cnnModel(bool twoD)
{
    if (twoD)
        return nlohmann::json::parse(R"({
          "inputs": [{"name": "seq", "feature": "seq"}],
          "layers": [
            {"class_name": "Reshape", "name": "image", "target_shape": [5, 3, 1]},
            {"class_name": "Conv2D", "name": "c1", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "relu"},
            {"class_name": "BatchNormalization", "name": "bn", "momentum": 0.9},
            {"class_name": "MaxPooling2D", "name": "pool", "pool_size": 2, "padding": "same"},
            {"class_name": "Conv2D", "name": "c2", "filters": 3, "kernel_size": 2, "activation": "tanh"},
            {"class_name": "GlobalAveragePooling2D", "name": "gap"},
            {"class_name": "Dense", "name": "out", "units": 2}
          ],
          "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse", "metrics": ["mae"]}]})");
    return nlohmann::json::parse(R"({
      "inputs": [{"name": "seq", "feature": "seq"}],
      "layers": [
        {"class_name": "Conv1D", "name": "c1", "filters": 6, "kernel_size": 2, "padding": "same", "activation": "relu"},
        {"class_name": "BatchNormalization", "name": "bn", "momentum": 0.9},
        {"class_name": "AveragePooling1D", "name": "pool", "pool_size": 2, "strides": 1},
        {"class_name": "Conv1D", "name": "c2", "filters": 4, "kernel_size": 2, "dilation_rate": 2, "padding": "same"},
        {"class_name": "GlobalMaxPooling1D", "name": "gmp"},
        {"class_name": "Dense", "name": "out", "units": 2}
      ],
      "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse", "metrics": ["mae"]}]})");
}

} // namespace

class TestGpuTraining : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string dir() const { return m_dir.path().toStdString(); }


private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        writeTrainingData(dir(), 100);
    }

    void devicesAndPrecisionAreRead_data()
    {
        QTest::addColumn<QString>("training");
        QTest::addColumn<QString>("expected"); // gpu devices as "0,0" ("-1" for all) or the error's words
        QTest::newRow("every GPU") << R"({"devices": ["cuda"]})" << "-1";
        QTest::newRow("two GPUs") << R"({"devices": ["cuda:0", "cuda:1"]})" << "0,1";
        QTest::newRow("logical replicas") << R"({"devices": ["cuda:0", "cuda:0", "gpu:0"]})" << "0,0,0";
        QTest::newRow("cpu replicas") << R"({"devices": ["cpu:0", "cpu:1"]})" << "";
        QTest::newRow("mixed") << R"({"devices": ["cpu", "cuda:0"]})" << "mixes CPU and GPU";
        QTest::newRow("cuda twice") << R"({"devices": ["cuda", "cuda:1"]})" << "already means every GPU";
        QTest::newRow("bad index") << R"({"devices": ["cuda:x"]})" << "unknown device 'cuda:x'";
        QTest::newRow("unknown") << R"({"devices": ["tpu:0"]})" << "unknown device 'tpu:0'";
        QTest::newRow("precision") << R"({"precision": "fp8"})" << "training.precision";
    }
    void devicesAndPrecisionAreRead()
    {
        QFETCH(QString, training);
        QFETCH(QString, expected);
        auto project = Project::fromJson(trainingProject(mlpModel(), nlohmann::json::parse(training.toStdString()), 10), dir());
        QVERIFY(project.ok());
        auto config = train::parseTrainingConfig(*project);
        const bool error = expected.contains(' ') || expected.contains("precision");
        if (error) {
            QVERIFY(!config.ok());
            QVERIFY2(QString::fromStdString(config.error().message()).contains(expected), qPrintable(QString::fromStdString(config.error().message())));
            QVERIFY2(QString::fromStdString(config.error().message()).startsWith("training."), qPrintable(QString::fromStdString(config.error().message())));
            return;
        }
        QVERIFY2(config.ok(), qPrintable(QString::fromStdString(config.ok() ? "" : config.error().message())));
        QStringList got;
        for (int d : config->gpuDevices)
            got << QString::number(d);
        QCOMPARE(got.join(','), expected);
        QCOMPARE(config->replicas, int(config->devices.size()));
    }

    // docs/architecture.md, decision 4: a run that asks for GPUs where there are none says why, once, and
    // trains on the CPU backend exactly as a CPU run does.
    void withoutAGpuTrainingFallsBackToTheCpu()
    {
        if (hasGpu())
            QSKIP("this machine has a GPU: the fallback is for machines without one");
        const nlohmann::json training{{"epochs", 2}, {"seed", 5}, {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}}};
        auto cpu = runTraining(trainingProject(mlpModel(), training, 32), dir());
        QVERIFY2(cpu.error.empty(), cpu.error.c_str());
        auto asked = runTraining(trainingProject(mlpModel(), withDevices(training, {"cuda"}), 32), dir());
        QVERIFY2(asked.error.empty(), asked.error.c_str());
        const auto notices = asked.eventsOf("notice");
        QCOMPARE(notices.size(), std::size_t(1));
        const std::string message = notices[0]["message"];
        QVERIFY2(message.find("CPU") != std::string::npos, message.c_str());
        QCOMPARE(asked.eventsOf("run_start").at(0)["device"].get<std::string>(), std::string("cpu"));
        QCOMPARE(asked.weights, cpu.weights);
        QVERIFY(cpu.eventsOf("notice").empty());
    }

    // A GPU replica stages rows straight from the pipeline's batch into pinned memory
    // (gatherSlice): the same fp32 values as the CPU replicas' slices, int64 labels converted,
    // sample weights times class weights, in the blocks the replica copies to the device.
    void gatheredSlicesEqualTheCpuSlices_data()
    {
        QTest::addColumn<bool>("sampleWeights");
        QTest::addColumn<bool>("classWeights");
        QTest::newRow("plain") << false << false;
        QTest::newRow("sample weights") << true << false;
        QTest::newRow("class weights") << false << true;
        QTest::newRow("both") << true << true;
    }
    void gatheredSlicesEqualTheCpuSlices()
    {
        QFETCH(bool, sampleWeights);
        QFETCH(bool, classWeights);
        const auto model = nlohmann::json::parse(R"({
          "inputs": [{"name": "x", "feature": "x"}, {"name": "seq", "feature": "seq"}],
          "layers": [{"class_name": "Flatten", "name": "f", "inputs": ["seq"]},
                     {"class_name": "Concatenate", "name": "cat", "inputs": ["x", "f"]},
                     {"class_name": "Dense", "name": "logits", "units": 3}],
          "outputs": [{"name": "label", "layer": "logits", "target": "label", "loss": "sparse_categorical_crossentropy", "from_logits": true}]})");
        auto project = Project::fromJson(trainingProject(model, {{"epochs", 1}}, 30), dir());
        QVERIFY(project.ok());
        auto pipe = pipeline::Pipeline::build(*project);
        QVERIFY(pipe.ok());
        auto built = train::Model::build(project->model, (*pipe)->elementSpec());
        QVERIFY2(built.ok(), built.ok() ? "" : built.error().message().c_str());
        const train::Model &m = **built;
        auto batch = (*pipe)->next();
        QVERIFY(batch.ok() && *batch);
        train::SampleWeighting weighting;
        if (sampleWeights)
            weighting.sampleWeightFeature = (*pipe)->elementSpec().find("w");
        if (classWeights)
            weighting.classWeights = {{0, 0.5f}, {2, 3.0f}};

        // The staging layout: x (6), seq (15), label (1), then the weight.
        const std::vector<std::size_t> offsets{0, 6, 21, 22};
        for (auto [begin, end] : {std::pair<std::int64_t, std::int64_t>{0, 30}, {7, 19}}) {
            const std::size_t rows = std::size_t(end - begin);
            std::vector<float> staged(rows * 23, std::nanf(""));
            const bool weighted = train::gatherSlice(m, **batch, weighting, begin, end, offsets, staged.data());
            train::BatchSlice slice;
            train::sliceBatch(m, **batch, weighting, begin, end, slice);
            QCOMPARE(weighted, !slice.weights.empty());
            auto block = [&](std::size_t k, std::size_t n) { return std::vector<float>(staged.begin() + long(rows * offsets[k]), staged.begin() + long(rows * offsets[k] + n)); };
            QCOMPARE(block(0, slice.inputs[0].size()), slice.inputs[0].data);
            QCOMPARE(block(1, slice.inputs[1].size()), slice.inputs[1].data);
            QCOMPARE(block(2, slice.targets[0].size()), slice.targets[0].data);
            if (weighted)
                QCOMPARE(block(3, rows), slice.weights);
        }
    }

    // K steps on the GPU against the CPU backend, the reference.
    void cudaMatchesTheCpuBackend_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<QString>("precision");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("mlp sgd fp32") << "mlp" << "sgd" << "fp32" << 1e-4;
        QTest::newRow("mlp adam fp32") << "mlp" << "adam" << "fp32" << 1e-4;
        QTest::newRow("gelu rmsprop fp32") << "gelu" << "rmsprop" << "fp32" << 1e-4;
        QTest::newRow("multi-input adam dropout fp32") << "multi" << "adam" << "fp32" << 1e-4;
        QTest::newRow("mlp adam tf32") << "mlp" << "adam" << "tf32" << 3e-3;
        QTest::newRow("multi-input adam bf16") << "multi" << "adam" << "bf16" << 5e-2;
        QTest::newRow("gru sequences adam fp32") << "gru" << "adam" << "fp32" << 1e-4;
        QTest::newRow("lstm repeat adam fp32") << "lstm" << "adam" << "fp32" << 1e-4;
    }
    void cudaMatchesTheCpuBackend()
    {
        REQUIRE_GPU();
        QFETCH(QString, model);
        QFETCH(QString, optimizer);
        QFETCH(QString, precision);
        QFETCH(double, tolerance);
        const nlohmann::json m = model == "mlp" ? mlpModel() : model == "gelu" ? geluModel() : model == "multi" ? multiInputModel(0.3) : recurrentModel(model == "lstm");
        nlohmann::json opt = optimizer == "sgd" ? nlohmann::json{{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}}
                                                : nlohmann::json{{"type", optimizer.toStdString()}, {"learning_rate", 0.01}};
        const nlohmann::json training{{"epochs", 2}, {"seed", 11}, {"optimizer", opt}, {"global_clipnorm", 5.0}};
        auto cpu = runTraining(trainingProject(m, training, 32), dir());
        QVERIFY2(cpu.error.empty(), cpu.error.c_str());
        nlohmann::json onGpu = withDevices(training, {"cuda:0"});
        onGpu["precision"] = precision.toStdString();
        auto gpu = runTraining(trainingProject(m, onGpu, 32), dir());
        QVERIFY2(gpu.error.empty(), gpu.error.c_str());
        QVERIFY2(gpu.eventsOf("run_start").at(0)["device"].get<std::string>().rfind("cuda:0", 0) == 0, gpu.eventsOf("run_start").at(0).dump().c_str());
        QCOMPARE(gpu.outcome.steps, cpu.outcome.steps);
        const double diff = maxRelativeDifference(gpu.weights, cpu.weights);
        QVERIFY2(diff < tolerance, qPrintable(QString("%1: relative difference %2 (tolerance %3)").arg(precision).arg(diff).arg(tolerance)));
        const double cpuLoss = cpu.eventsOf("epoch_end").back()["loss"], gpuLoss = gpu.eventsOf("epoch_end").back()["loss"];
        QVERIFY2(std::abs(gpuLoss - cpuLoss) <= 10 * tolerance * std::abs(cpuLoss), qPrintable(QString("loss %1 vs %2").arg(gpuLoss).arg(cpuLoss)));
        // Metrics come from the GPU's predictions: the same keys as on the CPU (every model here
        // declares mae except the recurrent ones), with close values.
        const nlohmann::json cpuEnd = cpu.eventsOf("epoch_end").back(), gpuEnd = gpu.eventsOf("epoch_end").back();
        int metrics = 0;
        for (const auto &[key, value] : cpuEnd.items()) {
            QVERIFY2(gpuEnd.contains(key), qPrintable(QString("epoch_end on the GPU lacks %1: %2").arg(key.c_str(), gpuEnd.dump().c_str())));
            if (key.find("mae") == std::string::npos)
                continue;
            ++metrics;
            const double cpuMae = value, gpuMae = gpuEnd[key];
            QVERIFY2(std::abs(gpuMae - cpuMae) <= 10 * tolerance * std::abs(cpuMae), qPrintable(QString("%1 %2 vs %3").arg(key.c_str()).arg(gpuMae).arg(cpuMae)));
        }
        QCOMPARE(metrics > 0, model != "gru" && model != "lstm");
    }

    void cnnWithBatchNormalizationMatchesTheCpu_data()
    {
        QTest::addColumn<bool>("twoD");
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<double>("clipnorm"); // small enough to clip: the moving statistics must stay out of the norm
        QTest::addColumn<int>("replicas");
        QTest::newRow("2-D CNN sgd, clipped") << true << "sgd" << 0.1 << 1;
        QTest::newRow("1-D CNN adam") << false << "adam" << 0.0 << 1;
        QTest::newRow("2-D CNN adam, 2 logical replicas") << true << "adam" << 5.0 << 2;
    }
    // Conv, pooling and BatchNormalization trained on cuda:0 against the CPU backend with as many
    // replicas (each normalises its own rows; the moving statistics average their batch
    // statistics through the gradient sum): every weight, and the moving statistics on their own,
    // which must have left their initial values. BatchNormalization over a few rows amplifies
    // rounding differences, and a near-tie in max pooling may go either way under them: hence a
    // looser limit than the dense models'.
    void cnnWithBatchNormalizationMatchesTheCpu()
    {
        REQUIRE_GPU();
        QFETCH(bool, twoD);
        QFETCH(QString, optimizer);
        QFETCH(double, clipnorm);
        QFETCH(int, replicas);
        const double tolerance = 1e-3;
        const nlohmann::json m = cnnModel(twoD);
        const nlohmann::json opt = optimizer == "sgd" ? nlohmann::json{{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}}
                                                      : nlohmann::json{{"type", "adam"}, {"learning_rate", 0.01}};
        nlohmann::json training{{"epochs", 2}, {"seed", 13}, {"optimizer", opt}};
        if (clipnorm > 0)
            training["global_clipnorm"] = clipnorm;
        nlohmann::json cpuDevices = nlohmann::json::array(), gpuDevices = nlohmann::json::array();
        for (int r = 0; r < replicas; ++r) {
            cpuDevices.push_back("cpu:" + std::to_string(r));
            gpuDevices.push_back("cuda:0");
        }
        auto cpu = runTraining(trainingProject(m, withDevices(training, cpuDevices), 32), dir());
        QVERIFY2(cpu.error.empty(), cpu.error.c_str());
        auto gpu = runTraining(trainingProject(m, withDevices(training, gpuDevices), 32), dir());
        QVERIFY2(gpu.error.empty(), gpu.error.c_str());
        QVERIFY2(gpu.eventsOf("run_start").at(0)["device"].get<std::string>().rfind("cuda:0", 0) == 0, gpu.eventsOf("run_start").at(0).dump().c_str());
        QCOMPARE(gpu.outcome.steps, cpu.outcome.steps);
        QCOMPARE(gpu.weights.size(), cpu.weights.size());
        const double diff = maxRelativeDifference(gpu.weights, cpu.weights);
        QVERIFY2(diff < tolerance, qPrintable(QString("relative difference %1 (tolerance %2)").arg(diff).arg(tolerance)));

        // The moving statistics, found through the model's layout (after every trainable array).
        auto project = Project::fromJson(trainingProject(m, training, 32), dir());
        QVERIFY(project.ok());
        auto pipe = pipeline::Pipeline::build(*project);
        QVERIFY(pipe.ok());
        auto built = train::Model::build(project->model, (*pipe)->elementSpec());
        QVERIFY2(built.ok(), built.ok() ? "" : built.error().message().c_str());
        QCOMPARE((*built)->parameterCount(), cpu.weights.size());
        int states = 0;
        for (const auto &p : (*built)->parameters()) {
            if (p.trainable)
                continue;
            ++states;
            QVERIFY(p.offset >= (*built)->trainableParameterCount());
            const auto first = std::ptrdiff_t(p.offset), last = std::ptrdiff_t(p.offset + p.count);
            const std::vector<float> onCpu(cpu.weights.begin() + first, cpu.weights.begin() + last),
                onGpu(gpu.weights.begin() + first, gpu.weights.begin() + last);
            const float initial = p.name.find("moving_variance") != std::string::npos ? 1.0f : 0.0f;
            QVERIFY2(std::any_of(onCpu.begin(), onCpu.end(), [&](float v) { return v != initial; }), (p.name + " never moved on the CPU").c_str());
            const double d = maxRelativeDifference(onGpu, onCpu);
            QVERIFY2(d < tolerance, qPrintable(QString("%1: relative difference %2").arg(QString::fromStdString(p.name)).arg(d)));
        }
        QCOMPARE(states, 2);
        const double cpuLoss = cpu.eventsOf("epoch_end").back()["loss"], gpuLoss = gpu.eventsOf("epoch_end").back()["loss"];
        QVERIFY2(std::abs(gpuLoss - cpuLoss) <= 10 * tolerance * std::abs(cpuLoss), qPrintable(QString("loss %1 vs %2").arg(gpuLoss).arg(cpuLoss)));
    }

    // tf.distribute's contract on one GPU: logical replicas on a global batch = one replica.
    void logicalReplicasEqualOneReplica()
    {
        REQUIRE_GPU();
        std::vector<float> reference;
        for (int replicas : {1, 2, 4}) {
            nlohmann::json devices = nlohmann::json::array();
            for (int r = 0; r < replicas; ++r)
                devices.push_back("cuda:0");
            const nlohmann::json training{{"epochs", 2}, {"seed", 7}, {"devices", devices}, {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}}};
            auto run = runTraining(trainingProject(multiInputModel(0.3), training, 32,
                                                   {{{"id", "shuffle"}, {"op", "global_shuffle"}, {"params", {{"seed", 3}}}}}),
                                   dir());
            QVERIFY2(run.error.empty(), run.error.c_str());
            QCOMPARE(run.outcome.steps, std::int64_t(8));
            const std::string reducer = run.eventsOf("run_start").at(0)["reducer"];
            QCOMPARE(QString::fromStdString(reducer), QString("in-device"));
            if (replicas == 1) {
                reference = run.weights;
                continue;
            }
            const double diff = maxRelativeDifference(run.weights, reference);
            QVERIFY2(diff < 1e-5, qPrintable(QString("%1 logical replicas: relative difference %2").arg(replicas).arg(diff)));
        }
    }

    // Every layer class of the registry tells the GPU backend how to run it (a Kind::None layer
    // would be refused on GPUs): checked here on every machine, as the spec is host logic.
    void everyLayerHasGpuKernels()
    {
        const nlohmann::json none = nlohmann::json::object();
        const std::map<std::string, nlohmann::json> configs{
            {"Activation", {{"activation", "relu"}}},     {"Concatenate", none},                     {"Dense", {{"units", 3}}},
            {"Dropout", {{"rate", 0.5}}},                 {"Flatten", none},                         {"GRU", {{"units", 3}}},
            {"LSTM", {{"units", 3}}},                     {"LayerNormalization", none},
            {"RepeatVector", {{"n", 2}}},                 {"Reshape", {{"target_shape", {3, 1}}}},
            {"TimeDistributed", {{"layer", {{"class_name", "Dense"}, {"units", 2}}}}},
            {"Conv1D", {{"filters", 2}, {"kernel_size", 3}}}, {"Conv2D", {{"filters", 2}, {"kernel_size", 3}}},
            {"MaxPooling1D", none},                       {"MaxPooling2D", none},                    {"AveragePooling1D", none},
            {"AveragePooling2D", none},                   {"GlobalAveragePooling1D", none},          {"GlobalAveragePooling2D", none},
            {"GlobalMaxPooling1D", none},                 {"GlobalMaxPooling2D", none},              {"BatchNormalization", none},
            {"Embedding", {{"input_dim", 4}, {"output_dim", 2}}}};
        for (const auto &info : train::knownLayers()) {
            QVERIFY2(configs.count(info.className), ("no test config for layer class " + info.className).c_str());
            auto layer = train::createLayer(info.className, "l", configs.at(info.className));
            QVERIFY2(layer.ok(), (info.className + ": " + (layer.ok() ? "" : layer.error().message())).c_str());
            QVERIFY2((*layer)->kernelSpec().kind != train::LayerKernelSpec::Kind::None, (info.className + " has no GPU kernel spec").c_str());
        }
    }

    // A batch whose activations cannot fit: an error naming the layer and the batch, no crash.
    void outOfMemoryNamesTheLayerAndBatch()
    {
        REQUIRE_GPU();
        const auto model = nlohmann::json::parse(R"({
          "inputs": [{"name": "x", "feature": "x"}],
          "layers": [{"class_name": "Dense", "name": "huge", "units": 268435456}, {"class_name": "Dense", "name": "out", "units": 2}],
          "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}]})");
        auto run = runTraining(trainingProject(model, {{"devices", {"cuda:0"}}, {"optimizer", "sgd"}}, 100), dir());
        QVERIFY2(run.error.find("out of GPU memory for layer 'huge'") != std::string::npos, run.error.c_str());
        QVERIFY2(run.error.find("batch of 100 rows") != std::string::npos, run.error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestGpuTraining)
#include "tst_gpu_training.moc"
