// Checkpoints that cannot be written are found before a run's first step: a folder that cannot
// be created (here, under a file), one without room for the checkpoints the run keeps (free
// space given, so the figures are known), and one that will do (its probe file gone after).
#include "train/checkpoint.h"
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
};

QTEST_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
