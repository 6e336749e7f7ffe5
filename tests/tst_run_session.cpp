// The bridge between core and the UI (docs/architecture.md, decision 3): a RunSession trains a project or
// iterates its pipeline on a worker thread, delivers core's events coalesced (~25 signals a second
// at most), stops promptly, reports bad projects from start(), drops results of superseded runs,
// and can be destroyed while running.
#include "bridge/run_session.h"
#include "support/test_support.h"
#include "support/train_test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QSignalSpy>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace sluice;
using namespace sluice::test;
using bridge::RunSession;

class TestRunSession : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string dir() const { return m_dir.path().toStdString(); }

    Project project(const nlohmann::json &document) const
    {
        auto p = Project::fromJson(document, dir());
        if (!p)
            qFatal("test project: %s", p.error().message().c_str());
        return std::move(*p);
    }
    Project training(int epochs, int batchSize = 4) const
    {
        return project(trainingProject(mlpModel(), {{"epochs", epochs}, {"seed", 1}, {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}}},
                                       batchSize));
    }

    static QList<QJsonObject> allEvents(const QSignalSpy &spy)
    {
        // In their JSON form, as events.jsonl keeps them (encoded by core's codec).
        QList<QJsonObject> all;
        for (const auto &args : spy)
            for (const auto &event : args.at(1).value<QList<sluice::events::Event>>())
                all += sluice::test::eventObject(event);
        return all;
    }
    static QList<QJsonObject> ofType(const QList<QJsonObject> &events, const QString &type)
    {
        QList<QJsonObject> found;
        for (const auto &e : events)
            if (e.value("event").toString() == type)
                found.append(e);
        return found;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        writeTrainingData(dir(), 2000); // batches of 4: 500 steps an epoch
    }

    void trainingRunsToTheEndCoalesced()
    {
        RunSession session;
        QSignalSpy events(&session, &RunSession::runEvents);
        QSignalSpy stats(&session, &RunSession::pipelineStats);
        QSignalSpy finished(&session, &RunSession::finished);
        RunSession::Options options;
        options.stepEventInterval = 0; // an event every step: far more than the UI may see
        options.statsInterval = 0.05;
        QElapsedTimer clock;
        clock.start();
        QCOMPARE(session.start(training(40), options), std::nullopt);
        QVERIFY(session.isRunning());
        QCOMPARE(session.kind(), RunSession::Kind::Training);
        QVERIFY(finished.wait(120000));
        const qint64 ms = clock.elapsed();
        QVERIFY(!session.isRunning());

        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished[0][0].toULongLong(), session.runId());
        QCOMPARE(finished[0][1].value<RunSession::Status>(), RunSession::Status::Ok);
        QVERIFY(finished[0][2].toString().isEmpty());

        const auto all = allEvents(events);
        QCOMPARE(ofType(all, "step").size(), 20000); // nothing lost: 40 epochs of 500 steps
        const auto epochs = ofType(all, "epoch_end");
        QCOMPARE(epochs.size(), 40);
        QCOMPARE(epochs.back().value("epoch").toInt(), 40);
        QVERIFY(epochs.back().contains("loss"));
        QCOMPARE(all.front().value("event").toString(), QString("run_start"));
        QCOMPARE(all.back().value("event").toString(), QString("run_end"));
        QCOMPARE(all.back().value("status").toString(), QString("ok"));
        QVERIFY(ofType(all, "stats").isEmpty()); // those go to pipelineStats

        // Coalesced: at most one emission per ~40 ms tick (plus the final one), far fewer than steps.
        const qint64 bound = ms / 35 + 2;
        QVERIFY2(events.size() <= bound, qPrintable(QString("%1 emissions in %2 ms").arg(events.size()).arg(ms)));
        QVERIFY2(events.size() < 20000 / 20, qPrintable(QString("%1 emissions for 20000 steps").arg(events.size())));
        QVERIFY(stats.size() >= 1 && stats.size() <= bound);
        QVERIFY(!stats.last()[1].value<sluice::events::Stats>().snapshot.stages.empty());
        for (const auto &args : events)
            QCOMPARE(args[0].toULongLong(), session.runId());
        qInfo("%lld ms, %d event emissions, %d stats emissions", ms, int(events.size()), int(stats.size()));
    }

    // Stop ends the run between steps, cancelled, with a checkpoint of where it stopped (the
    // workbench's Stop, as Ctrl-C for `sluice run`).
    void stopEndsTheRunCancelled()
    {
        RunSession session;
        QSignalSpy events(&session, &RunSession::runEvents);
        QSignalSpy finished(&session, &RunSession::finished);
        QTemporaryDir checkpoints;
        RunSession::Options options;
        options.checkpointDir = checkpoints.path().toStdString();
        QCOMPARE(session.start(training(1000), options), std::nullopt);
        QVERIFY(events.wait(20000)); // it is under way
        session.stop();
        QVERIFY(session.isRunning()); // stop() only asks: running until finished() is emitted
        QVERIFY(finished.wait(20000));
        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished[0][1].value<RunSession::Status>(), RunSession::Status::Cancelled);
        QVERIFY(!session.isRunning());
        const auto ends = ofType(allEvents(events), "run_end");
        QCOMPARE(ends.size(), 1);
        QCOMPARE(ends[0].value("status").toString(), QString("cancelled"));
        QVERIFY(!QDir(checkpoints.path()).entryList({"ckpt-*.npz"}).isEmpty());
        session.stop(); // nothing to stop: harmless
    }

    // A project that does not build is built on the run's thread: the run ends failed with the
    // message naming what is wrong, and no step or statistics are reported.
    void badProjectEndsTheRunWithTheReason_data()
    {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown layer") << "model" << "Dense2";
        QTest::newRow("missing file") << "file" << "nothing.npy";
        QTest::newRow("bad pipeline param") << "pipeline" << "batch_size";
    }
    void badProjectEndsTheRunWithTheReason()
    {
        QFETCH(QString, what);
        QFETCH(QString, expected);
        nlohmann::json doc = trainingProject(mlpModel(), {{"epochs", 1}}, 4);
        if (what == "model") {
            doc["model"]["layers"][0]["class_name"] = "Dense2";
        } else if (what == "file") {
            doc["pipeline"]["nodes"][0]["params"]["features"]["x"] = "nothing.npy";
        } else {
            doc.erase("model");
            doc.erase("training");
            doc["pipeline"]["nodes"][1]["params"]["batch_size"] = -3;
        }
        RunSession session;
        QSignalSpy events(&session, &RunSession::runEvents);
        QSignalSpy stats(&session, &RunSession::pipelineStats);
        QSignalSpy finished(&session, &RunSession::finished);
        RunSession::Options options;
        const QString folder = m_dir.filePath("refused-" + what);
        options.runFolder = folder.toStdString();
        QCOMPARE(session.start(project(doc), options), std::nullopt);
        QVERIFY(finished.wait(30000));
        QVERIFY2(!QFileInfo::exists(folder), "a run refused before its first step leaves no run folder");
        QCOMPARE(finished[0][1].value<RunSession::Status>(), RunSession::Status::Failed);
        const QString message = finished[0][2].toString();
        QVERIFY2(message.contains(expected), qPrintable(message));
        QVERIFY(!session.isRunning());
        QCOMPARE(stats.size(), 0);
        const auto all = allEvents(events);
        QCOMPARE(all.size(), 1);
        QCOMPARE(all[0].value("event").toString(), QString("run_end"));
        QCOMPARE(all[0].value("status").toString(), QString("failed"));
    }

    // What start() itself refuses: nothing starts and no signal follows.
    void badSettingsAreRefusedByStart()
    {
        RunSession session;
        QSignalSpy finished(&session, &RunSession::finished);
        RunSession::Options options;
        options.epochs = 0;
        auto error = session.start(training(1), options);
        QVERIFY(error && error->contains("epochs"));
        nlohmann::json doc = trainingProject(mlpModel(), {{"epochs", "many"}}, 4);
        error = session.start(project(doc));
        QVERIFY(error && error->contains("training.epochs"));
        QVERIFY(!session.isRunning());
        QCOMPARE(session.runId(), quint64(0));
        QTest::qWait(100);
        QCOMPARE(finished.size(), 0);
    }

    void destroyingARunningSessionJoins()
    {
        for (const bool pipelineOnly : {false, true}) {
            nlohmann::json doc = trainingProject(mlpModel(), {{"epochs", 1000}}, 4);
            if (pipelineOnly) {
                doc.erase("model");
                doc.erase("training");
            }
            auto session = std::make_unique<RunSession>();
            RunSession::Options options;
            options.passes = 1000000;
            QCOMPARE(session->start(project(doc), options), std::nullopt);
            QTest::qWait(100);
            QVERIFY(session->isRunning());
            QElapsedTimer clock;
            clock.start();
            session.reset();
            QVERIFY(!session); // the destructor returned: it stopped and joined the running run
            qInfo("destroyed after %lld ms", static_cast<long long>(clock.elapsed())); // a figure, not a threshold
        }
    }

    void aSupersededRunIsDropped()
    {
        RunSession session;
        QSignalSpy events(&session, &RunSession::runEvents);
        QSignalSpy finished(&session, &RunSession::finished);
        QCOMPARE(session.start(training(1000)), std::nullopt);
        const quint64 first = session.runId();
        QVERIFY(events.wait(20000));
        // A refused start changes nothing: the run in progress goes on.
        nlohmann::json bad = trainingProject(mlpModel(), {{"epochs", "many"}}, 4);
        QVERIFY(session.start(project(bad)).has_value());
        QCOMPARE(session.runId(), first);
        QVERIFY(session.isRunning());

        events.clear();
        QCOMPARE(session.start(training(1, 50)), std::nullopt);
        const quint64 second = session.runId();
        QVERIFY(second > first);
        QVERIFY(finished.wait(60000));
        QTest::qWait(200); // the first run's thread winds down; nothing of it may arrive
        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished[0][0].toULongLong(), second);
        QCOMPARE(finished[0][1].value<RunSession::Status>(), RunSession::Status::Ok);
        for (const auto &args : events)
            QCOMPARE(args[0].toULongLong(), second);
        QCOMPARE(ofType(allEvents(events), "run_start").size(), 1);
    }

    void pipelineOnlyProjectDeliversStats()
    {
        nlohmann::json doc = trainingProject(mlpModel(), {}, 8);
        doc.erase("model");
        doc.erase("training");
        RunSession session;
        QSignalSpy events(&session, &RunSession::runEvents);
        QSignalSpy stats(&session, &RunSession::pipelineStats);
        QSignalSpy finished(&session, &RunSession::finished);
        RunSession::Options options;
        options.passes = 3;
        QCOMPARE(session.start(project(doc), options), std::nullopt);
        QCOMPARE(session.kind(), RunSession::Kind::Pipeline);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished[0][1].value<RunSession::Status>(), RunSession::Status::Ok);
        QVERIFY(stats.size() >= 1);
        const auto last = stats.last()[1].value<sluice::events::Stats>();
        QCOMPARE(last.snapshot.elements, std::uint64_t(3 * 250)); // 2000 rows in batches of 8, 3 passes
        QVERIFY(last.snapshot.stages.size() >= 2);
        // Its input-bound share, against the consumer it is measured against (the run's own loop).
        QVERIFY(last.consumer == nlohmann::json("as fast as possible"));
        QVERIFY(last.snapshot.consumerAttached);
        QVERIFY(last.snapshot.inputBoundShare >= 0 && last.snapshot.inputBoundShare <= 1);
        QVERIFY(last.snapshot.adviceChange.is_null() || last.snapshot.adviceChange.is_object());
        const auto all = allEvents(events);
        const auto ends = ofType(all, "run_end");
        QCOMPARE(ends.size(), 1);
        QCOMPARE(ends[0].value("status").toString(), QString("ok"));
        QCOMPARE(ends[0].value("passes").toInt(), 3);
        QCOMPARE(ends[0].value("elements").toInteger(), qint64(750));
        // The pipeline was freed on the run's worker, not on this (the window's) thread.
        QVERIFY(session.lastTeardownThread() != std::thread::id());
        QVERIFY(session.lastTeardownThread() != std::this_thread::get_id());
    }

    // The workbench keeps every run as `sluice run --out` does; a pipeline profile repeats its
    // passes until minSeconds have passed and records its statistics.
    void runsAreKeptInTheirFolder()
    {
        const QString folder = QString::fromStdString(dir()) + "/runs/kept";
        {
            RunSession session;
            QSignalSpy finished(&session, &RunSession::finished);
            RunSession::Options options;
            options.runFolder = folder.toStdString();
            options.checkpointDir = options.runFolder + "/checkpoints";
            QCOMPARE(session.start(training(1), options), std::nullopt);
            QVERIFY(finished.wait(120000));
            QCOMPARE(finished[0][1].value<RunSession::Status>(), RunSession::Status::Ok);
            for (const char *name : {"events.jsonl", "metrics.csv", "weights.npz", "project.sluice"})
                QVERIFY2(QFile::exists(folder + "/" + name), name);
            // The folder of an earlier run is never overwritten.
            auto refused = session.start(training(1), options);
            QVERIFY(refused && refused->contains("earlier run"));
        }
        nlohmann::json doc = trainingProject(mlpModel(), {}, 8);
        doc.erase("model");
        doc.erase("training");
        RunSession session;
        QSignalSpy finished(&session, &RunSession::finished);
        QSignalSpy events(&session, &RunSession::runEvents);
        RunSession::Options options;
        options.runFolder = folder.toStdString() + "-profile";
        options.minSeconds = 0.3;
        options.statsInterval = 0.05;
        QCOMPARE(session.start(project(doc), options), std::nullopt);
        QVERIFY(finished.wait(60000));
        const auto ends = ofType(allEvents(events), "run_end");
        QCOMPARE(ends.size(), 1);
        QVERIFY(ends[0].value("seconds").toDouble() >= 0.3);
        const int passes = ends[0].value("passes").toInt();
        QVERIFY(passes >= 1);
        QCOMPARE(ends[0].value("elements").toInteger(), qint64(passes) * 250);
        const std::string record = readFile(options.runFolder + "/events.jsonl");
        QVERIFY(record.find("\"event\":\"stats\"") != std::string::npos);
        QVERIFY(record.find("\"event\":\"run_end\"") != std::string::npos);
    }

    void pauseHoldsTheRunUntilResumed()
    {
        RunSession session;
        QSignalSpy events(&session, &RunSession::runEvents);
        QSignalSpy paused(&session, &RunSession::pausedChanged);
        QSignalSpy finished(&session, &RunSession::finished);
        RunSession::Options options;
        options.stepEventInterval = 0;
        QCOMPARE(session.start(training(1000), options), std::nullopt);
        QTRY_VERIFY_WITH_TIMEOUT(!ofType(allEvents(events), "step").isEmpty(), 30000);
        session.pause();
        QVERIFY(session.isPaused());
        QCOMPARE(paused.size(), 1);
        QTest::qWait(200); // the step in flight ends and its events arrive
        const qsizetype steps = ofType(allEvents(events), "step").size();
        QTest::qWait(300);
        QCOMPARE(ofType(allEvents(events), "step").size(), steps); // held
        session.resume();
        QTRY_VERIFY_WITH_TIMEOUT(ofType(allEvents(events), "step").size() > steps, 30000);
        session.pause();
        session.stop(); // a paused run stops too
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished[0][1].value<RunSession::Status>(), RunSession::Status::Cancelled);
    }
};

QTEST_GUILESS_MAIN(TestRunSession)
#include "tst_run_session.moc"
