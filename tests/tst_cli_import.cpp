// sluice import: Keras 3 models written by Keras itself (tests/data/keras/make_keras_models.py:
// Sequential and functional, every layer family, .keras archives and to_json + .weights.h5)
// imported into a project over the inputs Keras predicted on; `sluice predict` must then give
// Keras's predictions (1e-5 of their scale). Bad input exits 2 naming the file and the reason,
// and leaves the project as it was.
#include "io/formats/npy_file.h"
#include "support/test_support.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace sluice;
using namespace sluice::test;
using nlohmann::json;

namespace {

std::string keras(const std::string &name) { return dataFile("keras/" + name); }

std::vector<float> floatsOf(const std::string &path, std::vector<std::uint64_t> *shape = nullptr)
{
    auto a = openNpy(path);
    if (!a)
        return {};
    if (shape)
        *shape = a->shape();
    const float *p = reinterpret_cast<const float *>(a->data().data());
    return std::vector<float>(p, p + a->count());
}

// A project whose pipeline gives the model's inputs as Keras had them, in file order.
QString writeProject(const QTemporaryDir &dir, const std::string &model, const std::vector<std::string> &inputs)
{
    json features = json::object();
    for (const auto &in : inputs)
        features[in] = keras(model + "." + in + ".npy");
    const json doc = {{"format", "sluice-project"},
                      {"version", 1},
                      {"name", model},
                      {"pipeline",
                       {{"nodes", {{{"id", "arrays"}, {"op", "from_npy"}, {"params", {{"features", features}}}},
                                   {{"id", "batch"}, {"op", "batch"}, {"params", {{"batch_size", 5}}}}}},
                        {"edges", json::array({json::array({"arrays", "batch"})})}}}};
    const QString path = QDir(dir.path()).filePath(QString::fromStdString(model + ".sluice"));
    writeFile(path.toStdString(), doc.dump(2));
    return path;
}

} // namespace

class TestCliImport : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void predictionsEqualKeras_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("inputs");
        QTest::addColumn<QStringList>("outputs");
        QTest::addColumn<QString>("weights"); // a .weights.h5 beside a to_json() file
        QTest::newRow("Sequential: Dense, Dropout, BatchNormalization, softmax") << "mlp" << QStringList{"x"} << QStringList{"probs"} << "";
        QTest::newRow("functional: two inputs, two outputs, LayerNormalization, Concatenate")
            << "two_branches" << QStringList{"a", "b"} << QStringList{"y", "p"} << "";
        QTest::newRow("GRU, LSTM, RepeatVector, TimeDistributed, Flatten, Reshape") << "recurrent" << QStringList{"s"} << QStringList{"out"} << "";
        QTest::newRow("to_json and .weights.h5") << "recurrent" << QStringList{"s"} << QStringList{"out"} << "recurrent.weights.h5";
        QTest::newRow("Conv1D, Conv2D, pooling, global pooling") << "conv" << QStringList{"img", "seq"} << QStringList{"out"} << "";
        QTest::newRow("Embedding") << "embedding" << QStringList{"ids"} << QStringList{"out"} << "";
    }
    void predictionsEqualKeras()
    {
        QFETCH(QString, model);
        QFETCH(QStringList, inputs);
        QFETCH(QStringList, outputs);
        QFETCH(QString, weights);
        QTemporaryDir dir;
        std::vector<std::string> in;
        for (const auto &i : inputs)
            in.push_back(i.toStdString());
        const QString project = writeProject(dir, model.toStdString(), in);
        QStringList args{"import"};
        if (weights.isEmpty()) {
            args << QString::fromStdString(keras(model.toStdString() + ".keras"));
        } else {
            args << QString::fromStdString(keras(model.toStdString() + ".json")) << "--weights" << QString::fromStdString(keras(weights.toStdString()));
        }
        args << "--into" << project;
        const auto imported = runSluice(args);
        QVERIFY2(imported.exitCode == 0, qPrintable(imported.err));
        QVERIFY2(imported.out.contains(model + ".weights.npz") || imported.out.contains(project), qPrintable(imported.out));

        const json saved = json::parse(readFile(project.toStdString()));
        QCOMPARE(saved["training"]["initial_weights"].get<std::string>(), model.toStdString() + ".weights.npz");
        QCOMPARE(saved["model"]["inputs"].size(), std::size_t(inputs.size()));

        const QString out = dir.filePath("pred");
        const auto predicted = runSluice({"predict", project, "--weights", dir.filePath(model + ".weights.npz"), "--out", out});
        QVERIFY2(predicted.exitCode == 0, qPrintable(predicted.err));
        for (const auto &o : outputs) {
            std::vector<std::uint64_t> gotShape, wantShape;
            const auto got = floatsOf(QDir(out).filePath(o + ".npy").toStdString(), &gotShape);
            const auto want = floatsOf(keras(model.toStdString() + "." + o.toStdString() + ".npy"), &wantShape);
            QVERIFY2(!want.empty() && gotShape == wantShape, qPrintable(o));
            double scale = 1, worst = 0;
            for (std::size_t i = 0; i < want.size(); ++i) {
                scale = std::max(scale, double(std::abs(want[i])));
                worst = std::max(worst, double(std::abs(got[i] - want[i])));
            }
            QVERIFY2(worst <= 1e-5 * scale, qPrintable(QStringLiteral("%1: %2 off").arg(o).arg(worst)));
        }
    }

    // Keras -> Sluice -> .keras (sluice export --format keras) -> Sluice again: the archive Sluice
    // writes has Keras's layout, so it imports to the same predictions. (Keras itself loading it:
    // tests/python/test_export_keras.py.)
    void exportedKerasArchivesImportBack_data() { predictionsEqualKeras_data(); }
    void exportedKerasArchivesImportBack()
    {
        QFETCH(QString, model);
        QFETCH(QStringList, inputs);
        QFETCH(QStringList, outputs);
        QTemporaryDir dir;
        std::vector<std::string> in;
        for (const auto &i : inputs)
            in.push_back(i.toStdString());
        const QString project = writeProject(dir, model.toStdString(), in);
        QVERIFY(runSluice({"import", QString::fromStdString(keras(model.toStdString() + ".keras")), "--into", project}).exitCode == 0);
        const QString archive = dir.filePath("exported/" + model + ".keras");
        const auto exported = runSluice({"export", dir.filePath(model + ".weights.npz"), "--project", project, "--format", "keras", "--out", archive});
        QVERIFY2(exported.exitCode == 0, qPrintable(exported.err));
        QTemporaryDir again;
        const QString second = writeProject(again, model.toStdString(), in);
        const auto reimported = runSluice({"import", archive, "--into", second});
        QVERIFY2(reimported.exitCode == 0, qPrintable(reimported.err));
        const QString out = again.filePath("pred");
        QVERIFY(runSluice({"predict", second, "--weights", again.filePath(model + ".weights.npz"), "--out", out}).exitCode == 0);
        for (const auto &o : outputs) {
            const auto got = floatsOf(QDir(out).filePath(o + ".npy").toStdString());
            const auto want = floatsOf(keras(model.toStdString() + "." + o.toStdString() + ".npy"));
            QCOMPARE(got.size(), want.size());
            for (std::size_t i = 0; i < want.size(); ++i)
                QVERIFY(std::abs(got[i] - want[i]) <= 1e-5f * std::max(1.0f, std::abs(want[i])));
        }
    }

    void badInputExits2AndLeavesTheProject_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("says");
        QTest::newRow("truncated .keras") << "truncated" << "truncated.keras";
        QTest::newRow("unknown layer") << "unknown layer" << "layer Conv3D is not supported (supported: ";
        QTest::newRow("weights that disagree with the config") << "shapes" << "weights gru1/kernel have shape (3, 15), the model needs (3, 18)";
        QTest::newRow("an HDF5 file that is not Keras's") << "not keras" << "not_keras.h5: is not a Keras 3 weights file";
        QTest::newRow("not a model at all") << "text" << "is neither a .keras archive nor the JSON of model.to_json()";
        QTest::newRow("an option Sluice lacks") << "regularizer" << "parameter 'kernel_regularizer': regularizers are not supported";
        QTest::newRow("a model already there") << "has model" << "has a model already: --replace";
    }
    void badInputExits2AndLeavesTheProject()
    {
        QFETCH(QString, kind);
        QFETCH(QString, says);
        QTemporaryDir dir;
        const QString project = writeProject(dir, "recurrent", {"s"});
        QString model = QString::fromStdString(keras("recurrent.keras"));
        QStringList extra;
        const json config = json::parse(readFile(keras("recurrent.json")));
        auto writeConfig = [&](const json &c) {
            model = dir.filePath("edited.json");
            writeFile(model.toStdString(), c.dump());
        };
        if (kind == "truncated") {
            const std::string bytes = readFile(keras("recurrent.keras"));
            model = dir.filePath("truncated.keras");
            writeFile(model.toStdString(), bytes.substr(0, bytes.size() / 2));
        } else if (kind == "unknown layer") {
            json c = config;
            c["config"]["layers"][1]["class_name"] = "Conv3D";
            writeConfig(c);
        } else if (kind == "shapes") {
            json c = config;
            c["config"]["layers"][1]["config"]["units"] = 6; // gru1: 5 units in the weights
            writeConfig(c);
            extra << "--weights" << QString::fromStdString(keras("recurrent.weights.h5"));
        } else if (kind == "not keras") {
            model = QString::fromStdString(keras("recurrent.json"));
            extra << "--weights" << QString::fromStdString(keras("not_keras.h5"));
        } else if (kind == "text") {
            model = dir.filePath("notes.txt");
            writeFile(model.toStdString(), "not a model\n");
        } else if (kind == "regularizer") {
            json c = config;
            c["config"]["layers"][5]["config"]["layer"]["config"]["kernel_regularizer"] = {{"class_name", "L2"}, {"config", {{"l2", 0.01}}}};
            writeConfig(c);
        } else if (kind == "has model") {
            QVERIFY(runSluice({"import", model, "--into", project}).exitCode == 0);
        }
        const std::string before = readFile(project.toStdString());
        const auto r = runSluice(QStringList{"import", model} << extra << "--into" << project);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.startsWith("sluice: ") && r.err.contains(says), qPrintable(r.err));
        QCOMPARE(readFile(project.toStdString()), before);
    }

    void missingArgumentsExit2()
    {
        QCOMPARE(runSluice({"import"}).exitCode, 2);
        const auto noInto = runSluice({"import", QString::fromStdString(keras("mlp.keras"))});
        QCOMPARE(noInto.exitCode, 2);
        QVERIFY(noInto.err.contains("--into"));
        const auto missing = runSluice({"import", "/nonexistent/model.keras", "--into", "/nonexistent/p.sluice"});
        QCOMPARE(missing.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestCliImport)
#include "tst_cli_import.moc"
