// Python functions in the workbench, run by the interpreter the sluice executable embeds (the
// system's Python and its numpy): a map naming "module:function" builds and shows the
// function's docstring and file; a module that does not import is an error on the stage that
// names it, and saving the module fixed clears it without an edit of the project; a changed
// module is what the next preview and run use; an exception inside the function fails the run
// with its traceback and the node named.
#include "canvas/node_item.h"
#include "canvas/pipeline_scene.h"
#include "console/run_console.h"
#include "document/project_document.h"
#include "embedded_python.h"
#include "gui/main_window.h"
#include "inspector/callable_editor.h"
#include "inspector/param_form.h"
#include "inspector/parameter_inspector.h"
#include "preview/preview_panel.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QAction>
#include <QLabel>
#include <QSettings>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace sluice;
using namespace sluice::test;

namespace {

// A module whose function multiplies the batch by `factor`, with a docstring that says so. Each
// version differs in size too, so that a save is seen even within one timestamp tick.
std::string scalingModule(int factor)
{
    return "import numpy as np\n\n\ndef scale(batch):\n    \"\"\"Multiplies each value by " + std::to_string(factor) +
           ".\n\n    Returns a dict of numpy arrays, as every map function does.\n    \"\"\"\n"
           "    return {\"value\": batch[\"value\"] * np.int64(" + std::to_string(factor) + ")}\n";
}

} // namespace

class TestWorkbenchPython : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

    QString path(const QString &name) const { return m_dir.filePath(name); }

    void writeModule(const std::string &text) { writeFile(path("prep.py").toStdString(), text); }

    // Waits for the validator's verdict on stage `id`: its error (empty once it builds).
    static QString stageError(gui::MainWindow &window, const QString &id) { return window.scene()->node(id)->error(); }

    static QString firstPreviewCell(gui::MainWindow &window)
    {
        QTableWidget *table = window.previewPanel()->table();
        return table->rowCount() > 0 && table->item(0, 0) ? table->item(0, 0)->text() : QString();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("sluice-tests");
        QCoreApplication::setApplicationName("sluice-python");
        QSettings().clear();
        app::offerEmbeddedPython(); // as main() does: the interpreter starts with the first Python stage
    }

    void editsDocumentsReloadsAndReportsPythonFunctions()
    {
        writeModule(scalingModule(10));
        const std::string pipeline = chain({op("src", "range", {{"stop", 6}}), op("b", "batch", {{"batch_size", 3}}),
                                            op("m", "map", {{"function", "python"}, {"callable", "prep:scale"}})});
        writeFile(path("scaled.sluice").toStdString(), projectText(pipeline));
        gui::MainWindow window;
        window.show();
        QVERIFY(window.openProject(path("scaled.sluice")));

        // It builds: the map emits what the function returns, its docstring and file are shown.
        QTRY_VERIFY_WITH_TIMEOUT(window.scene()->node("m")->features().contains("value"), 60000);
        QCOMPARE(stageError(window, "m"), QString());
        window.scene()->selectNodes({"m"});
        widgets::ParameterInspector *inspector = window.inspector();
        QTRY_VERIFY(!inspector->functionDocLabel()->isHidden());
        QVERIFY2(inspector->functionDocLabel()->text().contains("Multiplies each value by 10."), qPrintable(inspector->functionDocLabel()->text()));
        auto *editor = qobject_cast<widgets::CallableEditor *>(inspector->form()->editor("callable"));
        QVERIFY(editor);
        QCOMPARE(QFileInfo(editor->fileToOpen()).canonicalFilePath(), QFileInfo(path("prep.py")).canonicalFilePath());
        QVERIFY(editor->completions().contains("prep:scale"));

        window.action("preview")->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(firstPreviewCell(window), QString("(3,)  [0, 10, 20]"), 30000);

        // The module saved with another factor: checked again without an edit of the project, and
        // the next preview uses it.
        writeModule(scalingModule(100));
        QTRY_VERIFY_WITH_TIMEOUT(inspector->functionDocLabel()->text().contains("Multiplies each value by 100."), 30000);
        window.action("preview")->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(firstPreviewCell(window), QString("(3,)  [0, 100, 200]"), 30000);

        // A module that does not import: an error on the stage, on its callable, naming the cause.
        writeModule("import a_module_nobody_has\n" + scalingModule(100));
        QTRY_VERIFY_WITH_TIMEOUT(stageError(window, "m").contains("a_module_nobody_has"), 30000);
        QVERIFY2(stageError(window, "m").startsWith("callable: "), qPrintable(stageError(window, "m")));
        QTRY_VERIFY(inspector->form()->messageLabel("callable")->text().contains("a_module_nobody_has"));
        QVERIFY(inspector->functionDocLabel()->isHidden());
        // A run fails at once, saying why.
        QVERIFY(window.save());
        window.startRun();
        QTRY_VERIFY_WITH_TIMEOUT(window.hasFinishedRun() && !window.runSession()->isRunning(), 30000);
        QVERIFY(!window.lastRunOk());
        QVERIFY(window.console()->lines().join('\n').contains("a_module_nobody_has"));

        // Fixed and saved: the error leaves the stage by itself.
        writeModule(scalingModule(7));
        QTRY_VERIFY_WITH_TIMEOUT(stageError(window, "m").isEmpty() && window.scene()->node("m")->features().contains("value"), 30000);
        QTRY_VERIFY(inspector->functionDocLabel()->text().contains("Multiplies each value by 7."));

        // A function that raises while running: the run fails with the traceback and the node named.
        writeModule(scalingModule(7) + "\n\ndef explode(batch):\n    if batch[\"value\"].max() > 2:\n"
                                       "        raise ValueError(\"value out of range in the test\")\n    return batch\n");
        window.document()->setParameter("m", "callable", "prep:explode");
        QTRY_VERIFY_WITH_TIMEOUT(inspector->functionDocLabel()->text().contains("prep:explode has no docstring"), 30000);
        QCOMPARE(stageError(window, "m"), QString());
        QVERIFY(window.save());
        window.console()->clear();
        window.startRun();
        QVERIFY(window.runSession()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(window.console()->lines().join('\n').contains("ValueError"), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.runSession()->isRunning(), 30000);
        QVERIFY(!window.lastRunOk());
        const QString console = window.console()->lines().join('\n');
        QVERIFY2(console.contains("ValueError: value out of range in the test"), qPrintable(console));
        QVERIFY2(console.contains("Traceback") && console.contains("prep.py"), qPrintable(console));
        QVERIFY2(console.contains("node \"m\""), qPrintable(console));
        window.document()->undoStack()->setClean(); // nothing to ask on close
    }
};

QTEST_MAIN(TestWorkbenchPython)
#include "tst_workbench_python.moc"
