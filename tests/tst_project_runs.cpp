// The runs of a project (widgets/charts/project_runs.h): only those whose kept project copy bears
// the project's name, newest first, each with its start, kind, status and final loss, read from
// run folders as `sluice run --out` and the workbench write them.
#include "charts/project_runs.h"
#include "support/test_support.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

using namespace sluice;
using namespace sluice::test;

class TestProjectRuns : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

    // A run folder runs/<name> of project `project` with these events.jsonl lines.
    QString writeRun(const QString &name, const QString &project, const std::string &events)
    {
        const QString folder = m_dir.filePath("runs/" + name);
        QDir().mkpath(folder);
        writeFile((folder + "/project.sluice").toStdString(),
                  R"({"format": "sluice-project", "version": 1, "name": ")" + project.toStdString() + R"("})");
        writeFile((folder + "/events.jsonl").toStdString(), events);
        return QDir::cleanPath(folder);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        writeRun("20261101-090000", "alpha",
                 "{\"event\":\"run_start\",\"parameters\":10}\n"
                 "{\"event\":\"step\",\"step\":1,\"loss\":2.5}\n"
                 "{\"event\":\"epoch_end\",\"epoch\":0,\"step\":1,\"loss\":2.0}\n"
                 "{\"event\":\"step\",\"step\":2,\"loss\":1.5}\n"
                 "{\"event\":\"epoch_end\",\"epoch\":1,\"step\":2,\"loss\":1.25}\n"
                 "{\"event\":\"run_end\",\"status\":\"ok\",\"step\":2}\n");
        // Killed mid-run: no run_end, the last line cut short; the last step's loss stands.
        writeRun("20261103-090000", "alpha",
                 "{\"event\":\"run_start\",\"parameters\":10}\n"
                 "{\"event\":\"step\",\"step\":1,\"loss\":3.5}\n"
                 "{\"event\":\"step\",\"st");
        writeRun("20261102-090000", "alpha",
                 "{\"event\":\"run_start\",\"kind\":\"pipeline\",\"output\":\"prefetch\"}\n"
                 "{\"event\":\"run_end\",\"status\":\"cancelled\"}\n");
        writeRun("20261104-090000", "beta", "{\"event\":\"run_end\",\"status\":\"failed\",\"error\":\"x\"}\n");
        QDir().mkpath(m_dir.filePath("runs/empty-folder")); // not a run
    }

    void listsOnlyTheProjectsRunsNewestFirst()
    {
        const QList<widgets::RunSummary> runs = widgets::projectRuns(m_dir.path(), "alpha");
        QCOMPARE(runs.size(), 3);
        QCOMPARE(runs[0].name, QString("20261103-090000"));
        QCOMPARE(runs[1].name, QString("20261102-090000"));
        QCOMPARE(runs[2].name, QString("20261101-090000"));
        QCOMPARE(runs[2].started, QDateTime(QDate(2026, 11, 1), QTime(9, 0)));
        QCOMPARE(runs[2].folder, QDir::cleanPath(m_dir.filePath("runs/20261101-090000")));

        QCOMPARE(widgets::projectRuns(m_dir.path(), "beta").size(), 1);
        QVERIFY(widgets::projectRuns(m_dir.path(), "gamma").isEmpty());
        QVERIFY(widgets::projectRuns(m_dir.filePath("nowhere"), "alpha").isEmpty());
    }

    void summariesTellHowEachRunEnded()
    {
        const QList<widgets::RunSummary> runs = widgets::projectRuns(m_dir.path(), "alpha");
        QCOMPARE(runs[2].status, QString("ok"));
        QCOMPARE(runs[2].kind, QString("training"));
        QCOMPARE(runs[2].finalLoss, std::optional<double>(1.25)); // the last epoch's, not the last step's
        QCOMPARE(runs[1].status, QString("cancelled"));
        QCOMPARE(runs[1].kind, QString("pipeline"));
        QCOMPARE(runs[1].finalLoss, std::nullopt);
        QCOMPARE(runs[0].status, QString("unfinished"));
        QCOMPARE(runs[0].finalLoss, std::optional<double>(3.5));
        QVERIFY2(runs[2].describe().contains("training · ok · loss 1.25"), qPrintable(runs[2].describe()));
        QVERIFY(runs[2].describe().contains("2026"));

        QCOMPARE(widgets::summariseRun(m_dir.filePath("runs/empty-folder")), std::nullopt);
        QCOMPARE(widgets::summariseRun(m_dir.filePath("runs/missing")), std::nullopt);
    }
};

QTEST_MAIN(TestProjectRuns)
#include "tst_project_runs.moc"
