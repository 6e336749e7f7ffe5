// The Keras Embedding layer (train/layers/embedding.cpp) and the row-sparse path its table takes
// through a training step (train/loop/step_update.h): forward and backward against a naive lookup and
// scatter-add, the table's gradient against finite differences, training steps against PyTorch
// (tests/data/train/embedding_reference.json, from make_embedding_reference.py) with dense
// updates (Keras; torch.optim.Adam) and lazy ones (sparse_updates; torch.optim.SparseAdam),
// mirrored replicas with global_clipnorm, what lazy updates leave alone and dense ones do not,
// and the errors an id out of range or a bad configuration gives.
//
// Steps are taken as Trainer::Impl::trainStep takes them on the CPU (trainer_loop.cpp), with the
// model built straight from an element spec: every replica's Replica::run on its slice with the
// loss scaled by 1 / global rows, then reduceGradients and applyStepUpdate with the rows the
// global batch used.
#include "support/gradient_check.h"
#include "support/pipeline_test_support.h"
#include "support/train_reference.h"
#include "support/train_test_support.h"

#include "pipeline/engine/element.h"
#include "train/loop/batch_slicer.h"
#include "train/distribute/gradient_reducer.h"
#include "train/model/layer_registry.h"
#include "train/model/model.h"
#include "train/objectives/optimizer.h"
#include "train/loop/replica.h"
#include "train/loop/step_update.h"
#include "train/loop/trainer.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>

using namespace sluice;
using namespace sluice::train;
using nlohmann::json;

namespace {

// Below every step's gradient norm in the reference runs (0.33 to 0.54), so that global_clipnorm
// scales every step's gradient (checked where it is used).
constexpr double kClipnorm = 0.2;

const json &reference() { return test::trainReference("embedding_reference.json"); }

QString qs(const std::string &s) { return QString::fromStdString(s); }
bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// The reference's model with the Embedding's sparse_updates set.
json modelJson(bool sparseUpdates)
{
    json model = reference()["model"];
    model["layers"][0]["sparse_updates"] = sparseUpdates;
    return model;
}

// What a pipeline batching the reference's ids (int64, as a user's ids are) and targets by 6 declares.
pipeline::ElementSpec elementSpec()
{
    pipeline::ElementSpec spec;
    const json &batch = reference()["batches"][0];
    spec.features.push_back({"ids", pipeline::ValueType{DType::Int64}, batch["ids"]["shape"].get<Shape>()});
    spec.features.push_back({"y", pipeline::ValueType{}, batch["y"]["shape"].get<Shape>()});
    return spec;
}

std::unique_ptr<Model> buildModel(const json &model)
{
    auto built = Model::build(model, elementSpec());
    if (!built) {
        QTest::qFail(built.error().message().c_str(), __FILE__, __LINE__);
        return nullptr;
    }
    return std::move(*built);
}

// One step's global batch: ids [6, 2] as the replicas get them (float32) and targets [6, 2].
struct Batch
{
    FloatTensor ids, y;
};

std::vector<Batch> referenceBatches()
{
    std::vector<Batch> batches;
    for (const auto &b : reference()["batches"])
        batches.push_back({test::tensorFrom(b["ids"]), test::tensorFrom(b["y"])});
    return batches;
}

// The sorted, distinct ids of a tensor: the table rows a batch uses.
std::vector<std::int64_t> distinctIds(const FloatTensor &ids)
{
    std::vector<std::int64_t> rows;
    for (float v : ids.data)
        rows.push_back(std::int64_t(v));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
}

// The reference's initial weights in the model's flat buffer, by parameter name (every array of
// the reference used, every parameter found with its Keras shape). Returns what is wrong, or "".
std::string loadInitialWeights(const Model &m, std::vector<float> &weights)
{
    const json &arrays = reference()["initial"];
    weights.assign(m.parameterCount(), 0.0f);
    if (arrays.size() != m.parameters().size())
        return "the reference has " + std::to_string(arrays.size()) + " arrays, the model " + std::to_string(m.parameters().size()) + " parameters";
    for (const auto &p : m.parameters()) {
        if (!arrays.contains(p.name))
            return "the reference has no initial '" + p.name + "'";
        const FloatTensor t = test::tensorFrom(arrays[p.name]);
        if (t.shape != p.shape)
            return "'" + p.name + "' is " + shapeString(t.shape) + " in the reference, " + shapeString(p.shape) + " in the model";
        std::copy(t.data.begin(), t.data.end(), weights.begin() + std::ptrdiff_t(p.offset));
    }
    return {};
}

const ParameterEntry *parameter(const Model &m, const std::string &name)
{
    for (const auto &p : m.parameters())
        if (p.name == name)
            return &p;
    return nullptr;
}

std::vector<float> valuesOf(const std::vector<float> &buffer, const ParameterEntry &p)
{
    return {buffer.begin() + std::ptrdiff_t(p.offset), buffer.begin() + std::ptrdiff_t(p.offset + p.count)};
}

// Row `row` of table `p` in a flat buffer laid out like the weights (the weights, an optimizer slot).
std::vector<float> tableRow(const std::vector<float> &buffer, const ParameterEntry &p, std::int64_t row)
{
    const std::size_t width = std::size_t(p.shape.at(1));
    const auto begin = buffer.begin() + std::ptrdiff_t(p.offset + std::size_t(row) * width);
    return {begin, begin + std::ptrdiff_t(width)};
}

const json *findRun(const std::string &name)
{
    for (const auto &run : reference()["runs"])
        if (run["name"] == name)
            return &run;
    return nullptr;
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

// Rows [begin, end) of a batch as one replica's slice.
BatchSlice sliceOf(const Batch &batch, std::int64_t begin, std::int64_t end)
{
    BatchSlice s;
    s.rows = end - begin;
    s.globalRowOffset = begin;
    s.inputs = {rowsOf(batch.ids, begin, end)};
    s.targets = {rowsOf(batch.y, begin, end)};
    return s;
}

enum class Reduction {
    RowSparse, // reduceGradients, then applyStepUpdate with the rows used: what the Trainer does
    Dense,     // sumLocalReplicas over the whole buffers, then applyStepUpdate over all of them
};

// Training steps on global batches split over mirrored replicas as tf.distribute splits them
// (splitRows), each step as trainer_loop.cpp takes it on the CPU.
class Stepper
{
public:
    Stepper(const Model &model, const json &optimizerSpec, int replicaCount, double clipnorm = 0, Reduction reduction = Reduction::RowSparse)
        : m_model(model), m_clipnorm(clipnorm), m_reduction(reduction), m_reducer(makeInProcessReducer())
    {
        auto made = createOptimizer(optimizerSpec, model.trainableParameterCount());
        if (!made) {
            m_error = made.error().message();
            return;
        }
        m_optimizer = std::move(*made);
        m_lr = optimizerSpec.at("learning_rate").get<float>();
        for (int r = 0; r < replicaCount; ++r)
            m_replicas.push_back(std::make_unique<Replica>(model));
        m_slices.resize(std::size_t(replicaCount));
    }

    // One step on `batch`: the mean loss over it before the update, or nothing (error() says why).
    std::optional<double> step(std::vector<float> &weights, const Batch &batch)
    {
        if (!m_optimizer)
            return std::nullopt;
        const std::int64_t rows = batch.ids.shape[0];
        const std::vector<std::int64_t> bounds = splitRows(rows, int(m_replicas.size()));
        const float scale = float(1.0 / double(rows)); // every replica: 1 / the global batch's rows
        double lossSum = 0;
        for (std::size_t r = 0; r < m_replicas.size(); ++r) {
            m_slices[r] = sliceOf(batch, bounds[r], bounds[r + 1]);
            PassContext ctx;
            ctx.training = true;
            ctx.seed = 7;
            ctx.step = std::uint64_t(m_iteration);
            ctx.globalRowOffset = bounds[r];
            const SliceResult result = m_replicas[r]->run(ctx, weights, m_slices[r], scale, true, false);
            if (result.error) {
                m_error = result.error->message();
                return std::nullopt;
            }
            if (!result.finite) {
                m_error = "the loss is not finite at step " + std::to_string(m_iteration + 1);
                return std::nullopt;
            }
            lossSum += result.outputLossSums[0];
        }
        std::vector<float> &grads = m_replicas.front()->gradients();
        if (m_reduction == Reduction::RowSparse) {
            if (auto reduced = reduceGradients(*m_reducer, m_model, m_replicas, m_used); !reduced.ok()) {
                m_error = reduced.error().message();
                return std::nullopt;
            }
        } else {
            std::vector<std::vector<float> *> buffers;
            for (auto &rep : m_replicas)
                buffers.push_back(&rep->gradients());
            sumLocalReplicas(buffers);
            m_used.clear(); // applyStepUpdate: every row of every table takes part
        }
        double squares = 0;
        for (std::size_t i = 0; i < m_model.trainableParameterCount(); ++i)
            squares += double(grads[i]) * grads[i];
        m_gradientNorms.push_back(std::sqrt(squares));
        ++m_iteration;
        applyStepUpdate(m_model, *m_optimizer, weights, grads, m_clipnorm, m_lr, m_iteration, m_used);
        // After a dense sum the first buffer holds rows its replica does not list as touched, and
        // Replica::clearGradients zeroes only those it lists: zero all of it for the next step.
        if (m_reduction == Reduction::Dense)
            std::fill(grads.begin(), grads.end(), 0.0f);
        return lossSum / double(rows);
    }

    const std::string &error() const { return m_error; }
    Optimizer &optimizer() { return *m_optimizer; }
    const UsedRows &used() const { return m_used; }                        // the last step's (RowSparse)
    const std::vector<double> &gradientNorms() const { return m_gradientNorms; } // per step, before clipping

private:
    const Model &m_model;
    double m_clipnorm = 0;
    Reduction m_reduction;
    std::unique_ptr<GradientReducer> m_reducer;
    std::unique_ptr<Optimizer> m_optimizer;
    float m_lr = 0;
    std::int64_t m_iteration = 0;
    std::vector<std::unique_ptr<Replica>> m_replicas;
    std::vector<BatchSlice> m_slices;
    UsedRows m_used;
    std::vector<double> m_gradientNorms;
    std::string m_error;
};

struct Training
{
    std::vector<double> losses; // per step, before its update
    std::string error;
};

Training trainSteps(Stepper &stepper, std::vector<float> &weights, const std::vector<Batch> &batches)
{
    Training t;
    for (const auto &batch : batches) {
        const auto loss = stepper.step(weights, batch);
        if (!loss) {
            t.error = stepper.error().empty() ? "no optimizer" : stepper.error();
            return t;
        }
        t.losses.push_back(*loss);
    }
    return t;
}

// The optimizer's slots by name, copied.
std::map<std::string, std::vector<float>> slotValues(Optimizer &optimizer)
{
    std::map<std::string, std::vector<float>> values;
    for (const auto &s : optimizer.slots())
        values[s.name] = s.values;
    return values;
}

// Per-sample id shapes for the layer-level tests: a sequence, a scalar, a grid.
const Shape kSampleShapes[] = {{3}, {}, {2, 2}};

// An Embedding made by the registry and built for ids of `sample` shape.
std::unique_ptr<Layer> embeddingLayer(std::int64_t inputDim, std::int64_t outputDim, const Shape &sample)
{
    auto made = createLayer("Embedding", "emb", json{{"input_dim", inputDim}, {"output_dim", outputDim}});
    if (!made) {
        QTest::qFail(made.error().message().c_str(), __FILE__, __LINE__);
        return nullptr;
    }
    auto built = (*made)->build({sample});
    if (!built) {
        QTest::qFail(built.error().message().c_str(), __FILE__, __LINE__);
        return nullptr;
    }
    Shape expected = sample;
    expected.push_back(outputDim);
    if (*built != expected) {
        QTest::qFail(("output shape " + shapeString(*built) + ", expected " + shapeString(expected)).c_str(), __FILE__, __LINE__);
        return nullptr;
    }
    return std::move(*made);
}

// `rows` samples of ids of `sample` shape, uniform in [0, inputDim), with the first id repeated
// twice more (its gradient row is a sum of three).
FloatTensor randomIds(std::int64_t rows, const Shape &sample, std::int64_t inputDim, unsigned seed)
{
    Shape shape{rows};
    shape.insert(shape.end(), sample.begin(), sample.end());
    FloatTensor ids(shape);
    std::mt19937 gen(seed);
    std::uniform_int_distribution<std::int64_t> pick(0, inputDim - 1);
    for (auto &v : ids.data)
        v = float(pick(gen));
    ids.data[ids.size() / 2] = ids.data.front();
    ids.data.back() = ids.data.front();
    return ids;
}

} // namespace

class TestTrainEmbedding : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Forward is a plain lookup (bit for bit: rows are copied), backward a scatter-add of the
    // output gradient's rows (against a naive sum in double, repeated ids summed) into the rows
    // it lists, sorted and distinct; the ids get a zero gradient, and a second backward lists
    // only its own rows.
    void forwardAndBackwardMatchANaiveLookup_data()
    {
        QTest::addColumn<int>("shapeIndex");
        QTest::newRow("ids (3,)") << 0;
        QTest::newRow("ids ()") << 1;
        QTest::newRow("ids (2, 2)") << 2;
    }
    void forwardAndBackwardMatchANaiveLookup()
    {
        QFETCH(int, shapeIndex);
        const Shape sample = kSampleShapes[shapeIndex];
        constexpr std::int64_t inputDim = 9, outputDim = 3, batch = 5;
        constexpr std::size_t D = outputDim;
        const auto layer = embeddingLayer(inputDim, outputDim, sample);
        QVERIFY(layer);
        const auto specs = layer->params();
        QCOMPARE(specs.size(), std::size_t(1));
        QCOMPARE(qs(specs[0].name), QString("embeddings"));
        QCOMPARE(specs[0].shape, (Shape{inputDim, outputDim}));
        QCOMPARE(qs(specs[0].initializer), QString("uniform"));
        QVERIFY(specs[0].trainable && specs[0].rowSparse && !specs[0].sparseUpdates);

        const FloatTensor ids = randomIds(batch, sample, inputDim, 5);
        const FloatTensor table = test::randomTensor({inputDim, outputDim}, 11);
        const std::vector<const float *> params{table.ptr()};
        const std::vector<const FloatTensor *> inputs{&ids};
        PassContext ctx;
        FloatTensor output;
        LayerState state;
        layer->forward(ctx, params, inputs, output, state);
        QVERIFY(!state.error);
        Shape outShape = ids.shape;
        outShape.push_back(outputDim);
        QCOMPARE(output.shape, outShape);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const auto row = std::size_t(ids.data[i]);
            for (std::size_t k = 0; k < D; ++k)
                QVERIFY2(output.data[i * D + k] == table.data[row * D + k],
                         qPrintable(QString("id %1 (row %2), column %3: %4, table %5").arg(i).arg(row).arg(k).arg(output.data[i * D + k]).arg(table.data[row * D + k])));
        }

        // Backward adds into the gradient (0.25 everywhere first) and leaves unused rows as they are.
        const FloatTensor dOutput = test::randomTensor(output.shape, 12);
        std::vector<float> grad(table.size(), 0.25f);
        FloatTensor dIds;
        const std::vector<FloatTensor *> dInputs{&dIds};
        const std::vector<float *> grads{grad.data()};
        layer->backward(ctx, params, inputs, output, dOutput, dInputs, grads, state);
        std::vector<double> want(table.size(), 0.0);
        std::vector<int> uses(std::size_t(inputDim), 0);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const auto row = std::size_t(ids.data[i]);
            ++uses[row];
            for (std::size_t k = 0; k < D; ++k)
                want[row * D + k] += dOutput.data[i * D + k];
        }
        QVERIFY2(*std::max_element(uses.begin(), uses.end()) >= 3, "the fixture must repeat an id");
        for (std::size_t j = 0; j < grad.size(); ++j) {
            if (uses[j / D] == 0)
                QVERIFY2(grad[j] == 0.25f, qPrintable(QString("unused row %1 changed: %2").arg(j / D).arg(grad[j])));
            else
                QVERIFY2(test::closeTo(double(grad[j]) - 0.25, want[j], 1e-6),
                         qPrintable(QString("element %1 (row %2, used %3 times): %4, naive %5").arg(j).arg(j / D).arg(uses[j / D]).arg(double(grad[j]) - 0.25).arg(want[j])));
        }
        QCOMPARE(state.rows, distinctIds(ids));
        QCOMPARE(dIds.shape, ids.shape);
        QVERIFY(std::all_of(dIds.data.begin(), dIds.data.end(), [](float v) { return v == 0.0f; }));

        // The same state again (as a replica keeps it): rows lists this backward's rows only.
        FloatTensor one = ids;
        one.fill(4.0f);
        const std::vector<const FloatTensor *> oneInputs{&one};
        layer->forward(ctx, params, oneInputs, output, state);
        layer->backward(ctx, params, oneInputs, output, dOutput, dInputs, grads, state);
        QCOMPARE(state.rows, std::vector<std::int64_t>{4});
    }

    // d sum(output * R) / d table against central differences (the function is linear in the
    // table, so they agree to rounding; rows no id picks have a zero gradient on both sides).
    void tableGradientMatchesFiniteDifferences_data() { forwardAndBackwardMatchANaiveLookup_data(); }
    void tableGradientMatchesFiniteDifferences()
    {
        QFETCH(int, shapeIndex);
        const Shape sample = kSampleShapes[shapeIndex];
        constexpr std::int64_t inputDim = 7, outputDim = 5;
        const auto layer = embeddingLayer(inputDim, outputDim, sample);
        QVERIFY(layer);
        const FloatTensor ids = randomIds(4, sample, inputDim, 21);
        FloatTensor table = test::randomTensor({inputDim, outputDim}, 22);
        const std::vector<const float *> params{table.ptr()};
        const std::vector<const FloatTensor *> inputs{&ids};
        PassContext ctx;
        FloatTensor output;
        LayerState state;
        layer->forward(ctx, params, inputs, output, state);
        QVERIFY(!state.error);
        const FloatTensor r = test::randomTensor(output.shape, 23);
        const auto f = [&] {
            FloatTensor o;
            LayerState s;
            layer->forward(ctx, params, inputs, o, s);
            double sum = 0;
            for (std::size_t i = 0; i < o.size(); ++i)
                sum += double(o.data[i]) * r.data[i];
            return sum;
        };
        std::vector<float> grad(table.size(), 0.0f);
        FloatTensor dIds;
        const std::vector<FloatTensor *> dInputs{&dIds};
        const std::vector<float *> grads{grad.data()};
        layer->backward(ctx, params, inputs, output, r, dInputs, grads, state);
        // 35 elements, all probed.
        const auto c = test::checkGradient(table.span(), grad, f, 1e-2f, 64);
        QVERIFY2(c.maxRelativeError < 1e-3, qPrintable(c.text()));
    }

    // The table is one row-sparse parameter, the Dense layer's weights the dense rest: the
    // ranges replicas zero and all-reduce densely cover everything but the table.
    void modelHasOneRowSparseTable()
    {
        for (bool sparseUpdates : {false, true}) {
            const auto m = buildModel(modelJson(sparseUpdates));
            QVERIFY(m);
            QStringList names;
            for (const auto &p : m->parameters())
                names << qs(p.name + " " + shapeString(p.shape));
            QCOMPARE(names.join(", "), QString("emb/embeddings (12, 4), out/kernel (8, 2), out/bias (2,)"));
            const ParameterEntry *table = parameter(*m, "emb/embeddings");
            QVERIFY(table);
            QCOMPARE(m->rowSparseParameters(), std::vector<std::size_t>{0});
            QVERIFY(table->rowSparse);
            QCOMPARE(table->sparseUpdates, sparseUpdates);
            QCOMPARE(table->rowSize, std::int64_t(4));
            QCOMPARE(qs(m->nodes()[std::size_t(table->node)].name), QString("emb"));
            QCOMPARE(m->trainableParameterCount(), m->parameterCount());
            std::size_t dense = 0;
            for (const auto &r : m->denseRanges()) {
                QVERIFY(r.offset + r.count <= table->offset || r.offset >= table->offset + table->count);
                dense += r.count;
            }
            QCOMPARE(dense + table->count, m->parameterCount());
        }
    }

    // PyTorch's losses and final weights after 4 steps on 4 different batches (1e-5 relative: the
    // reference is float64 and shown by its script not to move by 2e-6 in float32). Dense runs
    // (sparse_updates false) against torch with a dense gradient; "adam, sparse updates" against
    // torch.optim.SparseAdam, "sgd, sparse updates" against SGD on torch's sparse gradient.
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
        const auto m = buildModel(modelJson(run["sparse_updates"].get<bool>()));
        QVERIFY(m);
        std::vector<float> weights;
        const std::string loaded = loadInitialWeights(*m, weights);
        QVERIFY2(loaded.empty(), loaded.c_str());
        const auto batches = referenceBatches();
        QCOMPARE(int(batches.size()), reference()["steps"].get<int>());
        Stepper stepper(*m, run["optimizer"], 1);
        const Training t = trainSteps(stepper, weights, batches);
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
            QVERIFY2(diff < 1e-5, qPrintable(QString("%1: relative difference %2").arg(qs(p.name)).arg(diff)));
        }
    }

    // tf.distribute's contract with a row-sparse table: 2, 3 or 4 replicas (4: uneven slices of
    // 2, 2, 1, 1) on slices of the global batch of 6, their gradients summed over the union of
    // the rows they used and clipped to global_clipnorm over those rows, take the steps of one
    // replica on the whole batch: the same weights, optimizer slots and used rows.
    void replicasGiveTheWeightsOfOneReplica_data()
    {
        QTest::addColumn<QString>("run");
        QTest::addColumn<bool>("sparseUpdates");
        QTest::newRow("adam") << "adam" << false;
        QTest::newRow("adam, sparse updates") << "adam" << true;
        QTest::newRow("sgd, momentum") << "sgd, momentum" << false;
        QTest::newRow("sgd, momentum, sparse updates") << "sgd, momentum" << true;
    }
    void replicasGiveTheWeightsOfOneReplica()
    {
        QFETCH(QString, run);
        QFETCH(bool, sparseUpdates);
        const json *r = findRun(run.toStdString());
        QVERIFY(r);
        const auto m = buildModel(modelJson(sparseUpdates));
        QVERIFY(m);
        std::vector<float> initial;
        const std::string loaded = loadInitialWeights(*m, initial);
        QVERIFY2(loaded.empty(), loaded.c_str());
        const auto batches = referenceBatches();

        std::vector<float> one = initial;
        Stepper single(*m, (*r)["optimizer"], 1, kClipnorm);
        const Training t1 = trainSteps(single, one, batches);
        QVERIFY2(t1.error.empty(), t1.error.c_str());
        // Otherwise clipping would not take part and its sum over the used rows would go unchecked.
        for (std::size_t s = 0; s < single.gradientNorms().size(); ++s)
            QVERIFY2(single.gradientNorms()[s] > 1.2 * kClipnorm,
                     qPrintable(QString("step %1: gradient norm %2 is not clipped to %3").arg(s + 1).arg(single.gradientNorms()[s]).arg(kClipnorm)));
        QCOMPARE(single.used(), UsedRows{distinctIds(batches.back().ids)});
        const auto oneSlots = slotValues(single.optimizer());

        for (int replicas : {2, 3, 4}) {
            std::vector<float> weights = initial;
            Stepper several(*m, (*r)["optimizer"], replicas, kClipnorm);
            const Training t = trainSteps(several, weights, batches);
            QVERIFY2(t.error.empty(), t.error.c_str());
            for (std::size_t s = 0; s < t1.losses.size(); ++s)
                QVERIFY2(std::abs(t.losses[s] - t1.losses[s]) <= 1e-5 * std::abs(t1.losses[s]),
                         qPrintable(QString("%1 replicas, step %2: loss %3, one replica %4").arg(replicas).arg(s + 1).arg(t.losses[s]).arg(t1.losses[s])));
            for (const auto &p : m->parameters()) {
                const double diff = test::maxRelativeDifference(valuesOf(weights, p), valuesOf(one, p));
                QVERIFY2(diff < 1e-5, qPrintable(QString("%1 replicas, %2: relative difference %3").arg(replicas).arg(qs(p.name)).arg(diff)));
            }
            for (const auto &[name, values] : slotValues(several.optimizer())) {
                const double diff = test::maxRelativeDifference(values, oneSlots.at(name));
                QVERIFY2(diff < 1e-5, qPrintable(QString("%1 replicas, slot %2: relative difference %3").arg(replicas).arg(qs(name)).arg(diff)));
            }
            QCOMPARE(several.used(), single.used());
        }
    }

    // With sparse_updates false, summing only the used rows and updating the dense ranges plus
    // the whole table (the Trainer's path) gives what summing and updating the whole buffers
    // gives, clipping included (its norm is summed in another order, hence not bit for bit). The
    // lazy table through the same path ends far from both: the comparison can tell them apart.
    void rowSparseReductionEqualsDenseReduction()
    {
        const json *r = findRun("adam");
        QVERIFY(r);
        const auto m = buildModel(modelJson(false));
        const auto lazyModel = buildModel(modelJson(true));
        QVERIFY(m && lazyModel);
        std::vector<float> initial;
        const std::string loaded = loadInitialWeights(*m, initial);
        QVERIFY2(loaded.empty(), loaded.c_str());
        const auto batches = referenceBatches();

        std::vector<float> rowSparse = initial, dense = initial, lazy = initial;
        Stepper rowSparseSteps(*m, (*r)["optimizer"], 3, kClipnorm, Reduction::RowSparse);
        Stepper denseSteps(*m, (*r)["optimizer"], 3, kClipnorm, Reduction::Dense);
        Stepper lazySteps(*lazyModel, (*r)["optimizer"], 3, kClipnorm, Reduction::RowSparse);
        const Training a = trainSteps(rowSparseSteps, rowSparse, batches);
        const Training b = trainSteps(denseSteps, dense, batches);
        const Training c = trainSteps(lazySteps, lazy, batches);
        QVERIFY2(a.error.empty() && b.error.empty() && c.error.empty(), (a.error + b.error + c.error).c_str());
        for (std::size_t s = 0; s < a.losses.size(); ++s)
            QVERIFY2(std::abs(a.losses[s] - b.losses[s]) <= 1e-6 * std::abs(b.losses[s]),
                     qPrintable(QString("step %1: loss %2, dense %3").arg(s + 1).arg(a.losses[s]).arg(b.losses[s])));
        for (const auto &p : m->parameters()) {
            const double diff = test::maxRelativeDifference(valuesOf(rowSparse, p), valuesOf(dense, p));
            QVERIFY2(diff < 1e-6, qPrintable(QString("%1: relative difference %2").arg(qs(p.name)).arg(diff)));
        }
        const auto denseSlots = slotValues(denseSteps.optimizer());
        for (const auto &[name, values] : slotValues(rowSparseSteps.optimizer())) {
            const double diff = test::maxRelativeDifference(values, denseSlots.at(name));
            QVERIFY2(diff < 1e-6, qPrintable(QString("slot %1: relative difference %2").arg(qs(name)).arg(diff)));
        }
        const ParameterEntry *table = parameter(*m, "emb/embeddings");
        QVERIFY(table);
        const double apart = test::maxRelativeDifference(valuesOf(lazy, *table), valuesOf(dense, *table));
        QVERIFY2(apart > 1e-4, qPrintable(QString("lazy and dense Adam tables differ by only %1").arg(apart)));
    }

    // With sparse_updates true, a step leaves the rows its batch did not use exactly as they
    // were, weights and every optimizer slot, while it moves the rows it used and the Dense
    // layer. Rows used in step 1 and not in step 2 have non-zero slots, which dense updates
    // would decay and step by (checked below in denseAdamMovesRowsUsedBefore).
    void lazyUpdatesLeaveUnusedRowsAlone_data()
    {
        QTest::addColumn<QString>("run");
        QTest::newRow("adam") << "adam";
        QTest::newRow("sgd, momentum") << "sgd, momentum";
    }
    void lazyUpdatesLeaveUnusedRowsAlone()
    {
        QFETCH(QString, run);
        const json *r = findRun(run.toStdString());
        QVERIFY(r);
        const auto m = buildModel(modelJson(true));
        QVERIFY(m);
        std::vector<float> weights;
        const std::string loaded = loadInitialWeights(*m, weights);
        QVERIFY2(loaded.empty(), loaded.c_str());
        const auto batches = referenceBatches();
        const ParameterEntry *table = parameter(*m, "emb/embeddings");
        const ParameterEntry *kernel = parameter(*m, "out/kernel");
        QVERIFY(table && kernel);

        Stepper stepper(*m, (*r)["optimizer"], 2);
        QVERIFY2(stepper.step(weights, batches[0]), stepper.error().c_str());
        const std::vector<float> w1 = weights;
        const auto slots1 = slotValues(stepper.optimizer());
        QVERIFY(!slots1.empty());
        QVERIFY2(stepper.step(weights, batches[1]), stepper.error().c_str());
        const auto slots2 = slotValues(stepper.optimizer());

        const std::vector<std::int64_t> used1 = distinctIds(batches[0].ids), used2 = distinctIds(batches[1].ids);
        QCOMPARE(stepper.used(), UsedRows{used2});
        int restingWithState = 0; // rows of step 1 that sit out step 2 with non-zero slots
        for (std::int64_t row = 0; row < table->shape[0]; ++row) {
            const bool inStep2 = std::binary_search(used2.begin(), used2.end(), row);
            const bool weightsMoved = tableRow(weights, *table, row) != tableRow(w1, *table, row);
            QVERIFY2(weightsMoved == inStep2, qPrintable(QString("row %1 (%2 in step 2): weights %3").arg(row).arg(inStep2 ? "used" : "not used").arg(weightsMoved ? "moved" : "did not move")));
            bool nonZeroState = false;
            for (const auto &[name, values] : slots2) {
                const bool slotMoved = tableRow(values, *table, row) != tableRow(slots1.at(name), *table, row);
                QVERIFY2(slotMoved == inStep2, qPrintable(QString("row %1 (%2 in step 2): slot %3 %4").arg(row).arg(inStep2 ? "used" : "not used").arg(qs(name)).arg(slotMoved ? "changed" : "did not change")));
                const auto before = tableRow(slots1.at(name), *table, row);
                nonZeroState = nonZeroState || std::any_of(before.begin(), before.end(), [](float v) { return v != 0.0f; });
            }
            if (!inStep2 && std::binary_search(used1.begin(), used1.end(), row) && nonZeroState)
                ++restingWithState;
        }
        QVERIFY2(restingWithState > 0, "no row used in step 1 sits out step 2 with optimizer state: the check above proves nothing");
        QVERIFY(valuesOf(weights, *kernel) != valuesOf(w1, *kernel));
    }

    // With sparse_updates false and Adam (Keras's and PyTorch's semantics), a row used in step 1
    // and not in step 2 still moves in step 2: its moments decay (m by beta_1, v by beta_2) and
    // it steps by Keras's rule with a zero gradient, lr sqrt(1 - b2^2) / (1 - b1^2) * m / (sqrt(v)
    // + eps). A row no batch has used keeps its weights and zero moments.
    void denseAdamMovesRowsUsedBefore()
    {
        const json *r = findRun("adam");
        QVERIFY(r);
        const json &spec = (*r)["optimizer"];
        const double lr = spec.at("learning_rate").get<double>(), beta1 = spec.at("beta_1").get<double>(), beta2 = spec.at("beta_2").get<double>(),
                     epsilon = spec.at("epsilon").get<double>();
        const auto m = buildModel(modelJson(false));
        QVERIFY(m);
        std::vector<float> weights;
        const std::string loaded = loadInitialWeights(*m, weights);
        QVERIFY2(loaded.empty(), loaded.c_str());
        const std::vector<float> w0 = weights;
        const auto batches = referenceBatches();
        const ParameterEntry *table = parameter(*m, "emb/embeddings");
        QVERIFY(table);

        Stepper stepper(*m, spec, 2);
        QVERIFY2(stepper.step(weights, batches[0]), stepper.error().c_str());
        const std::vector<float> w1 = weights;
        const auto slots1 = slotValues(stepper.optimizer());
        QVERIFY2(stepper.step(weights, batches[1]), stepper.error().c_str());
        const auto slots2 = slotValues(stepper.optimizer());
        QVERIFY(slots2.count("m") && slots2.count("v"));

        const std::vector<std::int64_t> used1 = distinctIds(batches[0].ids), used2 = distinctIds(batches[1].ids);
        std::vector<std::int64_t> resting;
        std::set_difference(used1.begin(), used1.end(), used2.begin(), used2.end(), std::back_inserter(resting));
        QVERIFY(!resting.empty());
        const double alpha = lr * std::sqrt(1 - beta2 * beta2) / (1 - beta1 * beta1);
        for (std::int64_t row : resting) {
            const auto before = tableRow(w1, *table, row), after = tableRow(weights, *table, row);
            const auto m1 = tableRow(slots1.at("m"), *table, row), m2 = tableRow(slots2.at("m"), *table, row);
            const auto v1 = tableRow(slots1.at("v"), *table, row), v2 = tableRow(slots2.at("v"), *table, row);
            for (std::size_t k = 0; k < before.size(); ++k) {
                const QString where = QString("row %1, column %2").arg(row).arg(k);
                // Relative: the moments are small (v ~ 1e-7), float rounding is ~1e-7 of them.
                QVERIFY2(m1[k] != 0 && std::abs(m2[k] - beta1 * m1[k]) <= 1e-6 * std::abs(beta1 * m1[k]),
                         qPrintable(where + QString(": m %1 -> %2").arg(m1[k]).arg(m2[k])));
                QVERIFY2(v1[k] != 0 && std::abs(v2[k] - beta2 * v1[k]) <= 1e-6 * std::abs(beta2 * v1[k]),
                         qPrintable(where + QString(": v %1 -> %2").arg(v1[k]).arg(v2[k])));
                const double step = alpha * m2[k] / (std::sqrt(double(v2[k])) + epsilon);
                const double moved = double(before[k]) - double(after[k]);
                QVERIFY2(std::abs(step) > 1e-4 && std::abs(moved - step) <= 1e-4 * std::abs(step) + 1e-7,
                         qPrintable(where + QString(": moved by %1, Keras's rule %2").arg(moved, 0, 'g', 9).arg(step, 0, 'g', 9)));
            }
        }
        // The last row: no batch uses it.
        const std::int64_t last = table->shape[0] - 1;
        QVERIFY(!std::binary_search(used1.begin(), used1.end(), last) && !std::binary_search(used2.begin(), used2.end(), last));
        QVERIFY(tableRow(weights, *table, last) == tableRow(w0, *table, last));
        for (const auto &[name, values] : slots2) {
            const auto row = tableRow(values, *table, last);
            QVERIFY2(std::all_of(row.begin(), row.end(), [](float v) { return v == 0.0f; }), qPrintable("slot " + qs(name) + " of the unused row"));
        }
    }

    // An id outside [0, input_dim), negative or NaN stops the replica's pass with an error that
    // names the layer (Error::layer, and the text) and the id, with the key input_dim; the
    // replica is left usable: the next good batch gives what a fresh replica gives, gradients and
    // touched rows included (the refused pass did not leave rows of the step before it behind).
    void outOfRangeIdStopsThePass_data()
    {
        QTest::addColumn<float>("id");
        QTest::addColumn<QString>("text");
        QTest::newRow("input_dim") << 12.0f << "12";
        QTest::newRow("far beyond") << 1000.0f << "1000";
        QTest::newRow("negative") << -1.0f << "-1";
        QTest::newRow("NaN") << std::numeric_limits<float>::quiet_NaN() << "nan";
    }
    void outOfRangeIdStopsThePass()
    {
        QFETCH(float, id);
        QFETCH(QString, text);
        const auto m = buildModel(modelJson(false));
        QVERIFY(m);
        std::vector<float> weights;
        const std::string loaded = loadInitialWeights(*m, weights);
        QVERIFY2(loaded.empty(), loaded.c_str());
        const auto batches = referenceBatches();
        const float scale = 1.0f / 6;
        PassContext ctx;
        ctx.training = true;

        Replica replica(*m);
        const BatchSlice first = sliceOf(batches[0], 0, 6);
        QVERIFY(!replica.run(ctx, weights, first, scale, true, false).error);
        BatchSlice bad = sliceOf(batches[1], 0, 6);
        bad.inputs[0].data[4 * 2 + 1] = id; // row 4, second id
        const SliceResult refused = replica.run(ctx, weights, bad, scale, true, false);
        QVERIFY(refused.error.has_value());
        const Error &e = *refused.error;
        QCOMPARE(qs(e.layer), QString("emb"));
        QCOMPARE(qs(e.key), QString("input_dim"));
        const std::string message = e.message();
        QVERIFY2(has(message, "emb") && has(message, "id " + text.toStdString()) && has(message, "row 4"), message.c_str());

        const BatchSlice third = sliceOf(batches[2], 0, 6);
        const SliceResult after = replica.run(ctx, weights, third, scale, true, false);
        QVERIFY(!after.error);
        Replica fresh(*m);
        const SliceResult want = fresh.run(ctx, weights, third, scale, true, false);
        QCOMPARE(after.outputLossSums, want.outputLossSums);
        QVERIFY(replica.gradients() == fresh.gradients());
        QCOMPARE(replica.touchedRows(), fresh.touchedRows());
        QCOMPARE(replica.touchedRows(), UsedRows{distinctIds(batches[2].ids)});
    }

    // The row an error names is the row of the batch the user fed (the global batch), not of a
    // replica's slice: here the replica holds rows 3..5 (PassContext::globalRowOffset 3), and
    // its row 1 is row 4 of the batch.
    void outOfRangeErrorNamesTheRowOfTheGlobalBatch()
    {
        const auto m = buildModel(modelJson(false));
        QVERIFY(m);
        std::vector<float> weights;
        const std::string loaded = loadInitialWeights(*m, weights);
        QVERIFY2(loaded.empty(), loaded.c_str());
        BatchSlice slice = sliceOf(referenceBatches()[0], 3, 6);
        slice.inputs[0].data[1 * 2] = 12.0f;
        PassContext ctx;
        ctx.training = true;
        ctx.globalRowOffset = 3;
        Replica replica(*m);
        const SliceResult refused = replica.run(ctx, weights, slice, 1.0f / 6, true, false);
        QVERIFY(refused.error.has_value());
        const std::string message = refused.error->message();
        QVERIFY2(has(message, "id 12") && has(message, "row 4 "), message.c_str());
    }

    // Through the Trainer (2 replicas, batches of 8 from .npy files): an id of 7 for a table of 5
    // rows in the third batch fails the run after two steps, with a message and a run_end event
    // that name the layer, the id and its row in the batch.
    void trainerRunFailsNamingTheLayerAndTheId()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string folder = dir.path().toStdString();
        constexpr int rows = 24;
        test::writeTrainingData(folder, rows); // y.npy (rows, 2) and the other features from_npy lists
        std::vector<std::int64_t> ids(std::size_t(rows) * 2);
        for (std::size_t i = 0; i < ids.size(); ++i)
            ids[i] = std::int64_t(i % 5);
        ids[21 * 2] = 7; // row 21: the third batch (rows 16..23)
        test::writeNpy<std::int64_t>(folder + "/ids.npy", ids, {2});
        const json model = json::parse(R"({
          "inputs": [{"name": "ids", "feature": "ids"}],
          "layers": [{"class_name": "Embedding", "name": "emb", "input_dim": 5, "output_dim": 3},
                     {"class_name": "Flatten", "name": "flat"},
                     {"class_name": "Dense", "name": "out", "units": 2}],
          "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}]})");
        json doc = test::trainingProject(model, {{"epochs", 1}, {"seed", 1}, {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.1}}}, {"replicas", 2}}, 8);
        doc["pipeline"]["nodes"][0]["params"]["features"]["ids"] = "ids.npy";
        const auto run = test::runTraining(doc, folder);
        QVERIFY2(!run.error.empty(), "the run should fail");
        QVERIFY(run.outcome.status == RunStatus::Failed);
        QCOMPARE(run.outcome.steps, std::int64_t(2));
        // Row 21 is row 5 of the third batch, row 1 of the second replica's slice: the global one.
        QVERIFY2(has(run.error, "emb") && has(run.error, "id 7") && has(run.error, "row 5 ") && has(run.error, "input_dim"), run.error.c_str());
        const auto ends = run.eventsOf("run_end");
        QCOMPARE(ends.size(), std::size_t(1));
        QCOMPARE(qs(ends[0].value("status", "")), QString("failed"));
        QCOMPARE(qs(ends[0].value("layer", "")), QString("emb"));
        QCOMPARE(qs(ends[0].value("key", "")), QString("input_dim"));
        QVERIFY(has(ends[0].value("error", ""), "id 7"));
    }

    // Configurations the layer refuses when the model is built: each error names the model entry
    // (Error::layer "layers[0]", the text the layer's name) and the key (Error::key and the text).
    void buildRefusesBadConfigurations_data()
    {
        QTest::addColumn<QString>("patch"); // merged into the Embedding's entry (null removes a key)
        QTest::addColumn<QString>("key");
        QTest::newRow("mask_zero") << R"({"mask_zero": true})" << "mask_zero";
        QTest::newRow("input_dim 2^24 + 1") << R"({"input_dim": 16777217})" << "input_dim";
        QTest::newRow("input_dim 0") << R"({"input_dim": 0})" << "input_dim";
        QTest::newRow("no output_dim") << R"({"output_dim": null})" << "output_dim";
    }
    void buildRefusesBadConfigurations()
    {
        QFETCH(QString, patch);
        QFETCH(QString, key);
        json model = modelJson(false);
        model["layers"][0].merge_patch(json::parse(patch.toStdString()));
        const auto built = Model::build(model, elementSpec());
        QVERIFY(!built);
        const Error &e = built.error();
        const std::string message = e.message();
        QCOMPARE(qs(e.layer), QString("layers[0]"));
        QVERIFY2(qs(e.key) == key, qPrintable(QString("key '%1', expected '%2': %3").arg(qs(e.key), key, qs(message))));
        QVERIFY2(has(message, "'emb'") && has(message, key.toStdString()), message.c_str());
    }

    // The largest table ids can address exactly as float32 (2^24 rows) is accepted.
    void largestTableBuilds()
    {
        json model = modelJson(false);
        model["layers"][0]["input_dim"] = 16777216;
        model["layers"][0]["output_dim"] = 1;
        const auto built = Model::build(model, elementSpec());
        QVERIFY2(built, built ? "" : built.error().message().c_str());
        QCOMPARE((*built)->parameters()[0].shape, (Shape{16777216, 1}));
    }
};

QTEST_GUILESS_MAIN(TestTrainEmbedding)
#include "tst_train_embedding.moc"
