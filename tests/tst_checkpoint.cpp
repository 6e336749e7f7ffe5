// Checkpoints that cannot be written are found before a run's first step: a folder that cannot
// be created (here, under a file), one without room for the checkpoints the run keeps (free
// space given, so the figures are known), and one that will do (its probe file gone after).
// The training state a checkpoint holds reads back as written, and a damaged one is an error
// naming the file and the key, never an exception.
#include "train/loop/checkpoint.h"
#include "train/loop/checkpoint_state.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

using namespace sluice;

class TestCheckpoint : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aFolderThatCannotBeMadeIsNamed()
    {
        QTemporaryDir dir;
        const std::string file = dir.filePath("weights.npz").toStdString();
        test::writeFile(file, "a file, not a folder");
        const Status s = train::checkCheckpointRoom(file + "/checkpoints", 1024, 3);
        QVERIFY(!s.ok());
        QVERIFY2(s.error().message().find(file + "/checkpoints: cannot hold the run's checkpoints: the folder cannot be created") == 0,
                 s.error().message().c_str());
    }

    void tooLittleRoomSaysTheFigures()
    {
        QTemporaryDir dir;
        const std::string folder = dir.filePath("run/checkpoints").toStdString();
        const Status s = train::checkCheckpointRoom(folder, 600ull << 20, 3, 1ull << 30);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().message(), folder + ": has 1.0 GiB free, and the run keeps up to 3 checkpoints of 600.0 MiB (1.8 GiB): "
                                               "free space, choose another --out, or lower training.checkpoint.keep");
    }

    void enoughRoomLeavesNothingBehind()
    {
        QTemporaryDir dir;
        const std::string folder = dir.filePath("run/checkpoints").toStdString();
        QVERIFY(train::checkCheckpointRoom(folder, 1024, 3).ok()); // the real free space of the test folder
        QVERIFY(std::filesystem::is_directory(folder));
        QVERIFY(std::filesystem::is_empty(folder)); // the probe is removed
        QVERIFY(train::checkCheckpointRoom(folder, 1024, 0, 0).ok()); // no checkpoints kept: only writable
    }

    void theStateReadsBackAsWritten()
    {
        train::CheckpointState state;
        state.step = 12;
        state.epoch = 2;
        state.batchInEpoch = 5;
        state.stepInEpoch = 4;
        state.passCounters = {3, 1};
        state.trainTotals = {{"rows", 40.0}, {"output_loss", {1.5, 2.5}}};
        state.metricStates = {{1.0, 2.0}, {3.0}};
        state.replicas = 2;
        state.workers = 1;
        state.parameters = 77;
        const auto back = train::CheckpointState::fromJson(nlohmann::json::parse(state.toJson().dump()), "c.npz");
        QVERIFY(back.ok());
        QCOMPARE(back->toJson(), state.toJson());
    }

    void aDamagedStateNamesTheKey_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value");
        QTest::newRow("negative step") << "step" << "-1";
        QTest::newRow("epoch as text") << "epoch" << "\"two\"";
        QTest::newRow("counters not a list") << "pass_counters" << "7";
        QTest::newRow("a negative counter") << "pass_counters" << "[1, -2]";
        QTest::newRow("totals not an object") << "train_totals" << "[]";
        QTest::newRow("a loss as text") << "held_totals" << "{\"output_loss\": [\"x\"]}";
        QTest::newRow("a metric state of text") << "metric_states" << "[[1], \"x\"]";
        QTest::newRow("replicas null") << "replicas" << "null";
    }
    void aDamagedStateNamesTheKey()
    {
        QFETCH(QString, key);
        QFETCH(QString, value);
        train::CheckpointState state;
        nlohmann::json j = state.toJson();
        j[key.toStdString()] = nlohmann::json::parse(value.toStdString());
        const auto read = train::CheckpointState::fromJson(j, "ckpt-0000000003.npz");
        QVERIFY(!read.ok());
        QCOMPARE(read.error().kind, Error::Kind::Corrupt);
        const std::string message = read.error().message();
        QVERIFY2(message.find("ckpt-0000000003.npz") != std::string::npos && message.find("\"" + key.toStdString() + "\"") != std::string::npos,
                 message.c_str());
        j.erase(key.toStdString());
        const bool optional = key == "held_totals";
        QCOMPARE(train::CheckpointState::fromJson(j, "c.npz").ok(), optional); // absent: required keys only
        QVERIFY(!train::CheckpointState::fromJson(nlohmann::json::array(), "c.npz").ok());
    }
};

QTEST_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
