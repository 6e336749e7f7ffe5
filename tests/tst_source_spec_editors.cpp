// The file sources' spec tables in the inspector, with real keys and mouse:
//   - from_tfrecord: Read from File fills the features from the TensorFlow-written fixture
//     (what tf.train.Example holds: x 3 floats, label one int64, name one string; tokens varies
//     in length and is named as not read); a shape typed and a dtype picked commit the spec;
//   - from_csv: Read Header fills the columns and their dtypes from a file written here;
//   - from_npz: the archive's members listed and checked as soon as it is named; unchecking one
//     commits the others, checking it again goes back to all;
//   - nothing to read: a message naming the parameter.
#include "inspector/parameter_inspector.h"
#include "inspector/param_form.h"
#include "inspector/source_spec_editors.h"
#include "support/table_input.h"
#include "support/test_support.h"

#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLineEdit>
#include <QListWidget>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

using namespace sluice::widgets;
using sluice::test::typeIntoCell;

namespace {

QJsonObject object(const char *json) { return QJsonDocument::fromJson(json).object(); }

int rowOf(QTableWidget *table, const QString &key)
{
    const auto items = table->findItems(key, Qt::MatchExactly);
    return items.isEmpty() ? -1 : items.first()->row();
}

} // namespace

class TestSourceSpecEditors : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<ParameterInspector> m_inspector;

    template <typename Editor>
    Editor *show(const QString &op, const QJsonObject &params, const QString &param)
    {
        m_inspector = std::make_unique<ParameterInspector>();
        m_inspector->showNode("src", op, params, {}, m_dir.path());
        m_inspector->resize(560, 520);
        m_inspector->show();
        if (!QTest::qWaitForWindowExposed(m_inspector.get()))
            return nullptr;
        return qobject_cast<Editor *>(m_inspector->form()->editor(param));
    }

private Q_SLOTS:
    void cleanup() { m_inspector.reset(); }

    void tfRecordSpecIsReadFromTheRecords()
    {
        const QString file = QString::fromStdString(sluice::test::dataFile("tfrecord/plain.tfrecord"));
        auto *editor = show<TfRecordSpecEditor>("from_tfrecord", QJsonObject{{"filenames", file}}, "features");
        QVERIFY(editor);
        QTableWidget *table = editor->table();
        QCOMPARE(table->rowCount(), 1); // just the row to type into
        QSignalSpy edited(m_inspector.get(), &ParameterInspector::parameterEdited);
        QTest::mouseClick(editor->fillButton(), Qt::LeftButton);
        QTRY_VERIFY(!edited.isEmpty()); // read on a thread of its own
        QCOMPARE(edited.last().at(2).toJsonValue(), QJsonValue(object(R"({"x": {"dtype": "float32", "shape": [3]},
            "label": {"dtype": "int64", "shape": []}, "name": {"dtype": "string", "shape": []}})")));
        QVERIFY2(editor->problem().contains("\"tokens\" has 1 to 5 values per record"), qPrintable(editor->problem()));
        QVERIFY(editor->fillButton()->isEnabled());
        QCOMPARE(table->rowCount(), 4);
        QCOMPARE(table->item(rowOf(table, "x"), 2)->text(), QString("3"));

        // A shape typed, a dtype picked with the keyboard, a default typed: each commits the spec.
        typeIntoCell(table, rowOf(table, "x"), 2, "[3, 1]");
        QCOMPARE(edited.last().at(2).toJsonValue()["x"]["shape"], QJsonValue(QJsonArray{3, 1}));
        auto *dtype = qobject_cast<QComboBox *>(table->cellWidget(rowOf(table, "label"), 1));
        QVERIFY(dtype);
        dtype->setFocus();
        QTest::keyClick(dtype, Qt::Key_Up); // int64 → float32
        QCOMPARE(edited.last().at(2).toJsonValue()["label"]["dtype"], QJsonValue("float32"));
        typeIntoCell(table, rowOf(table, "name"), 3, "unknown");
        QCOMPARE(edited.last().at(2).toJsonValue()["name"]["default_value"], QJsonValue("unknown"));
        // A shape that is not one is said and not committed (x stays in the project).
        const qsizetype before = edited.size();
        typeIntoCell(table, rowOf(table, "x"), 2, "three");
        QCOMPARE(edited.size(), before);
        QVERIFY2(editor->problem().startsWith("x: the shape \"three\""), qPrintable(editor->problem()));
        typeIntoCell(table, rowOf(table, "x"), 2, "3");
        QCOMPARE(editor->problem(), QString());
        QCOMPARE(edited.last().at(2).toJsonValue()["x"]["shape"], QJsonValue(QJsonArray{3}));
    }

    void csvColumnsAreReadFromTheHeader()
    {
        sluice::test::writeFile(m_dir.filePath("rows.csv").toStdString(), "age,height,city\n31,1.82,Oslo\n45,1.70,Lima\n");
        auto *editor = show<CsvColumnsEditor>("from_csv", QJsonObject{{"filenames", "rows.csv"}}, "columns");
        QVERIFY(editor);
        QCOMPARE(editor->sourceFile(), m_dir.filePath("rows.csv"));
        QSignalSpy edited(m_inspector.get(), &ParameterInspector::parameterEdited);
        QTest::mouseClick(editor->fillButton(), Qt::LeftButton);
        QTRY_VERIFY(!edited.isEmpty());
        QCOMPARE(edited.last().at(2).toJsonValue(), QJsonValue(object(R"({"age": "int64", "height": "float32", "city": "string"})")));
        QCOMPARE(editor->problem(), QString());
        // The dtype picked by keyboard.
        auto *dtype = qobject_cast<QComboBox *>(editor->table()->cellWidget(rowOf(editor->table(), "age"), 1));
        QVERIFY(dtype);
        dtype->setFocus();
        QTest::keyClick(dtype, Qt::Key_Down); // int64 → string
        QCOMPARE(edited.last().at(2).toJsonValue()["age"], QJsonValue("string"));
        // A list of names, as projects may hold it, shows a float32 column each.
        auto *listed = show<CsvColumnsEditor>("from_csv", QJsonObject{{"filenames", "rows.csv"}, {"columns", QJsonArray{"age", "height"}}}, "columns");
        QVERIFY(listed);
        QCOMPARE(listed->tableValue(), object(R"({"age": "float32", "height": "float32"})"));
    }

    void npzMembersAreListedAndChecked()
    {
        const QString archive = QString::fromStdString(sluice::test::fixture("deflated.npz"));
        auto *editor = show<NpzMembersEditor>("from_npz", QJsonObject{{"path", archive}}, "members");
        QVERIFY(editor);
        QListWidget *list = editor->list();
        QTRY_COMPARE(list->count(), 3);
        for (int i = 0; i < 3; ++i)
            QCOMPARE(list->item(i)->checkState(), Qt::Checked); // not set: all
        QSignalSpy edited(m_inspector.get(), &ParameterInspector::parameterEdited);
        // Space on the current item toggles it, as in any checkable list.
        list->setFocus();
        list->setCurrentRow(2);
        QCOMPARE(list->item(2)->text(), QString("weights"));
        QTest::keyClick(list, Qt::Key_Space);
        QCOMPARE(edited.size(), 1);
        QCOMPARE(edited.last().at(2).toJsonValue(), QJsonValue(QJsonArray{"features", "labels"}));
        QTest::keyClick(list, Qt::Key_Space);
        QCOMPARE(edited.last().at(2).toJsonValue(), QJsonValue(QJsonValue::Undefined)); // all again: the default
        // A member the project names that the archive lacks is shown, unchecked members too.
        auto *named = show<NpzMembersEditor>("from_npz", QJsonObject{{"path", archive}, {"members", QJsonArray{"labels", "gone"}}}, "members");
        QVERIFY(named);
        QTRY_COMPARE(named->list()->count(), 4);
        QCOMPARE(named->list()->findItems("gone", Qt::MatchExactly).first()->checkState(), Qt::Checked);
        QCOMPARE(named->list()->findItems("features", Qt::MatchExactly).first()->checkState(), Qt::Unchecked);
    }

    void nothingToReadSaysWhichParameter()
    {
        auto *editor = show<TfRecordSpecEditor>("from_tfrecord", QJsonObject{{"filenames", "missing-*.tfrecord"}}, "features");
        QVERIFY(editor);
        QTest::mouseClick(editor->fillButton(), Qt::LeftButton);
        QVERIFY2(editor->problem().contains("\"filenames\" names no existing file"), qPrintable(editor->problem()));
    }
};

QTEST_MAIN(TestSourceSpecEditors)
#include "tst_source_spec_editors.moc"
