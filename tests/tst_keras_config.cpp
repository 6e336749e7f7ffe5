// Layer configs as Keras 3 writes them (tests/data/keras/layer_configs.json, written by
// make_layer_configs.py with Keras itself): every family Sluice has builds from them as they are
// — initializer objects, null regularizers and constraints, dtype policies, the serialization
// envelope — and every option Sluice lacks is refused naming the layer, the key and what is
// supported.
#include "support/test_support.h"
#include "train/model/layer_registry.h"

#include <nlohmann/json.hpp>

#include <QtTest>

using namespace sluice;
using namespace sluice::train;
using nlohmann::json;

namespace {

const json &entries()
{
    static const json all = json::parse(test::readFile(test::dataFile("keras/layer_configs.json")))["entries"];
    return all;
}

// The layer as a model's config.json holds it, without its class name (createLayer's form).
json withoutClass(json layer)
{
    layer.erase("class_name");
    return layer;
}

const json *entryOf(const std::string &className, const std::string &name)
{
    for (const auto &e : entries())
        if (e["layer"]["class_name"] == className && e["layer"]["config"]["name"] == name)
            return &e;
    return nullptr;
}

Result<std::unique_ptr<Layer>> create(const json &layer)
{
    return createLayer(layer["class_name"].get<std::string>(), layer["config"]["name"].get<std::string>(), withoutClass(layer));
}

} // namespace

class TestKerasConfig : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyFamilyBuildsFromKerasOwnConfig_data()
    {
        QTest::addColumn<int>("index");
        for (std::size_t i = 0; i < entries().size(); ++i) {
            const auto &layer = entries()[i]["layer"];
            QTest::newRow((layer["class_name"].get<std::string>() + " " + layer["config"]["name"].get<std::string>()).c_str()) << int(i);
        }
    }
    void everyFamilyBuildsFromKerasOwnConfig()
    {
        QFETCH(int, index);
        const json &entry = entries()[std::size_t(index)];
        auto layer = create(entry["layer"]);
        QVERIFY2(layer.ok(), layer.ok() ? "" : layer.error().message().c_str());
        std::vector<Shape> inputs;
        if (entry["input_shape"].is_null())
            inputs = {{3}, {2}}; // Concatenate
        else
            inputs = {entry["input_shape"].get<Shape>()};
        auto shape = (*layer)->build(inputs);
        QVERIFY2(shape.ok(), shape.ok() ? "" : shape.error().message().c_str());
    }

    void initializerObjectsBecomeTheirNames()
    {
        const json *entry = entryOf("Dense", "dense_2"); // GlorotUniform(seed=3), RandomNormal()
        QVERIFY(entry);
        auto layer = create((*entry)["layer"]);
        QVERIFY(layer.ok());
        QVERIFY((*layer)->build({{5, 3}}).ok());
        const auto params = (*layer)->params();
        QCOMPARE(params.size(), std::size_t(2));
        QCOMPARE(params[0].initializer, std::string("glorot_uniform"));
        QCOMPARE(params[1].initializer, std::string("random_normal"));
        const json *conv = entryOf("Conv2D", "conv2d_1"); // Orthogonal()
        QVERIFY(conv);
        auto convLayer = create((*conv)["layer"]);
        QVERIFY(convLayer.ok() && (*convLayer)->build({{9, 9, 2}}).ok());
        QCOMPARE((*convLayer)->params()[0].initializer, std::string("orthogonal"));
    }

    void optionsSluiceLacksAreRefusedByName_data()
    {
        QTest::addColumn<QString>("className");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value"); // JSON
        QTest::addColumn<QString>("says");
        QTest::newRow("regularizer") << "Dense" << "dense" << "kernel_regularizer"
                                     << R"({"module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.01}})" << "regularizers are not supported";
        QTest::newRow("constraint") << "Dense" << "dense" << "bias_constraint" << R"({"class_name": "NonNeg", "config": {}})" << "constraints are not supported";
        QTest::newRow("frozen") << "Dense" << "dense" << "trainable" << "false" << "frozen layers";
        QTest::newRow("float16") << "Dense" << "dense" << "dtype" << R"({"class_name": "DTypePolicy", "config": {"name": "mixed_float16"}})"
                                 << "only float32";
        QTest::newRow("quantized") << "Dense" << "dense" << "quantization_config" << R"({"mode": "int8"})" << "quantized layers";
        QTest::newRow("unknown initializer") << "Dense" << "dense" << "kernel_initializer" << R"({"class_name": "VarianceScaling", "config": {"scale": 2.0}})"
                                             << "VarianceScaling is not supported (known: GlorotUniform";
        QTest::newRow("initializer not at its defaults") << "Dense" << "dense" << "bias_initializer"
                                                         << R"({"class_name": "RandomNormal", "config": {"mean": 0.0, "stddev": 0.1, "seed": null}})"
                                                         << "stddev = 0.1 is not supported";
        QTest::newRow("return_state") << "GRU" << "gru" << "return_state" << "true" << "false only";
        QTest::newRow("recurrent dropout") << "LSTM" << "lstm" << "recurrent_dropout" << "0.2" << "recurrent dropout is not supported";
        QTest::newRow("go_backwards") << "LSTM" << "lstm" << "go_backwards" << "true" << "false only";
        QTest::newRow("renorm") << "BatchNormalization" << "batch_normalization" << "renorm" << "true" << "batch renormalization";
        QTest::newRow("channels_first") << "Conv1D" << "conv1d" << "data_format" << R"("channels_first")" << "only \"channels_last\" is supported";
        QTest::newRow("rms_scaling") << "LayerNormalization" << "layer_normalization" << "rms_scaling" << "true" << "false only";
    }
    void optionsSluiceLacksAreRefusedByName()
    {
        QFETCH(QString, className);
        QFETCH(QString, name);
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, says);
        const json *entry = entryOf(className.toStdString(), name.toStdString());
        QVERIFY(entry);
        json layer = (*entry)["layer"];
        layer["config"][key.toStdString()] = json::parse(value.toStdString());
        auto made = create(layer);
        QVERIFY(!made.ok());
        const Error &e = made.error();
        QCOMPARE(e.kind, Error::Kind::Unsupported);
        QCOMPARE(QString::fromStdString(e.key), key);
        QCOMPARE(QString::fromStdString(e.what), name);
        QVERIFY2(QString::fromStdString(e.reason).contains(says), e.reason.c_str());
    }
};

QTEST_GUILESS_MAIN(TestKerasConfig)
#include "tst_keras_config.moc"
