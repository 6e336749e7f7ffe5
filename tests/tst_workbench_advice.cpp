// The workbench's Try Advice: after a profile whose verdict is a stage's compute (a map doing
// one call at a time while another core idles), Run ▸ Try Advice measures the change the advice
// names against the project as it is (off the GUI thread, the project untouched), shows the
// measured speed-up, and Apply sets the parameter as one step that Undo takes back.
#include "document/project_document.h"
#include "gui/main_window.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QAction>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

using namespace sluice;
using namespace sluice::test;

class TestWorkbenchAdvice : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

    QString path(const QString &name) const { return m_dir.filePath(name); }

    static int parallelCalls(gui::MainWindow &window)
    {
        const PipelineNode *n = window.document()->project().findNode("noise");
        return n && n->params.contains("num_parallel_calls") ? n->params["num_parallel_calls"].get<int>() : 0;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("sluice-tests");
        QCoreApplication::setApplicationName("sluice-advice");
        QSettings().clear();
        std::vector<float> values(256 * 4096);
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = float(i % 997) * 0.001f;
        writeNpy(path("x.npy").toStdString(), values, {4096});
    }

    void triesTheAdviceAndAppliesItUndoably()
    {
        if (QThread::idealThreadCount() < 2)
            QSKIP("one core: a second parallel call has nothing to gain, so no advice to try");
        // Noise over 4 rows of 4096 values per batch, one call at a time, nothing after it: the
        // map's own work is the whole pipeline's.
        const std::string pipeline =
            chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("b", "batch", {{"batch_size", 4}}),
                   op("noise", "map", {{"function", "gaussian_noise"}, {"features", nlohmann::json::array({"x"})}, {"stddev", 1.0},
                                       {"seed", 1}, {"num_parallel_calls", 1}})});
        writeFile(path("noise.sluice").toStdString(), projectText(pipeline));
        gui::MainWindow window;
        window.show();
        QVERIFY(window.openProject(path("noise.sluice")));
        QAction *tryIt = window.action("tryAdvice");
        QVERIFY(tryIt);
        QVERIFY(!tryIt->isEnabled()); // no profile yet: no advice

        // A profile: its verdict names the map, and the change its advice stands for.
        window.startRun();
        QTRY_COMPARE_WITH_TIMEOUT(window.lastAdvice().value("node").toString(), QString("noise"), 30000);
        QVERIFY(!tryIt->isEnabled()); // not while the profile runs
        window.stopRun();
        QTRY_VERIFY_WITH_TIMEOUT(!window.runSession()->isRunning(), 30000);
        QVERIFY(tryIt->isEnabled());
        const QJsonObject advice = window.lastAdvice(); // the final snapshot's
        QCOMPARE(advice.value("node").toString(), QString("noise"));
        QCOMPARE(advice.value("param").toString(), QString("num_parallel_calls"));
        QCOMPARE(advice.value("from").toInt(), 1);
        QVERIFY2(advice.value("to").toInt() >= 2, qPrintable(QJsonDocument(advice).toJson()));

        // Tried: measured against the project as it is, which stays as it was.
        const std::string saved = readFile(path("noise.sluice").toStdString());
        QSignalSpy tried(window.adviceJob(), &bridge::AdviceTrialJob::finished);
        tryIt->trigger();
        QVERIFY(window.adviceJob()->isRunning());
        QVERIFY(!tryIt->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(tried.count(), 1, 120000);
        const QJsonObject trial = window.lastAdviceTrial();
        QCOMPARE(trial.value("rounds").toArray().size(), 3);
        QVERIFY(trial.value("speedup").toDouble() > 0);
        QCOMPARE(readFile(path("noise.sluice").toStdString()), saved);
        QCOMPARE(parallelCalls(window), 1);
        QVERIFY(window.document()->undoStack()->count() == 0);

        // The result, with Apply (named "Apply Anyway" when it measured no gain).
        QMessageBox *box = window.findChild<QMessageBox *>("adviceResult");
        QVERIFY(box);
        QVERIFY2(box->text().contains("set noise.num_parallel_calls from 1 to"), qPrintable(box->text()));
        QVERIFY2(box->text().contains(trial.value("helps").toBool() ? "it helps" : "no gain"), qPrintable(box->text()));
        auto *apply = box->findChild<QPushButton *>("applyAdvice");
        QVERIFY(apply);
        apply->click();
        QCOMPARE(parallelCalls(window), advice.value("to").toInt());
        QCOMPARE(window.document()->undoStack()->count(), 1);
        QVERIFY(window.document()->isDirty());
        window.action("undo")->trigger();
        QCOMPARE(parallelCalls(window), 1);
        window.action("redo")->trigger();
        QCOMPARE(parallelCalls(window), advice.value("to").toInt());
    }

    void applyingToAStageNoLongerThereChangesNothing()
    {
        gui::MainWindow window;
        QVERIFY(window.openProject(path("noise.sluice")));
        window.applyAdvice(QJsonObject{{"node", "gone"}, {"param", "num_parallel_calls"}, {"to", 2}, {"text", "set gone"}});
        QCOMPARE(window.document()->undoStack()->count(), 0); // a stage no longer there: nothing changes
    }
};

QTEST_MAIN(TestWorkbenchAdvice)
#include "tst_workbench_advice.moc"
