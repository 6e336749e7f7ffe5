// The storage probe: which device a file lives on, random reads measured around the page cache,
// and the per-device records that profiles look up (a damaged records file is ignored, never
// fatal). The records go to a temporary file, never the user's.
#include "io/storage/storage_probe.h"

#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <sys/sysmacros.h>

using namespace sluice;
using namespace sluice::test;

class TestStorageProbe : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string m_records;

    std::string fileOf(const char *name, std::size_t bytes)
    {
        const std::string path = m_dir.filePath(name).toStdString();
        writeFile(path, std::string(bytes, 'x'));
        return path;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_records = m_dir.filePath("cache/storage.json").toStdString();
        qputenv("SLUICE_STORAGE_RECORDS", QByteArray::fromStdString(m_records));
        QCOMPARE(storageRecordsPath(), m_records);
    }

    // First, before anything is cached: a damaged records file counts as none.
    void damagedRecordsAreIgnored()
    {
        const std::string file = fileOf("a.bin", 1 << 20);
        QDir().mkpath(m_dir.filePath("cache"));
        writeFile(m_records, "{not json");
        QVERIFY(!knownStorage(file));
    }

    void deviceOfAFileIsItsStDev()
    {
        const std::string file = fileOf("b.bin", 4096);
        struct stat st{};
        QCOMPARE(::stat(file.c_str(), &st), 0);
        auto device = storageDeviceOf(file);
        QVERIFY(device.ok());
        QCOMPARE(device->id, std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)));
        QVERIFY(!device->name.empty());
        auto missing = storageDeviceOf(m_dir.filePath("missing").toStdString());
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().kind, Error::Kind::NotFound);
    }

    void rememberedPerDevice()
    {
        const std::string file = fileOf("c.bin", 4096);
        auto device = storageDeviceOf(file);
        QVERIFY(device.ok());
        StorageMeasurement m;
        m.device = *device;
        m.randomReadIops = 12345;
        m.queueDepth = 32;
        m.seconds = 1;
        m.file = file;
        m.measuredAt = "2026-11-24T00:00:00Z";
        QVERIFY(rememberStorage(m).ok());
        auto known = knownStorage(fileOf("d.bin", 10)); // another file on the same device
        QVERIFY(known);
        QCOMPARE(known->randomReadIops, 12345.0);
        QCOMPARE(known->device.id, device->id);
        QCOMPARE(known->queueDepth, 32);
        QVERIFY(contains(readFile(m_records), "\"random_read_iops\": 12345"));
        m.randomReadIops = 777; // measured again: replaced
        QVERIFY(rememberStorage(m).ok());
        QCOMPARE(knownStorage(file)->randomReadIops, 777.0);
    }

    // A record whose keys have other types than Sluice writes (edited by hand) counts as none.
    void recordsOfOtherTypesAreIgnored()
    {
        const std::string file = fileOf("g.bin", 4096);
        const std::string id = storageDeviceOf(file)->id;
        writeFile(m_records, "{\"" + id + "\": {\"random_read_iops\": 9, \"queue_depth\": \"deep\", \"device\": 5}}");
        forgetStorageRecords();
        QVERIFY(!knownStorage(file));
        writeFile(m_records, "{\"" + id + "\": {\"random_read_iops\": 9, \"queue_depth\": 16}}");
        QCOMPARE(knownStorage(file).has_value(), false); // still the records read before

        forgetStorageRecords();
        QCOMPARE(knownStorage(file)->randomReadIops, 9.0);
        QCOMPARE(knownStorage(file)->queueDepth, 16);
    }

    void randomReadsAroundThePageCache()
    {
        const std::string file = fileOf("e.bin", 8 << 20);
        auto m = measureRandomReads(file, 0.2, 4);
        if (!m.ok()) { // a file system without O_DIRECT (tmpfs) says so
            QCOMPARE(m.error().kind, Error::Kind::Unsupported);
            QVERIFY2(contains(m.error().message(), "O_DIRECT"), m.error().message().c_str());
            return;
        }
        QVERIFY(m->randomReadIops > 0);
        QCOMPARE(m->queueDepth, 4);
        QCOMPARE(m->blockBytes, 4096);
        QVERIFY(m->seconds >= 0.2);
        QCOMPARE(m->device.id, storageDeviceOf(file)->id);
        auto tiny = measureRandomReads(fileOf("f.bin", 4096), 0.1, 1);
        QVERIFY(!tiny.ok());
        QVERIFY2(contains(tiny.error().message(), "too small"), tiny.error().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestStorageProbe)
#include "tst_storage_probe.moc"
