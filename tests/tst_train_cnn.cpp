// A small CNN trained end to end on the CPU backend: Conv2D(relu) -> BatchNormalization ->
// MaxPooling2D -> Conv2D(strides 2) -> GlobalAveragePooling2D -> Dense, sparse categorical
// cross-entropy from logits. Against PyTorch (tests/data/train/cnn_reference.json, from
// make_cnn_reference.py): the loss of every step and the final weights, the moving statistics
// included, after a few SGD and Adam steps, with and without BatchNormalization. Mirrored
// replicas: without BatchNormalization any split of the global batch gives the weights of one
// replica; with it each replica normalises its own rows and the moving statistics average the
// replicas' batch statistics, as Keras's layer does under MirroredStrategy.
//
// Steps are taken as Trainer::Impl::trainStep takes them on the CPU (trainer_loop.cpp), with
// the model built straight from an element spec: every replica's Replica::run on its slice
// with the loss scaled by 1 / global rows, sumLocalReplicas, applyStateUpdates, then the
// optimizer on the trainable part of the buffer.
#include "support/train_reference.h"
#include "support/train_test_support.h"

#include "pipeline/engine/element.h"
#include "train/loop/batch_slicer.h"
#include "train/distribute/gradient_reducer.h"
#include "train/model/model.h"
#include "train/objectives/optimizer.h"
#include "train/loop/replica.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

using namespace sluice;
using namespace sluice::train;
using nlohmann::json;

namespace {

const json &reference() { return test::trainReference("cnn_reference.json"); }

// The reference's model, without its BatchNormalization layer when asked (the other layers
// name their inputs implicitly: each takes the previous one's output).
json modelJson(bool batchNormalization)
{
    json model = reference()["model"];
    if (!batchNormalization) {
        json layers = json::array();
        for (const auto &layer : model["layers"])
            if (layer["class_name"] != "BatchNormalization")
                layers.push_back(layer);
        model["layers"] = layers;
    }
    return model;
}

// What a pipeline batching the reference's data by 6 would declare.
pipeline::ElementSpec elementSpec()
{
    pipeline::ElementSpec spec;
    const Shape image = reference()["image"]["shape"].get<Shape>();
    spec.features.push_back({"image", pipeline::ValueType{}, image});
    spec.features.push_back({"label", pipeline::ValueType{DType::Int64}, {image[0]}});
    return spec;
}

std::unique_ptr<Model> buildModel(bool batchNormalization)
{
    auto built = Model::build(modelJson(batchNormalization), elementSpec());
    if (!built) {
        QTest::qFail(built.error().message().c_str(), __FILE__, __LINE__);
        return nullptr;
    }
    return std::move(*built);
}

// The global batch: images [6, 8, 8, 3] and class indices as floats [6].
struct Batch
{
    FloatTensor image, label;
};

Batch referenceBatch()
{
    Batch b;
    b.image = test::tensorFrom(reference()["image"]);
    const auto labels = reference()["label"].get<std::vector<float>>();
    b.label = FloatTensor(Shape{std::int64_t(labels.size())});
    b.label.data = labels;
    return b;
}

// The reference's initial weights in the model's flat buffer, by parameter name. Every
// parameter must be there with its Keras shape; the arrays left over must be those of layers
// the model lacks. Returns what is wrong, or nothing.
std::string loadInitialWeights(const Model &m, std::vector<float> &weights)
{
    const json &arrays = reference()["initial"];
    weights.assign(m.parameterCount(), 0.0f);
    std::set<std::string> used;
    for (const auto &p : m.parameters()) {
        if (!arrays.contains(p.name))
            return "the reference has no initial '" + p.name + "'";
        const FloatTensor t = test::tensorFrom(arrays[p.name]);
        if (t.shape != p.shape || t.size() != p.count)
            return "'" + p.name + "' is " + shapeString(t.shape) + " in the reference, " + shapeString(p.shape) + " in the model";
        std::copy(t.data.begin(), t.data.end(), weights.begin() + std::ptrdiff_t(p.offset));
        used.insert(p.name);
    }
    for (auto it = arrays.begin(); it != arrays.end(); ++it) {
        const std::string layer = it.key().substr(0, it.key().find('/'));
        const bool inModel = std::any_of(m.nodes().begin(), m.nodes().end(), [&](const ModelNode &n) { return n.name == layer; });
        if (!used.count(it.key()) && inModel)
            return "the model has no parameter '" + it.key() + "'";
    }
    return {};
}

std::size_t nodeIndex(const Model &m, const std::string &name)
{
    for (std::size_t i = 0; i < m.nodes().size(); ++i)
        if (m.nodes()[i].name == name)
            return i;
    return m.nodes().size();
}

const ParameterEntry *parameter(const Model &m, const std::string &name)
{
    for (const auto &p : m.parameters())
        if (p.name == name)
            return &p;
    return nullptr;
}

std::vector<float> valuesOf(const std::vector<float> &weights, const ParameterEntry &p)
{
    return {weights.begin() + std::ptrdiff_t(p.offset), weights.begin() + std::ptrdiff_t(p.offset + p.count)};
}

// Rows [begin, end) of a batch-first tensor.
FloatTensor rowsOf(const FloatTensor &t, std::int64_t begin, std::int64_t end)
{
    Shape shape = t.shape;
    shape[0] = end - begin;
    FloatTensor out(shape);
    const std::int64_t row = t.rowSize();
    std::copy(t.data.begin() + std::ptrdiff_t(begin * row), t.data.begin() + std::ptrdiff_t(end * row), out.data.begin());
    return out;
}

// Called after each step's forward and backward passes, before the reduction.
using Observer = std::function<void(int step, const std::vector<std::unique_ptr<Replica>> &replicas)>;

struct Training
{
    std::vector<double> losses; // per step, before its update: the mean over the global batch
    std::string error;
};

// `steps` training steps on `batch` split over `replicaCount` replicas as tf.distribute splits a
// global batch (splitRows), each step as trainer_loop.cpp takes it on the CPU.
Training trainSteps(const Model &m, std::vector<float> &weights, const json &optimizerSpec, const Batch &batch, int replicaCount, int steps,
               const Observer &observe = {})
{
    Training t;
    auto made = createOptimizer(optimizerSpec, m.trainableParameterCount());
    if (!made) {
        t.error = made.error().message();
        return t;
    }
    const std::unique_ptr<Optimizer> optimizer = std::move(*made);
    const float lr = optimizerSpec.at("learning_rate").get<float>();
    const std::int64_t rows = batch.image.shape[0];
    const std::vector<std::int64_t> bounds = splitRows(rows, replicaCount);
    std::vector<std::unique_ptr<Replica>> replicas;
    std::vector<BatchSlice> slices(static_cast<std::size_t>(replicaCount));
    for (int r = 0; r < replicaCount; ++r) {
        replicas.push_back(std::make_unique<Replica>(m));
        BatchSlice &s = slices[std::size_t(r)];
        s.rows = bounds[std::size_t(r) + 1] - bounds[std::size_t(r)];
        s.globalRowOffset = bounds[std::size_t(r)];
        s.inputs = {rowsOf(batch.image, bounds[std::size_t(r)], bounds[std::size_t(r) + 1])};
        s.targets = {rowsOf(batch.label, bounds[std::size_t(r)], bounds[std::size_t(r) + 1])};
    }
    const float scale = float(1.0 / double(rows)); // every replica: 1 / the global batch's rows
    for (int step = 0; step < steps; ++step) {
        double lossSum = 0;
        for (int r = 0; r < replicaCount; ++r) {
            PassContext ctx;
            ctx.training = true;
            ctx.seed = 7;
            ctx.step = std::uint64_t(step);
            ctx.globalRowOffset = bounds[std::size_t(r)];
            const SliceResult result = replicas[std::size_t(r)]->run(ctx, weights, slices[std::size_t(r)], scale, true, false);
            if (!result.finite) {
                t.error = "the loss is not finite at step " + std::to_string(step + 1);
                return t;
            }
            lossSum += result.outputLossSums[0];
        }
        t.losses.push_back(lossSum / double(rows));
        if (observe)
            observe(step, replicas);
        std::vector<std::vector<float> *> buffers;
        for (auto &rep : replicas)
            buffers.push_back(&rep->gradients());
        sumLocalReplicas(buffers);
        // The moving statistics first; the optimizer sees the trainable gradients only.
        applyStateUpdates(m, weights, *buffers[0]);
        const std::size_t trainable = m.trainableParameterCount();
        optimizer->apply(std::span<float>(weights).first(trainable), std::span<const float>(*buffers[0]).first(trainable), lr, step + 1);
    }
    return t;
}

// Per channel (the last axis) of a replica's activation: the mean and the biased variance over
// every other axis, in double.
struct Moments
{
    std::vector<double> mean, variance;
};

Moments moments(const FloatTensor &a)
{
    const std::size_t C = std::size_t(a.shape.back()), N = a.size() / C;
    Moments m{std::vector<double>(C, 0.0), std::vector<double>(C, 0.0)};
    for (std::size_t i = 0; i < a.size(); ++i)
        m.mean[i % C] += a.data[i];
    for (auto &v : m.mean)
        v /= double(N);
    for (std::size_t i = 0; i < a.size(); ++i)
        m.variance[i % C] += (a.data[i] - m.mean[i % C]) * (a.data[i] - m.mean[i % C]);
    for (auto &v : m.variance)
        v /= double(N);
    return m;
}

// The rows of several batch-first tensors of the same per-sample shape, one after the other.
FloatTensor concatenated(const std::vector<FloatTensor> &parts)
{
    Shape shape = parts.at(0).shape;
    shape[0] = 0;
    for (const auto &p : parts)
        shape[0] += p.shape[0];
    FloatTensor out(shape);
    auto at = out.data.begin();
    for (const auto &p : parts)
        at = std::copy(p.data.begin(), p.data.end(), at);
    return out;
}

const json *findRun(const std::string &name)
{
    for (const auto &run : reference()["runs"])
        if (run["name"] == name)
            return &run;
    return nullptr;
}

} // namespace

class TestTrainCnn : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // The model as Keras would build it: its weights under Keras's names and shapes, the moving
    // statistics non-trainable and after the optimizer's part.
    void modelHasKerasWeights()
    {
        const auto m = buildModel(true);
        QVERIFY(m);
        QStringList names;
        for (const auto &p : m->parameters())
            names << QString::fromStdString(p.name + " " + shapeString(p.shape)) + (p.trainable ? "" : " *");
        QCOMPARE(names.join(", "), QString("conv1/kernel (3, 3, 3, 4), conv1/bias (4,), bn/gamma (4,), bn/beta (4,), bn/moving_mean (4,) *, "
                                           "bn/moving_variance (4,) *, conv2/kernel (3, 3, 4, 5), conv2/bias (5,), logits/kernel (5, 3), "
                                           "logits/bias (3,)"));
        for (const char *name : {"bn/moving_mean", "bn/moving_variance"})
            QVERIFY(parameter(*m, name)->offset >= m->trainableParameterCount());
        QCOMPARE(m->nodes().back().shape, Shape{3});
        QCOMPARE(m->nodes()[nodeIndex(*m, "conv2")].shape, (Shape{1, 1, 5}));
    }

    // PyTorch's losses and final weights after a few steps (1e-5 relative: the reference is
    // float64 and shown by its script not to move by 2e-6 in float32).
    void matchesPyTorchTraining_data()
    {
        QTest::addColumn<int>("index");
        const json &runs = reference()["runs"];
        for (std::size_t i = 0; i < runs.size(); ++i)
            QTest::newRow(runs[i]["name"].get<std::string>().c_str()) << int(i);
    }
    void matchesPyTorchTraining()
    {
        QFETCH(int, index);
        const json &run = reference()["runs"][std::size_t(index)];
        const bool batchNormalization = run["batch_normalization"].get<bool>();
        const auto m = buildModel(batchNormalization);
        QVERIFY(m);
        std::vector<float> weights;
        const std::string loaded = loadInitialWeights(*m, weights);
        QVERIFY2(loaded.empty(), loaded.c_str());
        const int steps = reference()["steps"].get<int>();
        const Training t = trainSteps(*m, weights, run["optimizer"], referenceBatch(), 1, steps);
        QVERIFY2(t.error.empty(), t.error.c_str());

        const auto want = run["losses"].get<std::vector<double>>();
        QCOMPARE(t.losses.size(), want.size());
        for (std::size_t s = 0; s < want.size(); ++s)
            QVERIFY2(std::abs(t.losses[s] - want[s]) <= 1e-5 * std::abs(want[s]),
                     qPrintable(QString("step %1: loss %2, torch %3").arg(s + 1).arg(t.losses[s], 0, 'g', 9).arg(want[s], 0, 'g', 9)));

        const json &final = run["final"];
        QCOMPARE(final.size(), m->parameters().size());
        for (const auto &p : m->parameters()) {
            QVERIFY2(final.contains(p.name), p.name.c_str());
            const FloatTensor expected = test::tensorFrom(final[p.name]);
            QCOMPARE(expected.shape, p.shape);
            const double diff = test::maxRelativeDifference(valuesOf(weights, p), expected.data);
            QVERIFY2(diff < 1e-5, qPrintable(QString("%1: relative difference %2").arg(QString::fromStdString(p.name)).arg(diff)));
        }
    }

    // tf.distribute's contract without BatchNormalization: 2, 3 or 4 replicas on slices of the
    // global batch of 6 (4: uneven slices of 2, 2, 1, 1), each scaling its loss by 1/6 and the
    // gradients summed, take the steps of one replica on the whole batch.
    void replicasGiveTheWeightsOfOneReplica_data()
    {
        QTest::addColumn<QString>("run");
        QTest::newRow("sgd") << "sgd without batch normalization";
        QTest::newRow("adam") << "adam without batch normalization";
    }
    void replicasGiveTheWeightsOfOneReplica()
    {
        QFETCH(QString, run);
        const json *r = findRun(run.toStdString());
        QVERIFY(r);
        const auto m = buildModel(false);
        QVERIFY(m);
        QCOMPARE(m->trainableParameterCount(), m->parameterCount());
        const int steps = reference()["steps"].get<int>();
        std::vector<float> initial;
        const std::string loaded = loadInitialWeights(*m, initial);
        QVERIFY2(loaded.empty(), loaded.c_str());
        std::vector<float> one = initial;
        const Training single = trainSteps(*m, one, (*r)["optimizer"], referenceBatch(), 1, steps);
        QVERIFY2(single.error.empty(), single.error.c_str());
        for (int replicas : {2, 3, 4}) {
            std::vector<float> weights = initial;
            const Training t = trainSteps(*m, weights, (*r)["optimizer"], referenceBatch(), replicas, steps);
            QVERIFY2(t.error.empty(), t.error.c_str());
            for (std::size_t s = 0; s < single.losses.size(); ++s)
                QVERIFY2(std::abs(t.losses[s] - single.losses[s]) <= 1e-5 * std::abs(single.losses[s]),
                         qPrintable(QString("%1 replicas, step %2: loss %3, one replica %4").arg(replicas).arg(s + 1).arg(t.losses[s]).arg(single.losses[s])));
            for (const auto &p : m->parameters()) {
                const double diff = test::maxRelativeDifference(valuesOf(weights, p), valuesOf(one, p));
                QVERIFY2(diff < 1e-5, qPrintable(QString("%1 replicas, %2: relative difference %3").arg(replicas).arg(QString::fromStdString(p.name)).arg(diff)));
            }
        }
    }

    // With BatchNormalization, 2 replicas of 3 rows: each normalises by its own rows' statistics
    // and after the step the moving statistics are momentum * moving + (1 - momentum) * the mean
    // of the two replicas' batch statistics (Keras under MirroredStrategy), computed here in
    // double from what each replica fed the layer. The variance tells this apart from the
    // global batch's statistics (the mean of two equal slices' means is the global mean; the
    // mean of their variances is not the global variance).
    void movingStatisticsAverageTheReplicas()
    {
        const auto m = buildModel(true);
        QVERIFY(m);
        std::vector<float> weights;
        const std::string loaded = loadInitialWeights(*m, weights);
        QVERIFY2(loaded.empty(), loaded.c_str());
        const ParameterEntry *movingMean = parameter(*m, "bn/moving_mean"), *movingVariance = parameter(*m, "bn/moving_variance");
        QVERIFY(movingMean && movingVariance);
        const std::vector<float> mean0 = valuesOf(weights, *movingMean), variance0 = valuesOf(weights, *movingVariance);
        double momentum = 0;
        for (const auto &layer : reference()["model"]["layers"])
            if (layer["class_name"] == "BatchNormalization")
                momentum = layer["momentum"].get<double>();
        QVERIFY(momentum > 0 && momentum < 1);

        const std::size_t bnInput = nodeIndex(*m, "conv1");
        QCOMPARE(m->nodes()[nodeIndex(*m, "bn")].inputs, std::vector<int>{int(bnInput)});
        std::vector<FloatTensor> seen; // what each replica fed the layer
        const Training t = trainSteps(*m, weights, json{{"type", "sgd"}, {"learning_rate", 0.1}}, referenceBatch(), 2, 1,
                                 [&](int, const std::vector<std::unique_ptr<Replica>> &replicas) {
                                     for (const auto &rep : replicas)
                                         seen.push_back(rep->activation(bnInput));
                                 });
        QVERIFY2(t.error.empty(), t.error.c_str());
        QCOMPARE(seen.size(), std::size_t(2));
        QCOMPARE(seen[0].shape, (Shape{3, 8, 8, 4}));
        QCOMPARE(seen[1].shape, (Shape{3, 8, 8, 4}));

        const Moments a = moments(seen[0]), b = moments(seen[1]), global = moments(concatenated(seen));
        const std::vector<float> mean1 = valuesOf(weights, *movingMean), variance1 = valuesOf(weights, *movingVariance);
        double separation = 0;
        for (std::size_t c = 0; c < 4; ++c) {
            const double wantMean = momentum * mean0[c] + (1 - momentum) * (a.mean[c] + b.mean[c]) / 2;
            const double wantVariance = momentum * variance0[c] + (1 - momentum) * (a.variance[c] + b.variance[c]) / 2;
            QVERIFY2(test::closeTo(mean1[c], wantMean, 1e-6), qPrintable(QString("moving_mean[%1]: %2, expected %3").arg(c).arg(mean1[c], 0, 'g', 9).arg(wantMean, 0, 'g', 9)));
            QVERIFY2(test::closeTo(variance1[c], wantVariance, 1e-6),
                     qPrintable(QString("moving_variance[%1]: %2, expected %3").arg(c).arg(variance1[c], 0, 'g', 9).arg(wantVariance, 0, 'g', 9)));
            separation = std::max(separation, std::abs(wantVariance - (momentum * variance0[c] + (1 - momentum) * global.variance[c])));
        }
        // Otherwise the check above could not tell per-replica statistics from global ones.
        QVERIFY2(separation > 1e-5, qPrintable(QString("the replicas' variances average to the global one within %1").arg(separation)));
    }
};

QTEST_GUILESS_MAIN(TestTrainCnn)
#include "tst_train_cnn.moc"
