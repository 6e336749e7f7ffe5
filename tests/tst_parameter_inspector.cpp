// The parameter inspector: an editor for every parameter of every registered op (no warnings),
// typed values emitted with the JSON type a project file holds, invalid input refused with a
// message, AUTOTUNE, seeds, features, the builder's errors, reset to default.
#include "inspector/callable_editor.h"
#include "support/test_support.h"
#include "inspector/choice_editors.h"
#include "inspector/feature_table_editor.h"
#include "inspector/json_dialog.h"
#include "inspector/number_editor.h"
#include "inspector/param_editor.h"
#include "inspector/param_form.h"
#include "inspector/param_value.h"
#include "inspector/parameter_inspector.h"
#include "inspector/text_editors.h"
#include "pipeline/engine/op_registry.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QComboBox>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include <memory>

using namespace sluice;
using namespace sluice::widgets;

namespace {

QJsonObject object(const char *json)
{
    return QJsonDocument::fromJson(json).object();
}

template <typename Editor>
Editor *editorOf(ParameterInspector &inspector, const char *param)
{
    auto *e = qobject_cast<Editor *>(inspector.form()->editor(QString::fromLatin1(param)));
    if (!e)
        qWarning("no editor of the expected kind for %s", param);
    return e;
}

// Replaces the text of a line edit or spin field the way a user does: select all, type, Enter.
void typeInto(QWidget *input, const QString &text)
{
    input->setFocus();
    if (auto *spin = qobject_cast<QAbstractSpinBox *>(input))
        spin->selectAll();
    else if (auto *line = qobject_cast<QLineEdit *>(input))
        line->selectAll();
    if (text.isEmpty())
        QTest::keyClick(input, Qt::Key_Delete);
    else
        QTest::keyClicks(input, text);
    QTest::keyClick(input, Qt::Key_Return);
}

ParamSpec spec(const char *name, const char *type, const char *defaultValue)
{
    ParamSpec s;
    s.name = QString::fromLatin1(name);
    s.type = QString::fromLatin1(type);
    s.defaultValue = QString::fromLatin1(defaultValue);
    return s;
}

const QStringList kFeatures{"x", "meta", "y", "score"};

// Sets a line edit's text and presses Enter, as a pick from its completer does (typing would
// open the completer's popup, which the offscreen platform warns about).
void enterText(QLineEdit *edit, const QString &text)
{
    edit->setFocus();
    edit->setText(text);
    QTest::keyClick(edit, Qt::Key_Return);
}

} // namespace

class TestParameterInspector : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Any warning fails, but the offscreen platform's own notice about window size hints.
    void init() { QTest::failOnWarning(QRegularExpression(QStringLiteral("^(?!This plugin does not support propagateSizeHints).*"))); }

    void everyOpGetsAnInspectorWithoutWarnings()
    {
        ParameterInspector inspector;
        inspector.resize(420, 700);
        inspector.show();
        for (const auto &op : pipeline::allOps()) {
            const QString name = QString::fromStdString(op.name);
            inspector.showNode(QStringLiteral("n_") + name, name, {}, kFeatures, QDir::tempPath());
            QCOMPARE(inspector.form()->specs().size(), qsizetype(op.params.size()));
            for (const auto &p : op.params) {
                const QString param = QString::fromStdString(p.name);
                ParamEditor *editor = inspector.form()->editor(param);
                QVERIFY2(editor, qPrintable(name + "." + param));
                QVERIFY2(editor->inputWidget()->toolTip().contains(QString::fromStdString(p.doc).toHtmlEscaped()), qPrintable(param));
                QVERIFY(editor->value().isUndefined());
                QVERIFY(editor->problem().isEmpty());
                QVERIFY(!inspector.form()->resetButton(param)->isEnabled()); // nothing set: nothing to reset
            }
            QTest::qWait(1); // layout and paint, where warnings would come from
        }
        inspector.showNothing();
    }

    // Every type core documents has an editor made for it; a new type fails here rather than
    // quietly falling back to the JSON line.
    void everyRegistryTypeHasItsEditor()
    {
        const QMap<QString, QString> editorByType{
            {"int", "NumberEditor"}, {"int|AUTOTUNE", "NumberEditor"}, {"int|null", "NumberEditor"}, {"number", "NumberEditor"},
            {"bool", "BoolEditor"}, {"dtype", "ChoiceEditor"}, {"feature", "ChoiceEditor"}, {"feature|list", "MultiChoiceEditor"},
            {"string", "LineEditor"}, {"string|list", "LineEditor"}, {"path", "PathEditor"}, {"path|glob|list", "PathEditor"}, {"list", "LineEditor"},
            {"object", "LineEditor"}, {"object|list", "LineEditor"}, {"shape", "LineEditor"}, {"number|list|adapt", "LineEditor"},
            {"callable", "CallableEditor"}, {"features", "FeatureTableEditor"}, {"feature_spec", "TfRecordSpecEditor"},
            {"columns", "CsvColumnsEditor"}, {"members", "NpzMembersEditor"}};
        for (const auto &op : pipeline::allOps())
            for (const auto &p : op.params) {
                const ParamSpec s = toSpec(p);
                const QString expected = s.type.startsWith("enum:") ? QString("ChoiceEditor") : editorByType.value(s.type);
                QVERIFY2(!expected.isEmpty(), qPrintable("no editor for type " + s.type + " (" + QString::fromStdString(op.name) + "." + s.name + ")"));
                std::unique_ptr<ParamEditor> editor(createParamEditor(s, {kFeatures, {}}, nullptr));
                QCOMPARE(QString(editor->metaObject()->className()).section("::", -1), expected);
            }
    }

    void exampleValuesShowWithoutProblems()
    {
        ParameterInspector inspector;
        inspector.showNode("arrays", "from_npy", object(R"({"features": {"x": "data/x.npy", "y": ["a.npy", "b.npy"]}})"), {}, {});
        QTableWidget *features = editorOf<FeatureTableEditor>(inspector, "features")->table();
        QCOMPARE(features->item(0, 1)->text(), QString("data/x.npy"));
        QCOMPARE(features->item(1, 1)->text(), QString("a.npy; b.npy"));
        inspector.showNode("b", "batch", {}, kFeatures, {});
        QCOMPARE(editorOf<NumberEditor>(inspector, "batch_size")->field()->textEdit()->placeholderText(), QString("required"));
        QCOMPARE(editorOf<NumberEditor>(inspector, "num_parallel_calls")->field()->textEdit()->placeholderText(), QString("AUTOTUNE"));
        inspector.showNode("b", "batch", object(R"({"batch_size": 256, "num_parallel_calls": "AUTOTUNE"})"), kFeatures, {});
        QCOMPARE(editorOf<NumberEditor>(inspector, "batch_size")->field()->text(), QString("256"));
        QVERIFY(editorOf<NumberEditor>(inspector, "num_parallel_calls")->autotuneToggle()->isChecked());
        QVERIFY(!editorOf<BoolEditor>(inspector, "drop_remainder")->checkBox()->isChecked()); // default false
        QVERIFY(inspector.form()->resetButton("num_parallel_calls")->isEnabled()); // set, with a default
        QVERIFY(!inspector.form()->resetButton("drop_remainder")->isEnabled());    // not set
        QVERIFY(!inspector.form()->resetButton("batch_size")->isEnabled());        // required: no default to go back to
        inspector.showNode("m", "map", object(R"({"function": "cast", "features": ["meta"], "dtype": "float32"})"), kFeatures, {});
        QCOMPARE(editorOf<ChoiceEditor>(inspector, "dtype")->comboBox()->currentText(), QString("float32"));
        QListWidget *list = editorOf<MultiChoiceEditor>(inspector, "features")->list();
        QCOMPARE(list->count(), kFeatures.size());
        QCOMPARE(list->item(1)->checkState(), Qt::Checked);
        QCOMPARE(list->item(0)->checkState(), Qt::Unchecked);
    }

    void typedValuesAreEmittedWithTheirJsonType()
    {
        ParameterInspector inspector;
        inspector.show(); // laid out, so clicks land where a user's would
        QSignalSpy spy(&inspector, &ParameterInspector::parameterEdited);
        inspector.showNode("b", "batch", object(R"({"batch_size": 256})"), kFeatures, {});
        typeInto(editorOf<NumberEditor>(inspector, "batch_size")->field(), "512");
        QCOMPARE(spy.size(), 1);
        QCOMPARE(spy[0][0].toString(), QString("b"));
        QCOMPARE(spy[0][1].toString(), QString("batch_size"));
        const QJsonValue size = spy[0][2].value<QJsonValue>();
        QVERIFY(size.isDouble());
        QCOMPARE(size.toInteger(), 512);
        QCOMPARE(QJsonDocument(QJsonArray{size}).toJson(QJsonDocument::Compact), QByteArray("[512]")); // not 512.0

        // Focus leaving after Enter (editingFinished again) does not emit the same value twice.
        editorOf<NumberEditor>(inspector, "batch_size")->field()->clearFocus();
        QCOMPARE(spy.size(), 1);

        inspector.showNode("s", "map", object(R"({"function": "scale"})"), kFeatures, {});
        typeInto(editorOf<NumberEditor>(inspector, "scale")->field(), "0.5");
        QCOMPARE(spy.size(), 2);
        QCOMPARE(spy[1][2].value<QJsonValue>(), QJsonValue(0.5));

        inspector.showNode("r", "map", object(R"({"function": "reshape"})"), kFeatures, {});
        typeInto(editorOf<LineEditor>(inspector, "shape")->lineEdit(), "24, 4");
        QCOMPARE(spy.size(), 3);
        QCOMPARE(spy[2][2].value<QJsonValue>(), QJsonValue(QJsonArray{24, 4}));

        inspector.showNode("c", "from_csv", {}, {}, {});
        typeInto(editorOf<LineEditor>(inspector, "field_delim")->lineEdit(), ";");
        QCOMPARE(spy.size(), 4);
        QCOMPARE(spy[3][2].value<QJsonValue>(), QJsonValue(";"));
        typeInto(editorOf<PathEditor>(inspector, "filenames")->lineEdit(), "a.csv; b/*.csv");
        QCOMPARE(spy[4][2].value<QJsonValue>(), QJsonValue(QJsonArray{"a.csv", "b/*.csv"}));
        typeInto(editorOf<LineEditor>(inspector, "column_defaults")->lineEdit(), R"({"a": 0})");
        QCOMPARE(spy[5][2].value<QJsonValue>(), QJsonValue(object(R"({"a": 0})")));

        inspector.showNode("b", "batch", {}, kFeatures, {});
        QTest::mouseClick(editorOf<BoolEditor>(inspector, "drop_remainder")->checkBox(), Qt::LeftButton);
        QCOMPARE(spy.last()[1].toString(), QString("drop_remainder"));
        QCOMPARE(spy.last()[2].value<QJsonValue>(), QJsonValue(true));
    }

    void enumsAndFeaturesEmitOnPick()
    {
        ParameterInspector inspector;
        inspector.show();
        QSignalSpy spy(&inspector, &ParameterInspector::parameterEdited);
        inspector.showNode("f", "filter", {}, kFeatures, {});
        QComboBox *op = editorOf<ChoiceEditor>(inspector, "op")->comboBox();
        QCOMPARE(op->currentText(), QString("==")); // the default
        Q_EMIT op->activated(op->findData("<"));    // what a click in the popup sends
        QCOMPARE(spy.size(), 1);
        QCOMPARE(spy[0][2].value<QJsonValue>(), QJsonValue("<"));
        QComboBox *feature = editorOf<ChoiceEditor>(inspector, "feature")->comboBox();
        QCOMPARE(feature->count(), kFeatures.size());
        Q_EMIT feature->activated(2);
        QCOMPARE(spy[1][2].value<QJsonValue>(), QJsonValue("y"));

        inspector.showNode("m", "map", object(R"({"function": "cast"})"), kFeatures, {});
        QListWidget *list = editorOf<MultiChoiceEditor>(inspector, "features")->list();
        list->item(3)->setCheckState(Qt::Checked);
        list->item(0)->setCheckState(Qt::Checked);
        QCOMPARE(spy.last()[2].value<QJsonValue>(), QJsonValue(QJsonArray{"score", "x"})); // in the order picked
        list->item(3)->setCheckState(Qt::Unchecked);
        list->item(0)->setCheckState(Qt::Unchecked);
        QVERIFY(spy.last()[2].value<QJsonValue>().isUndefined()); // none: back to the default (all)
    }

    void invalidInputEmitsNothingAndSaysWhy()
    {
        ParameterInspector inspector;
        QSignalSpy spy(&inspector, &ParameterInspector::parameterEdited);
        inspector.showNode("b", "batch", object(R"({"batch_size": 256})"), kFeatures, {});
        NumberEditor *size = editorOf<NumberEditor>(inspector, "batch_size");
        typeInto(size->field(), "0");
        QCOMPARE(spy.size(), 0);
        QCOMPARE(inspector.form()->messageLabel("batch_size")->text(), QString("must be at least 1"));
        QVERIFY(!inspector.form()->messageLabel("batch_size")->isHidden());
        QVERIFY(size->field()->styleSheet().contains("border")); // the red frame
        typeInto(size->field(), "12x");
        QCOMPARE(spy.size(), 0);
        QVERIFY(inspector.form()->messageLabel("batch_size")->text().contains("whole number"));
        typeInto(size->field(), ""); // batch_size is required: emptying it is refused too
        QCOMPARE(spy.size(), 0);
        QVERIFY(inspector.form()->messageLabel("batch_size")->text().startsWith("required"));
        QVERIFY(!inspector.form()->resetButton("batch_size")->isEnabled());
        typeInto(size->field(), "64");
        QCOMPARE(spy.size(), 1);
        QVERIFY(inspector.form()->messageLabel("batch_size")->isHidden());
        QVERIFY(size->field()->styleSheet().isEmpty());

        // Checked as typed, before any Enter.
        inspector.showNode("a", "from_csv", object(R"({"filenames": "a.csv"})"), {}, {});
        QLineEdit *defaults = editorOf<LineEditor>(inspector, "column_defaults")->lineEdit();
        defaults->setFocus();
        QTest::keyClicks(defaults, R"({"x": )");
        QVERIFY(inspector.form()->messageLabel("column_defaults")->text().contains("not valid JSON"));
        QTest::keyClick(defaults, Qt::Key_Return);
        QCOMPARE(spy.size(), 1);
        QTest::keyClicks(defaults, R"(0})");
        QVERIFY(inspector.form()->messageLabel("column_defaults")->text().isEmpty());
        QTest::keyClicks(defaults, "]");
        QTest::keyClick(defaults, Qt::Key_Return);
        QCOMPARE(spy.size(), 1);
        typeInto(defaults, "[1, 2]");
        QCOMPARE(inspector.form()->messageLabel("column_defaults")->text(), QString(R"(expected a JSON object {"key": value, …})"));
        QCOMPARE(spy.size(), 1);

        inspector.showNode("d", "map", object(R"({"function": "gaussian_noise"})"), kFeatures, {});
        typeInto(editorOf<NumberEditor>(inspector, "stddev")->field(), "-0.1");
        QCOMPARE(spy.size(), 1);
        QCOMPARE(inspector.form()->messageLabel("stddev")->text(), QString("must be at least 0"));
    }

    void autotuneToggle()
    {
        ParameterInspector inspector;
        inspector.show();
        QSignalSpy spy(&inspector, &ParameterInspector::parameterEdited);
        inspector.showNode("p", "prefetch", object(R"({"buffer_size": 8})"), kFeatures, {});
        NumberEditor *buffer = editorOf<NumberEditor>(inspector, "buffer_size");
        QVERIFY(!buffer->autotuneToggle()->isChecked());
        QVERIFY(buffer->field()->isEnabled());
        QTest::mouseClick(buffer->autotuneToggle(), Qt::LeftButton);
        QCOMPARE(spy.size(), 1);
        QCOMPARE(spy[0][2].value<QJsonValue>(), QJsonValue("AUTOTUNE"));
        QVERIFY(!buffer->field()->isEnabled());

        // The owner applies it and shows the node again; -1 (tf.data.AUTOTUNE) reads the same.
        inspector.showNode("p", "prefetch", object(R"({"buffer_size": -1})"), kFeatures, {});
        QVERIFY(buffer->autotuneToggle()->isChecked());
        // Off: the number typed before is not known here, so a number is asked for first.
        QTest::mouseClick(buffer->autotuneToggle(), Qt::LeftButton);
        QCOMPARE(spy.size(), 1);
        QVERIFY(!inspector.form()->messageLabel("buffer_size")->text().isEmpty());
        typeInto(buffer->field(), "16");
        QCOMPARE(spy.size(), 2);
        QCOMPARE(spy[1][2].value<QJsonValue>().toInteger(), 16);
        typeInto(buffer->field(), "autotune"); // typed works too
        QCOMPARE(spy[2][2].value<QJsonValue>(), QJsonValue("AUTOTUNE"));

        inspector.showNode("b", "batch", {}, kFeatures, {}); // default AUTOTUNE shows checked
        QVERIFY(editorOf<NumberEditor>(inspector, "num_parallel_calls")->autotuneToggle()->isChecked());
    }

    // What AUTOTUNE chose in the last run, and why, shown with the node (the project keeps saying
    // AUTOTUNE); another node, or a run that tuned nothing, shows none.
    void autotuneChoicesAreShownWithTheirReasons()
    {
        ParameterInspector inspector;
        inspector.show();
        inspector.showNode("p", "prefetch", object(R"({"buffer_size": "AUTOTUNE"})"), kFeatures, {});
        QVERIFY(inspector.tunedLabel()->isHidden());
        const auto grown = sluice::test::snapshotOf(object(R"({"stages": [{"id": "p", "tuned": {"buffer_size": 19},
            "tuned_why": {"buffer_size": "grown to 19: its consumer found it empty 4% of the time although it was full 3% of the time"}}]})"));
        inspector.setTuned(&grown.stages.at(0));
        QVERIFY(!inspector.tunedLabel()->isHidden());
        const QString text = inspector.tunedLabel()->text();
        QVERIFY2(text.contains("buffer_size</b> = 19") && text.contains("grown to 19: its consumer found it empty 4%"), qPrintable(text));
        NumberEditor *buffer = editorOf<NumberEditor>(inspector, "buffer_size");
        QVERIFY(buffer->autotuneToggle()->isChecked());
        QCOMPARE(buffer->field()->textEdit()->placeholderText(), QString("AUTOTUNE: 19 in the last run"));

        inspector.setTuned(nullptr); // a run that tuned nothing here
        QVERIFY(inspector.tunedLabel()->isHidden());
        const auto kept = sluice::test::snapshotOf(object(R"({"stages": [{"tuned": {"buffer_size": 4}, "tuned_why": {"buffer_size": "kept at 4"}}]})"));
        inspector.setTuned(&kept.stages.at(0));
        inspector.showNode("b", "batch", {}, kFeatures, {}); // another node
        QVERIFY(inspector.tunedLabel()->isHidden());
    }

    void seedsAreOptionalAndCanBeRolled()
    {
        ParameterInspector inspector;
        inspector.show();
        QSignalSpy spy(&inspector, &ParameterInspector::parameterEdited);
        inspector.showNode("s", "global_shuffle", object(R"({"seed": 42})"), kFeatures, {});
        NumberEditor *seed = editorOf<NumberEditor>(inspector, "seed");
        QVERIFY(seed->diceButton());
        QCoreApplication::processEvents(); // lay the new rows out before clicking into them
        QTest::mouseClick(seed->diceButton(), Qt::LeftButton);
        QCOMPARE(spy.size(), 1);
        const QJsonValue rolled = spy[0][2].value<QJsonValue>();
        QVERIFY(rolled.isDouble() && rolled.toInteger() >= 0 && double(rolled.toInteger()) == rolled.toDouble());
        typeInto(seed->field(), ""); // empty: unseeded, the parameter removed
        QCOMPARE(spy.size(), 2);
        QVERIFY(spy[1][2].value<QJsonValue>().isUndefined());
        inspector.showNode("s", "global_shuffle", {}, kFeatures, {});
        QCOMPARE(seed->field()->textEdit()->placeholderText(), QString("unseeded"));
    }

    void resetToDefault()
    {
        ParameterInspector inspector;
        inspector.show();
        QSignalSpy spy(&inspector, &ParameterInspector::parameterEdited);
        inspector.showNode("b", "batch", object(R"({"batch_size": 32, "drop_remainder": true})"), kFeatures, {});
        QToolButton *reset = inspector.form()->resetButton("drop_remainder");
        QVERIFY(reset->isEnabled());
        QVERIFY(reset->toolTip().contains("false"));
        QTest::mouseClick(reset, Qt::LeftButton);
        QCOMPARE(spy.size(), 1);
        QCOMPARE(spy[0][1].toString(), QString("drop_remainder"));
        QVERIFY(spy[0][2].value<QJsonValue>().isUndefined());
    }

    void nodeErrorsAreShown()
    {
        ParameterInspector inspector;
        inspector.showNode("b", "batch", object(R"({"batch_size": 0, "size": 3})"), kFeatures, {});
        inspector.setNodeErrors({{"batch_size", "must be at least 1, got 0"},
                                 {"", "node \"b\" (batch): its input is not connected"},
                                 {"num_shards", "not a parameter of batch"}});
        QCOMPARE(inspector.form()->messageLabel("batch_size")->text(), QString("must be at least 1, got 0"));
        QVERIFY(!inspector.form()->messageLabel("batch_size")->isHidden());
        QVERIFY(inspector.form()->messageLabel("drop_remainder")->isHidden());
        QVERIFY(inspector.nodeErrorLabel()->text().contains("its input is not connected"));
        QVERIFY(inspector.nodeErrorLabel()->text().contains("num_shards: not a parameter of batch"));
        QVERIFY(!inspector.nodeErrorLabel()->isHidden());
        // A parameter batch does not know stays visible (to be removed), in its own form.
        QVERIFY(inspector.extraForm()->editor("size"));
        // Re-showing the same node keeps the messages and the editors.
        ParamEditor *before = inspector.form()->editor("batch_size");
        inspector.showNode("b", "batch", object(R"({"batch_size": 0, "size": 3})"), kFeatures, {});
        QCOMPARE(inspector.form()->editor("batch_size"), before);
        QCOMPARE(inspector.form()->messageLabel("batch_size")->text(), QString("must be at least 1, got 0"));
        inspector.setNodeErrors({});
        QVERIFY(inspector.nodeErrorLabel()->isHidden());
        QVERIFY(inspector.form()->messageLabel("batch_size")->isHidden());
    }

    void mapShowsTheParametersOfItsFunction()
    {
        ParameterInspector inspector;
        inspector.showNode("m", "map", object(R"({"function": "one_hot"})"), kFeatures, {});
        QStringList shown = inspector.form()->visibleParams();
        QVERIFY(shown.contains("depth") && shown.contains("dtype") && shown.contains("features"));
        QVERIFY(!shown.contains("stddev") && !shown.contains("mean"));
        inspector.showNode("m", "map", object(R"({"function": "normalize"})"), kFeatures, {});
        shown = inspector.form()->visibleParams();
        QVERIFY(shown.contains("mean") && !shown.contains("depth"));
    }

    // A Python function's name: typed as "module:function" (anything else refused as typed), completed
    // from the functions the project's modules define, opened in its file, its docstring shown.
    void pythonFunctionsAreNamedCompletedAndDocumented()
    {
        QTemporaryDir folder, libraryFolder;
        const auto write = [](const QString &path, const QByteArray &text) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text);
        };
        write(folder.filePath("prep.py"), "import numpy as np\n\ndef scale(batch):\n    return batch\n\n"
                                          "def _helper():\n    pass\n\nclass K:\n    def method(self):\n        pass\n"
                                          "async def fetch(x):\n    pass\n");
        write(folder.filePath("_private.py"), "def hidden(b):\n    return b\n");
        write(libraryFolder.filePath("shared.py"), "def keep(b):\n    return True\n");
        QCOMPARE(CallableEditor::functionsIn("def a(x):\n  def inner(): pass\ndef  b (y): pass\n#def c(): pass\n"), QStringList({"a", "b"}));

        ParameterInspector inspector;
        inspector.showNode("m", "map", object(R"({"function": "python", "callable": "prep:scale"})"), kFeatures, folder.path(),
                           {folder.path(), libraryFolder.path()});
        QVERIFY(inspector.form()->visibleParams().contains("callable"));
        QVERIFY(inspector.form()->visibleParams().contains("output_signature"));
        auto *editor = editorOf<CallableEditor>(inspector, "callable");
        QVERIFY(editor);
        QCOMPARE(editor->completions(), QStringList({"prep:scale", "prep:fetch", "shared:keep"}));
        QCOMPARE(editor->lineEdit()->text(), QString("prep:scale"));
        // Not resolved yet: the module's file found in the folders opens.
        QCOMPARE(editor->fileToOpen(), folder.filePath("prep.py"));
        QVERIFY(editor->openButton()->isEnabled());

        QSignalSpy edited(&inspector, &ParameterInspector::parameterEdited);
        enterText(editor->lineEdit(), "prep.scale");
        QCOMPARE(edited.count(), 0);
        QVERIFY(editor->problem().contains("module:function"));
        enterText(editor->lineEdit(), "shared:keep");
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(2).toJsonValue(), QJsonValue("shared:keep"));
        QCOMPARE(editor->fileToOpen(), libraryFolder.filePath("shared.py"));
        enterText(editor->lineEdit(), "nowhere:f");
        QVERIFY(editor->fileToOpen().isEmpty());
        QVERIFY(!editor->openButton()->isEnabled());

        // The resolved function: its docstring under the form, its file behind Open.
        QVERIFY(inspector.functionDocLabel()->isHidden());
        inspector.setHostFunction("callable", "Scales pixels to [0, 1].\n\nArgs:\n  batch: <uint8> images", folder.filePath("prep.py"));
        QVERIFY(!inspector.functionDocLabel()->isHidden());
        QVERIFY(inspector.functionDocLabel()->text().contains("Scales pixels to [0, 1]."));
        QVERIFY(inspector.functionDocLabel()->text().contains("&lt;uint8&gt;")); // shown as written, not as markup
        QCOMPARE(editor->fileToOpen(), folder.filePath("prep.py"));
        inspector.setHostFunction("callable", "", folder.filePath("prep.py"));
        QVERIFY(inspector.functionDocLabel()->text().contains("no docstring"));
        inspector.setHostFunction({}, {}, {}); // the function stopped resolving
        QVERIFY(inspector.functionDocLabel()->isHidden());
        inspector.setHostFunction("callable", "doc", {});
        inspector.showNode("b", "batch", object(R"({"batch_size": 4})"), kFeatures, folder.path());
        QVERIFY(inspector.functionDocLabel()->isHidden()); // another stage: not its function

        // filter's predicate and from_generator's generator get the same editor.
        inspector.showNode("f", "filter", object(R"({"predicate": "shared:keep"})"), kFeatures, folder.path(), {folder.path()});
        QVERIFY(editorOf<CallableEditor>(inspector, "predicate"));
        inspector.showNode("g", "from_generator", object(R"({})"), {}, folder.path(), {folder.path()});
        QVERIFY(editorOf<CallableEditor>(inspector, "generator"));
        QVERIFY(editorOf<CallableEditor>(inspector, "generator")->lineEdit()->placeholderText().contains("module:function"));
    }

    void objectsOpenAMultiLineEditor()
    {
        ParameterInspector inspector;
        inspector.showNode("a", "from_csv", object(R"({"filenames": "a.csv", "column_defaults": {"x": 0}})"), {}, {});
        LineEditor *defaults = editorOf<LineEditor>(inspector, "column_defaults");
        QVERIFY(defaults->jsonButton());
        QVERIFY(!defaults->lineEdit()->text().contains('\n'));
        JsonDialog dialog(defaults->spec(), defaults->value(), nullptr);
        QVERIFY(dialog.textEdit()->toPlainText().contains("\n")); // indented, one key a line
        QPushButton *ok = dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
        QVERIFY(ok->isEnabled());
        dialog.textEdit()->setPlainText("{\"x\": ");
        QVERIFY(!ok->isEnabled());
        dialog.textEdit()->setPlainText("{\n  \"x\": 0,\n  \"y\": \"none\"\n}");
        QVERIFY(ok->isEnabled());
        QCOMPARE(dialog.value(), QJsonValue(object(R"({"x": 0, "y": "none"})")));
        // Lists and scalars keep their one-line editor.
        inspector.showNode("r", "map", object(R"({"function": "reshape"})"), kFeatures, {});
        QVERIFY(!editorOf<LineEditor>(inspector, "shape")->jsonButton());
    }

    void parsingRules()
    {
        const ParamSpec count = spec("count", "int", "-1");
        QCOMPARE(parseParamText(count, "-1").value.toInteger(), -1);
        QVERIFY(!parseParamText(count, "-2").ok());
        QVERIFY(parseParamText(count, "  ").value.isUndefined());
        const ParamSpec mean = spec("mean", "number|list|adapt", "0");
        QCOMPARE(parseParamText(mean, "adapt").value, QJsonValue("adapt"));
        QCOMPARE(parseParamText(mean, "[0.5, 1]").value, QJsonValue(QJsonArray{0.5, 1}));
        QCOMPARE(parseParamText(mean, "2").value, QJsonValue(2.0));
        QVERIFY(!parseParamText(mean, "abc").ok());
        const ParamSpec rate = spec("rate", "number", "");
        QVERIFY(!parseParamText(rate, "1").ok());
        QVERIFY(parseParamText(rate, "0.99").ok());
        const ParamSpec shape = spec("shape", "list", "");
        QCOMPARE(parseParamText(shape, "x, y").value, QJsonValue(QJsonArray{"x", "y"}));
        QVERIFY(!parseParamText(spec("target_shape", "list of int", ""), "[-1, -1]").ok());
        QCOMPARE(PathEditor::projectRelative(QDir::tempPath() + "/p/data/x.npy", QDir::tempPath() + "/p"), QString("data/x.npy"));
        QCOMPARE(PathEditor::projectRelative(QDir::tempPath() + "/q/x.npy", QDir::tempPath() + "/p"), QDir::tempPath() + "/q/x.npy");
        QCOMPARE(displayText(QJsonValue(0.1)), QString("0.1"));
        QCOMPARE(displayText(QJsonValue(1e-7)), QString("1e-07"));
    }
};

QTEST_MAIN(TestParameterInspector)
#include "tst_parameter_inspector.moc"
