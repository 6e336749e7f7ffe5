// The model.py that `sluice export` writes, checked as text without PyTorch: the modules and the
// weight mapping each layer family gets, Python names for any layer name, TensorFlow's "same"
// padding written out, refusals naming the layer and key, and (where a Python 3 is found) that
// the file compiles. tests/python/test_export.py runs the files under PyTorch against
// `sluice predict`.
#include "pipeline/engine/element.h"
#include "train/model/model.h"
#include "train/interchange/torch_export.h"
#include "support/reference.h"

#include <nlohmann/json.hpp>

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace sluice;
using namespace sluice::train;

namespace {

pipeline::ElementSpec spec(std::vector<std::pair<std::string, Shape>> features)
{
    pipeline::ElementSpec s;
    for (auto &[name, shape] : features) {
        shape.insert(shape.begin(), 16); // the batch
        s.features.push_back({name, pipeline::ValueType{}, shape});
    }
    return s;
}

Result<std::string> source(const nlohmann::json &model, const pipeline::ElementSpec &s)
{
    auto built = Model::build(model, s, ModelBuildOptions{true});
    if (!built)
        return built.error();
    return torchModelSource(**built, {"weights.safetensors", "test", "0.0"});
}

std::string sourceOrFail(const nlohmann::json &model, const pipeline::ElementSpec &s)
{
    auto text = source(model, s);
    if (!text) {
        QTest::qFail(text.error().message().c_str(), __FILE__, __LINE__);
        return {};
    }
    return *text;
}

void contains(const std::string &text, const std::string &part)
{
    if (text.find(part) == std::string::npos)
        QTest::qFail(("model.py lacks: " + part + "\n---\n" + text).c_str(), __FILE__, __LINE__);
}

const nlohmann::json kDense = nlohmann::json::parse(R"({
  "inputs": [{"name": "x", "feature": "x"}],
  "layers": [{"class_name": "Dense", "name": "d1", "units": 8, "activation": "relu"},
             {"class_name": "LayerNormalization", "name": "ln", "center": false},
             {"class_name": "Dense", "name": "d2", "units": 2, "use_bias": false}],
  "outputs": [{"name": "y", "layer": "d2", "target": "y", "loss": "mse"}]})");

} // namespace

class TestTorchExport : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void denseLayersAndTheirWeights()
    {
        const std::string py = sourceOrFail(kDense, spec({{"x", {6}}}));
        QVERIFY(py.rfind(kTorchExportMarker, 0) == 0); // the first line: export may overwrite it later
        contains(py, "self.layers[\"d1\"] = nn.Linear(6, 8, bias=True)");
        contains(py, "F.relu(self.layers[\"d1\"](x))");
        contains(py, "_copy(model.layers[\"d1\"].weight, _get(w, \"d1/kernel\").T)");
        contains(py, "_copy(model.layers[\"d1\"].bias, _get(w, \"d1/bias\"))");
        contains(py, "nn.LayerNorm(8, eps=0.001)");
        contains(py, "_copy(model.layers[\"ln\"].weight, _get(w, \"ln/gamma\"))");
        QVERIFY(py.find("ln/beta") == std::string::npos); // center: false, no beta to load
        contains(py, "nn.Linear(8, 2, bias=False)");
        QVERIFY(py.find("d2/bias") == std::string::npos);
        contains(py, "WEIGHTS_FILE = \"weights.safetensors\"");
    }

    void anyLayerNameBecomesAPythonName()
    {
        const auto model = nlohmann::json::parse(R"({
          "inputs": [{"name": "in put", "feature": "x"}],
          "layers": [{"class_name": "Dense", "name": "a.b", "units": 2},
                     {"class_name": "Dense", "name": "a_b", "units": 2},
                     {"class_name": "Dense", "name": "keys", "units": 2},
                     {"class_name": "Dense", "name": "F", "units": 2},
                     {"class_name": "Dense", "name": "2nd", "units": 2}],
          "outputs": [{"name": "y", "layer": "2nd", "target": "y", "loss": "mse"}]})");
        const std::string py = sourceOrFail(model, spec({{"x", {3}}}));
        contains(py, "def forward(self, in_put):");
        contains(py, "self.layers[\"a_b\"] = nn.Linear(3, 2");
        contains(py, "self.layers[\"a_b_2\"] = nn.Linear(2, 2");
        contains(py, "self.layers[\"keys_layer\"]"); // nn.ModuleDict has a keys() of its own
        contains(py, "self.layers[\"l_2nd\"]");
        contains(py, "F_layer = self.layers[\"F\"](keys)"); // the local may not hide torch.nn.functional
        contains(py, "_get(w, \"a.b/kernel\")");           // the weights keep the layers' own names
    }

    void sameConvolutionPadsAsTensorFlow()
    {
        const auto model = nlohmann::json::parse(R"({
          "inputs": [{"name": "img", "feature": "img"}],
          "layers": [{"class_name": "Conv2D", "name": "c", "filters": 4, "kernel_size": 3, "strides": 2, "padding": "same"},
                     {"class_name": "AveragePooling2D", "name": "p", "pool_size": 2, "padding": "same"},
                     {"class_name": "MaxPooling2D", "name": "m", "pool_size": 2, "padding": "same"},
                     {"class_name": "GlobalMaxPooling2D", "name": "g"}],
          "outputs": [{"name": "y", "layer": "g", "target": "y", "loss": "mse"}]})");
        const std::string py = sourceOrFail(model, spec({{"img", {9, 9, 2}}}));
        contains(py, "nn.Conv2d(2, 4, kernel_size=(3, 3), stride=(2, 2), dilation=(1, 1), bias=True)");
        // 9 pixels, a 3-window, stride 2 -> 5 outputs: TensorFlow pads (5 - 1) * 2 + 3 - 9 = 2, 1 before and 1 after.
        contains(py, "F.pad(img.permute(0, 3, 1, 2), (1, 1, 1, 1))");
        contains(py, ".permute(3, 2, 0, 1)"); // the kernel [kh, kw, in, out] -> [out, in, kh, kw]
        // 5 -> 3 with a 2-window, stride 2: one column of padding, after.
        contains(py, "_padded_average(F.avg_pool2d, c.permute(0, 3, 1, 2), (0, 1, 0, 1), (2, 2), (2, 2))");
        contains(py, "F.pad(p.permute(0, 3, 1, 2), (0, 1, 0, 1), value=float(\"-inf\"))");
        contains(py, "g = m.amax(dim=(1, 2)).reshape(m.shape[0], 4)");
    }

    void recurrentGatesAreReordered()
    {
        const auto model = nlohmann::json::parse(R"({
          "inputs": [{"name": "s", "feature": "s"}],
          "layers": [{"class_name": "GRU", "name": "g", "units": 4, "return_sequences": true},
                     {"class_name": "LSTM", "name": "l", "units": 3}],
          "outputs": [{"name": "y", "layer": "l", "target": "y", "loss": "mse"}]})");
        const std::string py = sourceOrFail(model, spec({{"s", {5, 2}}}));
        contains(py, "nn.GRU(2, 4, batch_first=True, bias=True)");
        contains(py, "_copy(model.layers[\"g\"].weight_ih_l0, _zrh_to_rzn(_get(w, \"g/kernel\").T, 4))");
        contains(py, "_copy(model.layers[\"g\"].bias_hh_l0, _zrh_to_rzn(_get(w, \"g/bias\")[1], 4))");
        contains(py, "l = self.layers[\"l\"](g)[0][:, -1]");
        contains(py, "model.layers[\"l\"].bias_hh_l0.zero_()");
    }

    void refusesWhatPyTorchsModulesCannotExpress()
    {
        const auto model = nlohmann::json::parse(R"({
          "inputs": [{"name": "s", "feature": "s"}],
          "layers": [{"class_name": "LSTM", "name": "odd", "units": 3, "recurrent_activation": "tanh"}],
          "outputs": [{"name": "y", "layer": "odd", "target": "y", "loss": "mse"}]})");
        auto text = source(model, spec({{"s", {5, 2}}}));
        QVERIFY(!text.ok());
        QCOMPARE(text.error().layer, std::string("odd"));
        QCOMPARE(text.error().key, std::string("recurrent_activation"));
        QVERIFY2(text.error().reason.find("nn.LSTM") != std::string::npos, text.error().reason.c_str());
    }

    void generatedFilesCompile()
    {
        const QString python = QStandardPaths::findExecutable("python3");
        if (python.isEmpty())
            SLUICE_REFERENCE_MISSING("no python3 on PATH: the syntax check needs one");
        QTemporaryDir dir;
        const std::string py = sourceOrFail(kDense, spec({{"x", {6}}}));
        QFile f(dir.filePath("model.py"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(py.data(), qint64(py.size()));
        f.close();
        QProcess p;
        p.start(python, {"-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", f.fileName()});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    }
};

QTEST_GUILESS_MAIN(TestTorchExport)
#include "tst_torch_export.moc"
