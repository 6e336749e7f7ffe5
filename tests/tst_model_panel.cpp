// The model panel: the example projects' model and training load, a layer's units and the epochs
// are edited through the keyboard, and the emitted JSON is the input with exactly that change
// (unknown keys kept); layer lists under QAbstractItemModelTester; class and optimizer changes,
// renames, schedules and validation follow core's rules.
#include "inspector/number_editor.h"
#include "pipeline/engine/element.h"
#include "train/model/model.h"
#include "train/loop/training_config.h"
#include "inspector/param_form.h"
#include "model/error_location.h"
#include "model/json_list_model.h"
#include "model/model_behaviours.h"
#include "model/model_panel.h"
#include "model/model_specs.h"
#include "model/object_list_editor.h"
#include "model/training_editor.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QSignalSpy>
#include <QtTest>

using namespace sluice;
using namespace sluice::widgets;

namespace {

// Read-only JSON access: QJsonValue's const operator[] takes names and indexes alike.
QJsonValue J(const QJsonValue &v)
{
    return v;
}

QJsonObject object(const char *json)
{
    return QJsonDocument::fromJson(json).object();
}

QJsonObject readProject(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot open %s", qPrintable(path));
    return QJsonDocument::fromJson(file.readAll()).object();
}

// The features the project's from_npy source declares (what a build would report).
QStringList featuresOf(const QJsonObject &project)
{
    for (const QJsonValue &n : project["pipeline"]["nodes"].toArray())
        if (n["op"].toString() == "from_npy")
            return n["params"]["features"].toObject().keys();
    return {};
}

void typeInto(QAbstractSpinBox *field, const QString &text)
{
    field->setFocus();
    field->selectAll();
    QTest::keyClicks(field, text);
    QTest::keyClick(field, Qt::Key_Return);
}

NumberEditor *numberEditor(ParamForm *form, const char *name)
{
    return qobject_cast<NumberEditor *>(form->editor(QString::fromLatin1(name)));
}

} // namespace

class TestModelPanel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Any warning fails, but the offscreen platform's own notice about window size hints.
    void init() { QTest::failOnWarning(QRegularExpression(QStringLiteral("^(?!This plugin does not support propagateSizeHints).*"))); }

    void jsonListModelPassesTester()
    {
        JsonListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setItems(QJsonArray{object(R"({"name": "a"})"), object(R"({"name": "b"})"), object(R"({"name": "c"})")});
        QCOMPARE(model.index(1).data().toString(), QString("b"));
        QVERIFY(model.moveRow({}, 0, {}, 3)); // a to the end
        QCOMPARE(model.index(2).data().toString(), QString("a"));
        QVERIFY(model.moveRow({}, 2, {}, 0)); // and back
        QCOMPARE(model.index(0).data().toString(), QString("a"));
        QVERIFY(!model.moveRow({}, 0, {}, 1)); // onto itself
        model.insertItem(1, object(R"({"name": "x"})"));
        model.removeItem(0);
        model.replaceItem(0, object(R"({"name": "y"})"));
        model.setLabeler([](const QJsonObject &o, int row) { return QString::number(row) + o["name"].toString(); });
        QCOMPARE(model.index(0).data().toString(), QString("0y"));
        model.setItems(QJsonArray{"not an object"});
        QCOMPARE(model.index(0).data().toString(), QString(R"("not an object")"));
        model.setErrorRow(0, "broken");
        QCOMPARE(model.index(0).data(Qt::ToolTipRole).toString(), QString("broken"));
        model.setErrorRow(-1, {});
        model.setItems({});
        QCOMPARE(model.rowCount(), 0);
    }

    void layerListUnderTesterWhileEditing()
    {
        ModelPanel panel;
        ObjectListEditor *layers = panel.layersEditor();
        QAbstractItemModelTester tester(layers->listModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy spy(&panel, &ModelPanel::modelEdited);
        panel.setModel(object(R"({"inputs": [{"name": "x"}], "layers": [], "outputs": []})"), {"x", "y"});
        layers->addItem("Dense");
        layers->addItem("Dropout");
        layers->addItem("LayerNormalization");
        QCOMPARE(spy.size(), 3);
        QJsonArray added = J(spy.last()[0].toJsonObject())["layers"].toArray();
        QCOMPARE(added.size(), 3);
        QCOMPARE(added[0].toObject(), object(R"({"class_name": "Dense", "name": "dense"})"));
        QCOMPARE(J(added)[2]["name"].toString(), QString("layer_normalization"));
        panel.setModel(spy.last()[0].toJsonObject(), {"x", "y"}); // as the owner does
        layers->setCurrentRow(2);
        layers->moveCurrent(-1);
        QCOMPARE(J(spy.last()[0].toJsonObject())["layers"][1]["class_name"].toString(), QString("LayerNormalization"));
        QCOMPARE(layers->currentRow(), 1);
        layers->removeCurrent();
        QCOMPARE(J(spy.last()[0].toJsonObject())["layers"].toArray().size(), 2);
        layers->setCurrentRow(0);
        layers->moveCurrent(-1); // already first: nothing
        QCOMPARE(spy.size(), 5);
    }

    void exampleProjectsEditExactlyOneKey_data()
    {
        QTest::addColumn<QString>("path");
        const QDir projects(QStringLiteral(SLUICE_SOURCE_DIR "/projects"));
        for (const QString &name : projects.entryList({"*.sluice"}))
            if (readProject(projects.filePath(name)).contains("model"))
                QTest::newRow(qPrintable(name)) << projects.filePath(name);
    }

    void exampleProjectsEditExactlyOneKey()
    {
        QFETCH(QString, path);
        const QJsonObject project = readProject(path);
        QJsonObject model = project["model"].toObject();
        QJsonObject training = project["training"].toObject();
        model.insert("x_note", "kept by the panel"); // keys Sluice does not know survive
        training.insert("x_tool", QJsonObject{{"tuned", true}});

        ModelPanel panel;
        panel.resize(600, 800);
        panel.show();
        panel.setModel(model, featuresOf(project));
        panel.setTraining(training);
        QSignalSpy modelSpy(&panel, &ModelPanel::modelEdited);
        QSignalSpy trainingSpy(&panel, &ModelPanel::trainingEdited);

        // The first layer with units: type a new count into its editor.
        const QJsonArray layers = model["layers"].toArray();
        int row = 0;
        while (row < layers.size() && !layers[row].toObject().contains("units"))
            ++row;
        QVERIFY(row < layers.size());
        panel.layersEditor()->setCurrentRow(row);
        NumberEditor *units = numberEditor(panel.layersEditor()->form(), "units");
        QVERIFY(units);
        QCOMPARE(units->field()->text(), QString::number(layers[row]["units"].toInteger()));
        typeInto(units->field(), "48");
        QCOMPARE(modelSpy.size(), 1);
        QJsonObject expected = model;
        QJsonArray expectedLayers = layers;
        QJsonObject layer = expectedLayers[row].toObject();
        layer.insert("units", 48);
        expectedLayers.replace(row, layer);
        expected.insert("layers", expectedLayers);
        QCOMPARE(modelSpy[0][0].toJsonObject(), expected);
        QCOMPARE(QJsonDocument(modelSpy[0][0].toJsonObject()).toJson(QJsonDocument::Compact).count("48.0"), 0);

        panel.tabs()->setCurrentIndex(1);
        NumberEditor *epochs = numberEditor(panel.trainingEditor()->runForm(), "epochs");
        QCOMPARE(epochs->field()->text(), QString::number(training["epochs"].toInteger()));
        typeInto(epochs->field(), "3");
        QCOMPARE(trainingSpy.size(), 1);
        QJsonObject expectedTraining = training;
        expectedTraining.insert("epochs", 3);
        QCOMPARE(trainingSpy[0][0].toJsonObject(), expectedTraining);
        QCOMPARE(modelSpy.size(), 1);
    }

    void everyLayerClassGetsAForm()
    {
        ModelPanel panel;
        panel.show();
        QJsonArray layers;
        for (const QString &cls : modelspecs::layerClassNames())
            layers.append(QJsonObject{{"class_name", cls}, {"name", cls.toLower()}});
        panel.setModel(QJsonObject{{"inputs", QJsonArray{object(R"({"name": "x"})")}}, {"layers", layers}, {"outputs", QJsonArray()}}, {"x"});
        for (int row = 0; row < layers.size(); ++row) {
            panel.layersEditor()->setCurrentRow(row);
            const QString cls = J(layers)[row]["class_name"].toString();
            const QStringList shown = modelspecs::specNames(panel.layersEditor()->form()->specs());
            QVERIFY2(shown.mid(0, 3) == QStringList({"name", "class_name", "inputs"}), qPrintable(cls));
            QCOMPARE(shown.size(), 3 + modelspecs::layerParamSpecs(cls).size());
        }
        // Every parameter type the layer registry uses has an editor made for it.
        const QStringList types{"int", "int|null", "number", "bool", "list of int", "int|list of int", "int|list of int|null", "object"};
        for (const QString &cls : modelspecs::layerClassNames())
            for (const ParamSpec &p : modelspecs::layerParamSpecs(cls))
                QVERIFY2(p.type.startsWith("enum:") || types.contains(p.type), qPrintable(cls + "." + p.name + ": " + p.type));
        QVERIFY(!modelspecs::lossNames().isEmpty());
        QVERIFY(modelspecs::metricNames().contains("accuracy"));
        // Every optimizer core knows has its own table (its type plus hyper-parameters).
        for (const QString &type : modelspecs::optimizerNames())
            QVERIFY2(modelspecs::optimizerSpecs(type).size() > 3, qPrintable(type));
    }

    void classChangeDropsTheOldClassParameters()
    {
        QJsonObject layer = object(R"({"class_name": "Dense", "name": "d", "units": 8, "activation": "relu", "x_note": 1})");
        behaviours::applyLayerEdit(layer, "class_name", "Dropout");
        QCOMPARE(layer, object(R"({"class_name": "Dropout", "name": "d", "x_note": 1})"));
        // Keras's nested config: edits go where the parameter is.
        QJsonObject keras = object(R"({"class_name": "Dense", "name": "d", "config": {"units": 8, "use_bias": false}})");
        QCOMPARE(behaviours::layerValues(keras)["units"].toInt(), 8);
        behaviours::applyLayerEdit(keras, "units", 16);
        behaviours::applyLayerEdit(keras, "activation", "relu");
        QCOMPARE(keras, object(R"({"class_name": "Dense", "name": "d", "activation": "relu", "config": {"units": 16, "use_bias": false}})"));
    }

    void renamingALayerFollowsItsReferences()
    {
        ModelPanel panel;
        QSignalSpy spy(&panel, &ModelPanel::modelEdited);
        const QJsonObject model = object(R"({"inputs": [{"name": "x"}], "layers": [
            {"class_name": "Dense", "name": "enc", "units": 4},
            {"class_name": "Dense", "name": "head", "inputs": ["enc"], "units": 1}],
            "outputs": [{"name": "y", "layer": "head", "target": "y", "loss": "mse"}]})");
        panel.setModel(model, {"x", "y"});
        panel.layersEditor()->setCurrentRow(1);
        auto *name = qobject_cast<QLineEdit *>(panel.layersEditor()->form()->editor("name")->inputWidget());
        QVERIFY(name);
        name->setFocus();
        name->selectAll();
        QTest::keyClicks(name, "score");
        QTest::keyClick(name, Qt::Key_Return);
        QCOMPARE(spy.size(), 1);
        const QJsonObject edited = spy[0][0].toJsonObject();
        QCOMPARE(edited["layers"][1]["name"].toString(), QString("score"));
        QCOMPARE(edited["outputs"][0]["layer"].toString(), QString("score"));
        panel.setModel(edited, {"x", "y"});
        panel.layersEditor()->setCurrentRow(0);
        name = qobject_cast<QLineEdit *>(panel.layersEditor()->form()->editor("name")->inputWidget());
        name->setFocus();
        name->selectAll();
        QTest::keyClicks(name, "encoder");
        QTest::keyClick(name, Qt::Key_Return);
        QCOMPARE(J(spy.last()[0].toJsonObject())["layers"][1]["inputs"].toArray(), QJsonArray{"encoder"});
    }

    void outputsOfferLossesAndTheirOptions()
    {
        ModelPanel panel;
        QSignalSpy spy(&panel, &ModelPanel::modelEdited);
        panel.setModel(object(R"({"inputs": [{"name": "x"}], "layers": [{"class_name": "Dense", "name": "d", "units": 1}],
                                   "outputs": [{"name": "y", "layer": "d", "target": "y", "loss": "mse"}]})"),
                       {"x", "y"});
        ParamForm *form = panel.outputsEditor()->form();
        QVERIFY(!form->visibleParams().contains("delta"));
        auto *loss = qobject_cast<QComboBox *>(form->editor("loss")->inputWidget());
        QVERIFY(loss);
        Q_EMIT loss->activated(loss->findData("huber"));
        QCOMPARE(spy.size(), 1);
        QCOMPARE(J(spy[0][0].toJsonObject())["outputs"][0]["loss"].toString(), QString("huber"));
        QVERIFY(form->visibleParams().contains("delta")); // huber's option appears
    }

    void optimizerScheduleAndValidation()
    {
        TrainingEditor editor;
        QSignalSpy spy(&editor, &TrainingEditor::trainingEdited);
        const QJsonObject training = object(R"({"epochs": 2, "optimizer": {"type": "adam", "learning_rate": 0.002, "beta_1": 0.8, "x": 1},
                                               "validation": {"node": "val"}})");
        editor.setTraining(training);
        auto *type = qobject_cast<QComboBox *>(editor.optimizerForm()->editor("type")->inputWidget());
        Q_EMIT type->activated(type->findData("sgd"));
        QCOMPARE(J(spy.last()[0].toJsonObject())["optimizer"].toObject(), object(R"({"type": "sgd", "learning_rate": 0.002, "x": 1})"));
        editor.setTraining(spy.last()[0].toJsonObject());
        QVERIFY(editor.optimizerForm()->editor("nesterov"));

        auto *schedule = qobject_cast<QComboBox *>(editor.scheduleForm()->editor("schedule")->inputWidget());
        QCOMPARE(schedule->currentText(), QString("fixed"));
        Q_EMIT schedule->activated(schedule->findData("cosine"));
        QCOMPARE(J(spy.last()[0].toJsonObject())["optimizer"]["learning_rate"].toObject(),
                 object(R"({"type": "cosine", "initial_learning_rate": 0.002})"));
        editor.setTraining(spy.last()[0].toJsonObject());
        typeInto(numberEditor(editor.scheduleForm(), "decay_steps")->field(), "1000");
        QCOMPARE(J(spy.last()[0].toJsonObject())["optimizer"]["learning_rate"]["decay_steps"].toInteger(), 1000);
        editor.setTraining(spy.last()[0].toJsonObject());
        // Another schedule type rebuilt the form: its combo is a new one.
        schedule = qobject_cast<QComboBox *>(editor.scheduleForm()->editor("schedule")->inputWidget());
        QCOMPARE(schedule->currentText(), QString("cosine"));
        Q_EMIT schedule->activated(schedule->findData("fixed"));
        QCOMPARE(J(spy.last()[0].toJsonObject())["optimizer"]["learning_rate"], QJsonValue(0.002));

        typeInto(numberEditor(editor.validationForm(), "split")->field(), "0.1");
        QCOMPARE(J(spy.last()[0].toJsonObject())["validation"].toObject(), object(R"({"split": 0.1})"));
        typeInto(numberEditor(editor.validationForm(), "split")->field(), "1");
        QVERIFY(!editor.validationForm()->messageLabel("split")->text().isEmpty()); // (0, 1)

        // A bare optimizer name is widened to an object only by an edit.
        editor.setTraining(object(R"({"optimizer": "adam"})"));
        typeInto(numberEditor(editor.scheduleForm(), "learning_rate")->field(), "0.01");
        QCOMPARE(spy.last()[0].toJsonObject(), object(R"({"optimizer": {"type": "adam", "learning_rate": 0.01}})"));
    }

    void oddJsonIsShownNotLost()
    {
        ModelPanel panel;
        panel.show();
        QSignalSpy spy(&panel, &ModelPanel::modelEdited);
        // What a hand-edited file may hold: a non-object layer, parameters in Keras's "config",
        // a loss given as an object, an optimizer that is a number, no model at all.
        const QJsonObject model = object(R"({"inputs": [{"name": "x"}], "layers": [7, {"class_name": "Dense", "name": "d",
            "config": {"units": 3}}], "outputs": [{"name": "y", "layer": "d", "target": "y", "loss": {"name": "huber", "delta": 2}}]})");
        panel.setModel(model, {"x", "y"});
        QCOMPARE(panel.layersEditor()->listModel()->index(0).data().toString(), QString("7"));
        panel.layersEditor()->setCurrentRow(1);
        QCOMPARE(numberEditor(panel.layersEditor()->form(), "units")->field()->text(), QString("3"));
        typeInto(numberEditor(panel.layersEditor()->form(), "units")->field(), "5");
        QCOMPARE(J(spy.last()[0].toJsonObject())["layers"][1]["config"]["units"].toInteger(), 5);
        QCOMPARE(J(spy.last()[0].toJsonObject())["layers"][0], QJsonValue(7)); // untouched
        QVERIFY(panel.outputsEditor()->form()->editor("loss")); // the object loss: a JSON editor
        panel.setTraining(object(R"({"optimizer": 3, "validation": null, "checkpoint": []})"));
        panel.setModel({}, {});
        QCOMPARE(panel.layersEditor()->listModel()->rowCount(), 0);
        panel.layersEditor()->addItem("Dense"); // a first layer makes a model core can read
        QCOMPARE(J(spy.last()[0].toJsonObject())["inputs"], QJsonValue(QJsonArray()));
        QCOMPARE(J(spy.last()[0].toJsonObject())["outputs"], QJsonValue(QJsonArray()));
    }

    void checkErrorsShowNextToTheirEditor()
    {
        ModelPanel panel;
        const QJsonObject project = readProject(QStringLiteral(SLUICE_SOURCE_DIR "/projects/regression.sluice"));
        panel.setModel(project["model"].toObject(), featuresOf(project));
        panel.setTraining(project["training"].toObject());
        panel.layersEditor()->setCurrentRow(3);
        // Errors as core makes them, placed by their fields (Error::layer and key).
        const auto document = nlohmann::json::parse(QJsonDocument(project).toJson().toStdString());
        auto modelError = [&](const char *pointer, const nlohmann::json &value) {
            nlohmann::json model = document["model"];
            model[nlohmann::json::json_pointer(pointer)] = value;
            pipeline::ElementSpec spec;
            for (const auto &[name, width] : {std::pair{"x", 8}, {"meta", 3}, {"y", 4}, {"score", 1}})
                spec.features.push_back({name, pipeline::ValueType{}, {32, width}});
            auto built = train::Model::build(model, spec);
            return built ? std::optional<Error>() : std::optional<Error>(built.error());
        };
        const auto units = modelError("/layers/3/units", 0);
        QVERIFY(units);
        QCOMPARE(units->layer, std::string("layers[3]"));
        QCOMPARE(units->key, std::string("units"));
        panel.showError(units);
        QVERIFY(!panel.modelErrorLabel()->isHidden());
        QVERIFY(panel.modelErrorLabel()->text().contains("units"));
        const QString unitsReason = QString::fromStdString(units->reason);
        QVERIFY(panel.layersEditor()->form()->messageLabel("units")->text().contains(unitsReason));
        const QModelIndex hidden = panel.layersEditor()->listModel()->index(3);
        QVERIFY(hidden.data(Qt::ForegroundRole).isValid()); // the row is marked
        QVERIFY(hidden.data(Qt::ToolTipRole).toString().contains(unitsReason));
        panel.layersEditor()->setCurrentRow(0); // another layer: not its message
        QVERIFY(panel.layersEditor()->form()->messageLabel("units")->text().isEmpty());

        const auto weight = modelError("/outputs/1/loss_weight", -1);
        QVERIFY(weight);
        QCOMPARE(weight->layer, std::string("outputs[1]"));
        QCOMPARE(weight->key, std::string("loss_weight"));
        panel.showError(weight);
        panel.outputsEditor()->setCurrentRow(1);
        QCOMPARE(panel.outputsEditor()->form()->messageLabel("loss_weight")->text(), QString("must be a number >= 0"));

        auto trainingError = [&](const char *pointer, const nlohmann::json &value) {
            nlohmann::json doc = document;
            doc[nlohmann::json::json_pointer(pointer)] = value;
            auto p = Project::fromJson(doc, ".");
            if (!p)
                return std::optional<Error>(p.error());
            auto config = train::parseTrainingConfig(*p);
            return config ? std::optional<Error>() : std::optional<Error>(config.error());
        };
        const auto keep = trainingError("/training/checkpoint/keep", 0);
        QVERIFY(keep);
        QCOMPARE(keep->layer, std::string("training"));
        QCOMPARE(keep->key, std::string("checkpoint.keep"));
        QCOMPARE(locateError(*keep).trainingPath, (QStringList{"checkpoint", "keep"}));
        panel.showError(keep);
        QVERIFY(panel.modelErrorLabel()->isHidden());
        QVERIFY(!panel.trainingEditor()->errorLabel()->isHidden());
        const auto epochs = trainingError("/training/epochs", 0);
        QVERIFY(epochs);
        panel.showError(epochs);
        QCOMPARE(panel.trainingEditor()->runForm()->messageLabel("epochs")->text(), QString::fromStdString(epochs->reason));
        panel.showError(std::nullopt);
        QVERIFY(panel.trainingEditor()->errorLabel()->isHidden());
        QVERIFY(panel.trainingEditor()->runForm()->messageLabel("epochs")->text().isEmpty());
    }

    void batchSizeIsThePipelines()
    {
        ModelPanel panel;
        QSignalSpy spy(&panel, &ModelPanel::batchSizeEdited);
        panel.setTraining(object(R"({"replicas": 2})"));
        panel.setBatchSize(256);
        NumberEditor *batch = numberEditor(panel.trainingEditor()->batchForm(), "batch_size");
        QCOMPARE(batch->field()->text(), QString("256"));
        QVERIFY(batch->toolTip().contains("2 replica"));
        typeInto(batch->field(), "512");
        QCOMPARE(spy.size(), 1);
        QCOMPARE(spy[0][0].toInt(), 512);
    }
};

QTEST_MAIN(TestModelPanel)
#include "tst_model_panel.moc"
