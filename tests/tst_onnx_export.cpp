// The ONNX graph `sluice export --format onnx` writes, read back with ONNX's own schema (no Python):
// opset 17, the model's inputs and outputs by name with a symbolic batch, the weights as
// initializers in the layouts ONNX's ops take (a GRU's gates kept, an LSTM's reordered, a Conv's
// kernel permuted), BatchNormalization folded into a scale and shift computed here independently.
// tests/python/test_export.py runs the graphs in onnxruntime against `sluice predict`.
#include "pipeline/engine/element.h"
#include "train/model/model.h"
#include "train/interchange/onnx_export.h"
#include "support/reference.h"

#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include <QtTest>

#include <cmath>
#include <map>

using namespace sluice;
using namespace sluice::train;

namespace {

const nlohmann::json kModel = nlohmann::json::parse(R"({
  "inputs": [{"name": "seq", "feature": "seq"}],
  "layers": [{"class_name": "Conv1D", "name": "conv", "filters": 4, "kernel_size": 3, "strides": 2, "padding": "same"},
             {"class_name": "BatchNormalization", "name": "bn"},
             {"class_name": "GRU", "name": "gru", "units": 5, "return_sequences": true},
             {"class_name": "LSTM", "name": "lstm", "units": 3},
             {"class_name": "Dense", "name": "head", "units": 2, "activation": "gelu"}],
  "outputs": [{"name": "y", "layer": "head", "target": "y", "loss": "mse"}]})");

struct Exported
{
    std::unique_ptr<Model> model;
    std::vector<float> weights;
    onnx::ModelProto proto;
};

Exported exportModel()
{
    pipeline::ElementSpec spec;
    spec.features.push_back({"seq", pipeline::ValueType{}, {8, 9, 2}});
    auto built = Model::build(kModel, spec, ModelBuildOptions{true});
    Exported e;
    if (!built) {
        QTest::qFail(built.error().message().c_str(), __FILE__, __LINE__);
        return e;
    }
    e.model = std::move(built).value();
    auto w = e.model->initialWeights(3);
    e.weights = *w;
    // Moving statistics away from 0 and 1, so that folding them shows.
    for (const auto &p : e.model->parameters())
        if (p.name == "bn/moving_mean" || p.name == "bn/moving_variance")
            for (std::size_t i = 0; i < p.count; ++i)
                e.weights[p.offset + i] = 0.5f + 0.25f * float(i);
    auto bytes = onnxModelBytes(*e.model, e.weights, "test");
    if (!bytes || !e.proto.ParseFromString(*bytes))
        QTest::qFail("the graph did not serialize or parse", __FILE__, __LINE__);
    return e;
}

std::vector<float> initializer(const onnx::ModelProto &m, const std::string &name, std::vector<std::int64_t> *dims = nullptr)
{
    for (const auto &t : m.graph().initializer())
        if (t.name() == name) {
            if (dims)
                dims->assign(t.dims().begin(), t.dims().end());
            std::vector<float> v(t.raw_data().size() / sizeof(float));
            std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
            return v;
        }
    return {};
}

const float *weight(const Exported &e, const std::string &name)
{
    for (const auto &p : e.model->parameters())
        if (p.name == name)
            return e.weights.data() + p.offset;
    return nullptr;
}

} // namespace

class TestOnnxExport : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        if (!onnxExportAvailable())
            SLUICE_REFERENCE_MISSING("built without ONNX's libraries (SLUICE_WITH_ONNX)");
    }

    void graphHasTheModelsInputsOutputsAndOpset()
    {
        const Exported e = exportModel();
        QCOMPARE(e.proto.opset_import(0).version(), std::int64_t(17));
        QCOMPARE(e.proto.graph().input_size(), 1);
        const auto &in = e.proto.graph().input(0);
        QCOMPARE(in.name(), std::string("seq"));
        const auto &dims = in.type().tensor_type().shape().dim();
        QCOMPARE(dims.size(), 3);
        QCOMPARE(dims[0].dim_param(), std::string("batch"));
        QCOMPARE(dims[1].dim_value(), std::int64_t(9));
        QCOMPARE(e.proto.graph().output(0).name(), std::string("y"));
        std::map<std::string, int> ops;
        for (const auto &n : e.proto.graph().node())
            ++ops[n.op_type()];
        QCOMPARE(ops["Conv"], 1);
        QCOMPARE(ops["GRU"], 1);
        QCOMPARE(ops["LSTM"], 1);
        QCOMPARE(ops["Erf"], 1); // exact GELU: opset 17 has no Gelu
        QCOMPARE(ops["BatchNormalization"], 0); // folded
    }

    void weightsInTheLayoutsOnnxTakes()
    {
        const Exported e = exportModel();
        // Conv1D: Keras's [k, in, out] as [out, in, k].
        std::vector<std::int64_t> dims;
        const auto conv = initializer(e.proto, "conv/kernel", &dims);
        QCOMPARE(dims, (std::vector<std::int64_t>{4, 2, 3}));
        const float *k = weight(e, "conv/kernel");
        for (int o = 0; o < 4; ++o)
            for (int i = 0; i < 2; ++i)
                for (int t = 0; t < 3; ++t)
                    QCOMPARE(conv[std::size_t((o * 2 + i) * 3 + t)], k[(t * 2 + i) * 4 + o]);
        // GRU: Keras's kernel [in, 3H] (z, r, h) transposed to [1, 3H, in], gates as they are.
        const auto w = initializer(e.proto, "gru/W", &dims);
        QCOMPARE(dims, (std::vector<std::int64_t>{1, 15, 4}));
        const float *gk = weight(e, "gru/kernel");
        for (int row = 0; row < 15; ++row)
            for (int i = 0; i < 4; ++i)
                QCOMPARE(w[std::size_t(row * 4 + i)], gk[i * 15 + row]);
        // LSTM: Keras's i, f, c, o as ONNX's i, o, f, c; its one bias, then zeros.
        const auto lw = initializer(e.proto, "lstm/W", &dims);
        const float *lk = weight(e, "lstm/kernel");
        const int H = 3, in = 5, keras[4] = {0, 3, 1, 2};
        for (int gate = 0; gate < 4; ++gate)
            for (int h = 0; h < H; ++h)
                for (int i = 0; i < in; ++i)
                    QCOMPARE(lw[std::size_t((gate * H + h) * in + i)], lk[i * 4 * H + keras[gate] * H + h]);
        const auto lb = initializer(e.proto, "lstm/B", &dims);
        QCOMPARE(dims, (std::vector<std::int64_t>{1, 24}));
        for (int j = 12; j < 24; ++j)
            QCOMPARE(lb[std::size_t(j)], 0.0f);
    }

    // protobuf's descriptor tables live until the process ends; freed here for LeakSanitizer.
    void cleanupTestCase() { google::protobuf::ShutdownProtobufLibrary(); }

    void batchNormalizationIsFolded()
    {
        const Exported e = exportModel();
        const auto scale = initializer(e.proto, "bn/scale"), shift = initializer(e.proto, "bn/shift");
        const float *gamma = weight(e, "bn/gamma"), *beta = weight(e, "bn/beta"), *mean = weight(e, "bn/moving_mean"),
                    *var = weight(e, "bn/moving_variance");
        QCOMPARE(scale.size(), std::size_t(4));
        for (std::size_t c = 0; c < 4; ++c) {
            const double s = double(gamma[c]) / std::sqrt(double(var[c]) + 1e-3);
            QVERIFY(std::abs(scale[c] - s) <= 1e-6 * std::abs(s));
            QVERIFY(std::abs(shift[c] - (double(beta[c]) - double(mean[c]) * s)) <= 1e-6);
        }
    }
};

QTEST_GUILESS_MAIN(TestOnnxExport)
#include "tst_onnx_export.moc"
