// from_npy's features as a table, with real keys and mouse: the project's object shown a row a
// feature; a feature typed into the empty row; Browse… adding several .npy files at once, each a
// feature named after its file, relative to the project; "a; b" as a list of files; Remove; and
// the JSON editor still there. Every edit commits the whole object, as the project file holds it.
#include "inspector/feature_table_editor.h"
#include "inspector/parameter_inspector.h"
#include "inspector/param_form.h"
#include "support/table_input.h"
#include "support/test_support.h"

#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QtTest>

using namespace sluice::widgets;
using sluice::test::typeIntoCell;

namespace {

QJsonObject object(const char *json) { return QJsonDocument::fromJson(json).object(); }

} // namespace

class TestFeatureTableEditor : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<ParameterInspector> m_inspector;
    FeatureTableEditor *m_editor = nullptr;

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_inspector = std::make_unique<ParameterInspector>();
        m_inspector->showNode("src", "from_npy", object(R"({"features": {"x": "data/x.npy"}})"), {}, m_dir.path());
        m_inspector->resize(500, 400);
        m_inspector->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_inspector.get()));
        m_editor = qobject_cast<FeatureTableEditor *>(m_inspector->form()->editor("features"));
        QVERIFY(m_editor);
    }

    void cleanup() { m_inspector.reset(); }

    void showsAFeatureARowAndTakesTypedOnes()
    {
        QTableWidget *table = m_editor->table();
        QCOMPARE(table->rowCount(), 2); // x, and an empty row to type into
        QCOMPARE(table->item(0, 0)->text(), QString("x"));
        QCOMPARE(table->item(0, 1)->text(), QString("data/x.npy"));
        QSignalSpy edited(m_inspector.get(), &ParameterInspector::parameterEdited);
        typeIntoCell(table, 1, 0, "y");
        QCOMPARE(edited.size(), 0); // a name without a file is not a feature yet
        typeIntoCell(table, 1, 1, "data/y_*.npy");
        QCOMPARE(edited.size(), 1);
        QCOMPARE(edited.last().at(2).toJsonValue(), QJsonValue(object(R"({"x": "data/x.npy", "y": "data/y_*.npy"})")));
        QTRY_COMPARE(table->rowCount(), 3); // an empty row again for the next one
        // Several files: "a; b" is a list.
        const int last = table->rowCount() - 1;
        typeIntoCell(table, last, 0, "z");
        typeIntoCell(table, last, 1, "z0.npy; z1.npy");
        QCOMPARE(edited.last().at(2).toJsonValue().toObject().value("z"), QJsonValue(QJsonArray{"z0.npy", "z1.npy"}));
        QCOMPARE(table->item(2, 1)->text(), QString("z0.npy; z1.npy"));
    }

    void browseAddsAFeatureAFile()
    {
        QVERIFY(QDir().mkpath(m_dir.filePath("data")));
        for (const char *name : {"pixels.npy", "labels.npy"})
            sluice::test::writeFile(m_dir.filePath(QString("data/") + name).toStdString(), "not read here");
        QSignalSpy edited(m_inspector.get(), &ParameterInspector::parameterEdited);
        // The file dialog, once open: both files picked by typing their names, as in any file dialog.
        QTimer poll;
        bool answered = false;
        connect(&poll, &QTimer::timeout, this, [&] {
            auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
            if (!dialog)
                return;
            if (answered) { // still open after the answer: it refused the files; fail, don't hang
                dialog->reject();
                return;
            }
            answered = true;
            dialog->setDirectory(m_dir.filePath("data"));
            if (auto *name = dialog->findChild<QLineEdit *>("fileNameEdit")) {
                name->setText("\"pixels.npy\" \"labels.npy\"");
                QTest::keyClick(name, Qt::Key_Return);
            } else {
                dialog->reject();
            }
        });
        poll.start(20);
        QTest::mouseClick(m_editor->browseButton(), Qt::LeftButton);
        QVERIFY(answered);
        QVERIFY(!edited.isEmpty());
        QCOMPARE(edited.last().at(2).toJsonValue(),
                 QJsonValue(object(R"({"x": "data/x.npy", "pixels": "data/pixels.npy", "labels": "data/labels.npy"})")));
        QCOMPARE(m_editor->table()->rowCount(), 4);
    }

    void removeDropsTheSelectedRows()
    {
        m_editor->addFiles({m_dir.filePath("a.npy"), m_dir.filePath("a.npy")}); // the same name twice: made unique
        QCOMPARE(m_editor->tableValue(), object(R"({"x": "data/x.npy", "a": "a.npy", "a_2": "a.npy"})"));
        QSignalSpy edited(m_inspector.get(), &ParameterInspector::parameterEdited);
        QTableWidget *table = m_editor->table();
        table->setFocus();
        const int aRow = table->findItems("a", Qt::MatchExactly).first()->row();
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualItemRect(table->item(aRow, 0)).center());
        QTest::mouseClick(m_editor->removeButton(), Qt::LeftButton);
        QCOMPARE(edited.last().at(2).toJsonValue(), QJsonValue(object(R"({"x": "data/x.npy", "a_2": "a.npy"})")));
        QVERIFY(m_editor->jsonButton()->isVisible()); // the expert's editor stays
    }
};

QTEST_MAIN(TestFeatureTableEditor)
#include "tst_feature_table_editor.moc"
