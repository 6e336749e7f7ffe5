// Runs belong to their project in the workbench: opening a project shows its newest run (labelled
// with its time and status), switching to another clears the charts, the verdict and the
// overlays; Compare lists this project's other runs (never another project's sharing the folder,
// never the current one) with their status and final loss, and overlays come off again. The
// runs are real ones, made by `sluice run --out`.
#include "charts/charts_panel.h"
#include "charts/loss_chart.h"
#include "gui/compare_runs_dialog.h"
#include "gui/main_window.h"
#include "support/dialog_answerer.h"
#include "train/interchange/onnx_export.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"
#include "support/train_test_support.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QSignalSpy>
#include <QLabel>
#include <QLocale>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QtTest>

using namespace sluice;
using namespace sluice::test;

namespace {

// The "loss" column of the last row of a run's metrics.csv, as the CLI wrote it.
double lastEpochLoss(const QString &runFolder)
{
    QFile file(runFolder + "/metrics.csv");
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        return -1;
    const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
    const int column = int(lines.first().split(',').indexOf("loss"));
    return column < 0 ? -1 : lines.last().split(',')[column].toDouble();
}

} // namespace

class TestWorkbenchRuns : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

    QString path(const QString &name) const { return m_dir.filePath(name); }

    void writeProject(const QString &name, int epochs)
    {
        nlohmann::json doc = trainingProject(mlpModel(), {{"epochs", epochs}, {"seed", 1}}, 8);
        doc["name"] = name.toStdString();
        writeFile(path(name + ".sluice").toStdString(), doc.dump(2));
    }

    void runWithCli(const QString &project, const QString &runName)
    {
        QProcess cli;
        cli.start(QString::fromStdString(sluiceBinary()), {"run", path(project + ".sluice"), "--out", path("runs/" + runName)});
        QVERIFY(cli.waitForFinished(120000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    }

    // Runs `answer` on the Compare dialog once it is open (it is modal: exec() returns after).
    void whenCompareOpens(gui::MainWindow &window, const std::function<void(gui::CompareRunsDialog &)> &answer)
    {
        bool answered = false;
        QTimer::singleShot(0, &window, [&] {
            auto *dialog = qobject_cast<gui::CompareRunsDialog *>(QApplication::activeModalWidget());
            QVERIFY(dialog);
            answered = true;
            answer(*dialog);
        });
        window.action("overlay")->trigger();
        QVERIFY(answered);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("sluice-tests-runs");
        QCoreApplication::setApplicationName("sluice");
        writeTrainingData(m_dir.path().toStdString(), 64);
        writeProject("alpha", 2);
        writeProject("beta", 1);
        writeProject("gamma", 1); // never run
        runWithCli("alpha", "20261101-100000");
        runWithCli("alpha", "20261102-100000");
        runWithCli("beta", "20261103-100000"); // newest in the folder, but another project's
    }

    void openingAProjectShowsItsNewestRun()
    {
        gui::MainWindow window;
        window.show();
        QVERIFY(window.openProject(path("alpha.sluice")));
        const QString newest = QDir::cleanPath(path("runs/20261102-100000"));
        QCOMPARE(window.charts()->currentRunFolder(), newest);
        QCOMPARE(window.lastRunFolder(), newest);
        QVERIFY(window.charts()->lossChart()->pointCount() > 0);
        const QString title = window.charts()->findChild<QLabel *>("runTitle")->text();
        const QString started = QLocale().toString(QDateTime(QDate(2026, 11, 2), QTime(10, 0)), "d MMM yyyy HH:mm");
        QVERIFY2(title.contains("Last run:") && title.contains(started) && title.contains("training · ok"), qPrintable(title));
    }

    void switchingProjectClearsTheRun()
    {
        gui::MainWindow window;
        window.show();
        QVERIFY(window.openProject(path("alpha.sluice")));
        QVERIFY(window.charts()->overlayRun(path("runs/20261101-100000")).ok());
        QVERIFY(window.charts()->hasData());
        QVERIFY(window.openProject(path("gamma.sluice")));
        QVERIFY(!window.charts()->hasData());
        QVERIFY(window.charts()->overlays().isEmpty());
        QVERIFY(window.charts()->currentRunFolder().isEmpty());
        QCOMPARE(window.charts()->findChild<QLabel *>("runTitle")->text(), QString("No run yet"));
        QVERIFY(window.inputBoundText().isEmpty());
        QVERIFY(window.lastRunFolder().isEmpty());
        // Beta shows its own run, and alpha's newest is no longer the current one.
        QVERIFY(window.openProject(path("beta.sluice")));
        QCOMPARE(window.charts()->currentRunFolder(), QDir::cleanPath(path("runs/20261103-100000")));
    }

    void exportModelWritesTheShownRunsModel()
    {
        gui::MainWindow window;
        window.show();
        QVERIFY(window.openProject(path("gamma.sluice"))); // never run: nothing to export
        QVERIFY(!window.action("exportModel")->isEnabled());
        QVERIFY(window.openProject(path("alpha.sluice")));
        QVERIFY(window.action("exportModel")->isEnabled());
        QVERIFY(QDir().mkpath(path("exported")));
        const QString out = QDir::cleanPath(path("exported/alpha.safetensors"));
        QTimer::singleShot(0, &window, [&] { // the action asks where: answer its file dialog
            auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
            QVERIFY(dialog);
            dialog->selectFile(out);
            QMetaObject::invokeMethod(dialog, "accept"); // a slot, protected in QFileDialog
        });
        QSignalSpy done(window.exportJob(), &bridge::ModelExportJob::finished);
        window.action("exportModel")->trigger();
        QVERIFY(done.wait(60000));
        QCOMPARE(done.first().at(0).toString(), out);
        QFile weights(out), modelPy(path("exported/model.py"));
        QVERIFY(weights.open(QIODevice::ReadOnly) && modelPy.open(QIODevice::ReadOnly));
        const QByteArray header = weights.read(4096);
        for (const char *name : {"d1/kernel", "d1/bias", "d2/kernel", "d2/bias"})
            QVERIFY2(header.contains(name), name);
        QVERIFY(modelPy.readLine().startsWith("# Generated by sluice export"));
        QVERIFY(window.action("exportModel")->isEnabled()); // again, once done

        // A .keras name picks Keras's format: an archive of metadata, config and weights.
        const QString archive = QDir::cleanPath(path("exported/alpha.keras"));
        QSignalSpy kerasDone(window.exportJob(), &bridge::ModelExportJob::finished);
        window.exportModelTo(archive);
        QVERIFY(kerasDone.wait(60000));
        QVERIFY(kerasDone.first().at(1).toString().isEmpty()); // no model.py for a .keras archive
        const std::string bytes = readFile(archive.toStdString());
        for (const char *member : {"metadata.json", "config.json", "model.weights.h5"})
            QVERIFY2(bytes.find(member) != std::string::npos, member);
        // And .onnx an ONNX graph (a protobuf message naming its producer), where built in.
        if (train::onnxExportAvailable()) {
            const QString graph = QDir::cleanPath(path("exported/alpha.onnx"));
            QSignalSpy onnxDone(window.exportJob(), &bridge::ModelExportJob::finished);
            window.exportModelTo(graph);
            QVERIFY(onnxDone.wait(60000));
            QVERIFY(readFile(graph.toStdString()).find("sluice") != std::string::npos);
        }

        // A model.py the user wrote is never overwritten: the export is refused, and says why.
        QVERIFY(QDir().mkpath(path("mine")));
        writeFile(path("mine/model.py").toStdString(), "print('mine')\n");
        DialogAnswerer answerer(QMessageBox::Ok);
        QSignalSpy failed(window.exportJob(), &bridge::ModelExportJob::failed);
        window.exportModelTo(path("mine/w.safetensors"));
        QVERIFY(failed.wait(60000));
        QVERIFY2(failed.first().at(0).toString().contains("not written by sluice export"), qPrintable(failed.first().at(0).toString()));
        QCOMPARE(answerer.texts.size(), 1);
        QVERIFY(!QFile::exists(path("mine/w.safetensors")));
        QCOMPARE(readFile(path("mine/model.py").toStdString()), std::string("print('mine')\n"));
    }

    void compareListsThisProjectsOtherRunsAndOverlaysComeOff()
    {
        gui::MainWindow window;
        window.show();
        QVERIFY(window.openProject(path("alpha.sluice")));
        const QString older = QDir::cleanPath(path("runs/20261101-100000"));
        whenCompareOpens(window, [&](gui::CompareRunsDialog &dialog) {
            QTreeWidget *list = dialog.list();
            QCOMPARE(list->topLevelItemCount(), 1); // not the current run, not beta's
            QTreeWidgetItem *run = list->topLevelItem(0);
            QCOMPARE(run->text(0), QString("20261101-100000"));
            QCOMPARE(run->text(2), QString("training"));
            QCOMPARE(run->text(3), QString("ok"));
            QCOMPARE(run->text(4), QLocale().toString(lastEpochLoss(older), 'g', 5));
            QCOMPARE(run->checkState(0), Qt::Unchecked);
            list->setFocus();
            list->setCurrentItem(run);
            QTest::keyClick(list, Qt::Key_Space); // checks it
            QCOMPARE(run->checkState(0), Qt::Checked);
            QTest::keyClick(list, Qt::Key_Return); // OK
        });
        QCOMPARE(window.charts()->overlays(), QStringList{older});
        QVERIFY(window.charts()->findChild<QLabel *>("runTitle")->text().contains("past runs overlaid: 1"));

        whenCompareOpens(window, [&](gui::CompareRunsDialog &dialog) {
            QTreeWidgetItem *run = dialog.list()->topLevelItem(0);
            QCOMPARE(run->checkState(0), Qt::Checked); // shown as overlaid
            dialog.list()->setFocus();
            dialog.list()->setCurrentItem(run);
            QTest::keyClick(dialog.list(), Qt::Key_Space);
            QTest::keyClick(dialog.list(), Qt::Key_Return);
        });
        QVERIFY(window.charts()->overlays().isEmpty());
        QVERIFY(!window.charts()->findChild<QLabel *>("runTitle")->text().contains("overlaid"));
    }
};

QTEST_MAIN(TestWorkbenchRuns)
#include "tst_workbench_runs.moc"
