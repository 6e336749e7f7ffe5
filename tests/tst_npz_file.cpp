// .npz archives written by numpy (savez: stored, savez_compressed: deflated) and by our own
// writer, and every way an archive can be damaged.
#include "io/formats/npz_file.h"
#include "io/writers/npz_writer.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

using namespace sluice;
using sluice::test::fixture;
using sluice::test::manifest;

namespace {

std::vector<double> asDoubles(const NdArray &a)
{
    std::vector<double> out;
    const NdArray n = a.toNative();
    for (std::uint64_t i = 0; i < n.count(); ++i)
        out.push_back(loadAsDouble(n.data().data() + i * itemSize(n.dtype()), n.descr()));
    return out;
}

} // namespace

class TestNpzFile : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void readsNumpyArchives_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("compressed");
        QTest::newRow("savez") << "stored.npz" << false;
        QTest::newRow("savez_compressed") << "deflated.npz" << true;
    }
    void readsNumpyArchives()
    {
        QFETCH(QString, file);
        QFETCH(bool, compressed);
        auto npz = NpzFile::open(fixture(file.toStdString()));
        QVERIFY2(npz.ok(), npz.ok() ? "" : npz.error().message().c_str());
        QCOMPARE(npz->members().size(), std::size_t(3));
        for (const auto &[name, m] : manifest()["npz"].items()) {
            const NpzFile::Member *member = npz->find(name);
            QVERIFY2(member, name.c_str());
            QCOMPARE(member->compressed(), compressed);
            auto a = npz->load(name);
            QVERIFY2(a.ok(), a.ok() ? "" : a.error().message().c_str());
            QCOMPARE(a->storage(), compressed ? Storage::Inflated : Storage::Mapped);
            QCOMPARE(QString::fromStdString(a->descr().str()), QString::fromStdString(m["descr"]));
            QCOMPARE(a->shape(), m["shape"].get<std::vector<std::uint64_t>>());
            QCOMPARE(a->header().fortranOrder, m["fortran_order"].get<bool>());
            QCOMPARE(asDoubles(*a), m["values"].get<std::vector<double>>());
            QVERIFY(npz->verify(*member).ok());
        }
    }

    void storedMembersAreZeroCopy()
    {
        auto npz = NpzFile::open(fixture("stored.npz"));
        QVERIFY(npz.ok());
        auto a = npz->load("features");
        QVERIFY(a.ok());
        QVERIFY(a->isZeroCopy());
        const MappedFile *mapping = a->mapping();
        QVERIFY(mapping);
        const std::byte *p = a->data().data();
        QVERIFY(p > mapping->bytes().data() && p < mapping->bytes().data() + mapping->size());
        // Where the member's alignment in the zip does not suit a typed view, the API says so.
        if (!a->isViewable())
            QVERIFY(QString::fromStdString(a->conversionReason()).contains("unaligned"));
    }

    void unknownMemberListsTheKnownOnes()
    {
        auto npz = NpzFile::open(fixture("stored.npz"));
        QVERIFY(npz.ok());
        auto a = npz->load("nope");
        QVERIFY(!a.ok());
        QVERIFY(QString::fromStdString(a.error().reason).contains("features"));
    }

    // ZIP64 rows: the limit lowered to 1 byte, so every size, offset and the directory take the
    // ZIP64 records an archive over 4 GiB takes (numpy reads them as it reads such an archive).
    void writerRoundTrips_data()
    {
        QTest::addColumn<bool>("deflate");
        QTest::addColumn<qulonglong>("zip64From");
        QTest::newRow("stored") << false << qulonglong(NpzWriter::kZip32Limit + 1);
        QTest::newRow("deflated") << true << qulonglong(NpzWriter::kZip32Limit + 1);
        QTest::newRow("stored, ZIP64") << false << qulonglong(1);
        QTest::newRow("deflated, ZIP64") << true << qulonglong(1);
        QTest::newRow("stored, ZIP64 for the directory alone") << false << qulonglong(300);
    }
    void writerRoundTrips()
    {
        QFETCH(bool, deflate);
        QFETCH(qulonglong, zip64From);
        QTemporaryDir dir;
        const std::string path = dir.filePath("out.npz").toStdString();
        auto w = NpzWriter::create(path, deflate ? NpzWriter::Compression::Deflated : NpzWriter::Compression::Stored, zip64From);
        QVERIFY(w.ok());
        const std::vector<float> x{1.5f, -2.0f, 3.25f, 4.0f, 5.0f, 6.0f};
        const std::vector<std::int64_t> y{7, 8};
        const std::vector<std::uint64_t> xs{2, 3}, ys{2};
        QVERIFY(w->add("x", {DType::Float32, nativeByteOrder()}, xs, std::as_bytes(std::span(x))).ok());
        QVERIFY(w->add("y", {DType::Int64, nativeByteOrder()}, ys, std::as_bytes(std::span(y))).ok());
        QVERIFY(!w->add("y", {DType::Int64, nativeByteOrder()}, ys, std::as_bytes(std::span(y))).ok()); // duplicate
        QVERIFY(w->finish().ok());

        auto npz = NpzFile::open(path);
        QVERIFY(npz.ok());
        auto a = npz->load("x");
        QVERIFY(a.ok());
        QCOMPARE(a->storage(), deflate ? Storage::Inflated : Storage::Mapped);
        QCOMPARE(asDoubles(*a), (std::vector<double>{1.5, -2.0, 3.25, 4.0, 5.0, 6.0}));

        if (test::numpyPython()) {
            const auto out = test::runPython("import sys, numpy as np; z = np.load(sys.argv[1]); "
                                             "print(sorted(z.files), z['x'].tolist(), z['y'].dtype.str, z['y'].tolist())",
                                             {QString::fromStdString(path)});
            QVERIFY(out.has_value());
            QCOMPARE(out->trimmed(), QString("['x', 'y'] [[1.5, -2.0, 3.25], [4.0, 5.0, 6.0]] <i8 [7, 8]"));
        }
        auto b = npz->load("y");
        QVERIFY(b.ok());
        QCOMPARE(asDoubles(*b), (std::vector<double>{7, 8}));
        // The records say ZIP64 exactly when asked to: the end record's locator.
        const std::string bytes = test::readFile(path);
        QCOMPARE(bytes.find(std::string("PK\x06\x07", 4)) != std::string::npos, zip64From < 1000);
    }

    void damagedArchives_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("damage"); // 0: truncate to `at` bytes, 1: flip the byte at `at` from the end
        QTest::addColumn<int>("at");
        QTest::addColumn<QString>("reason");
        QTest::newRow("empty") << "stored.npz" << 0 << 0 << "file is empty";
        QTest::newRow("tiny") << "stored.npz" << 0 << 10 << "truncated zip";
        QTest::newRow("cut in half") << "stored.npz" << 0 << -2 << "no end-of-central-directory";
        QTest::newRow("cut before end record") << "deflated.npz" << 0 << -30 << "no end-of-central-directory";
        QTest::newRow("not a zip") << "float32_le.npy" << 0 << -1 << "no end-of-central-directory";
    }
    void damagedArchives()
    {
        QFETCH(QString, source);
        QFETCH(int, damage);
        QFETCH(int, at);
        QFETCH(QString, reason);
        Q_UNUSED(damage);
        QTemporaryDir dir;
        std::string bytes = test::readFile(fixture(source.toStdString()));
        const std::size_t keep = at >= 0 ? std::size_t(at) : (at == -2 ? bytes.size() / 2 : at == -1 ? bytes.size() : bytes.size() + std::size_t(at));
        bytes.resize(keep);
        const std::string path = dir.filePath("bad.npz").toStdString();
        test::writeFile(path, bytes);
        auto npz = NpzFile::open(path);
        QVERIFY(!npz.ok());
        QCOMPARE(npz.error().what, path);
        QVERIFY2(QString::fromStdString(npz.error().reason).contains(reason), npz.error().reason.c_str());
    }

    void corruptDeflatedMemberIsCaught()
    {
        QTemporaryDir dir;
        std::string bytes = test::readFile(fixture("deflated.npz"));
        auto original = NpzFile::open(fixture("deflated.npz"));
        QVERIFY(original.ok());
        const ZipEntry &e = original->find("features")->entry;
        bytes[std::size_t(e.dataOffset + e.compressedSize / 2)] ^= 0x5a;
        const std::string path = dir.filePath("flipped.npz").toStdString();
        test::writeFile(path, bytes);
        auto npz = NpzFile::open(path);
        QVERIFY(npz.ok()); // the directory is intact
        auto a = npz->load("features");
        QVERIFY(!a.ok());
        QCOMPARE(a.error().what, path + ": features");
        const QString why = QString::fromStdString(a.error().reason);
        QVERIFY2(why.contains("CRC-32 mismatch") || why.contains("damaged") || why.contains("inflated to"), qPrintable(why));
    }

    void corruptStoredMemberIsCaughtByVerify()
    {
        QTemporaryDir dir;
        std::string bytes = test::readFile(fixture("stored.npz"));
        auto original = NpzFile::open(fixture("stored.npz"));
        QVERIFY(original.ok());
        const ZipEntry &e = original->find("labels")->entry;
        bytes[std::size_t(e.dataOffset + e.compressedSize - 1)] ^= 0x01; // last data byte
        const std::string path = dir.filePath("flipped.npz").toStdString();
        test::writeFile(path, bytes);
        auto npz = NpzFile::open(path);
        QVERIFY(npz.ok());
        QVERIFY(npz->load("labels").ok()); // zero-copy load does not read the data…
        const Status s = npz->verify(*npz->find("labels"));
        QVERIFY(!s.ok()); // …verify does
        QVERIFY(QString::fromStdString(s.error().reason).contains("CRC-32 mismatch"));
    }

    void declaredSizeLargerThanTheDataIsAnErrorNotAnAllocation()
    {
        // A deflated member whose directory entry claims 1000× its compressed size: the reader
        // must report the mismatch after inflating what is really there.
        QTemporaryDir dir;
        const std::string path = dir.filePath("liar.npz").toStdString();
        auto w = NpzWriter::create(path, NpzWriter::Compression::Deflated);
        const std::vector<float> x(1000, 1.0f);
        const std::vector<std::uint64_t> shape{1000};
        QVERIFY(w->add("x", {DType::Float32, nativeByteOrder()}, shape, std::as_bytes(std::span(x))).ok());
        QVERIFY(w->finish().ok());
        std::string bytes = test::readFile(path);
        const std::size_t central = bytes.rfind(std::string("PK\x01\x02", 4));
        QVERIFY(central != std::string::npos);
        std::uint32_t compressed = 0;
        std::memcpy(&compressed, bytes.data() + central + 20, 4);
        const std::uint32_t claimed = compressed * 1000;
        std::memcpy(bytes.data() + central + 24, &claimed, 4); // uncompressed size
        test::writeFile(path, bytes);
        auto npz = NpzFile::open(path);
        QVERIFY(npz.ok());
        auto a = npz->load("x");
        QVERIFY(!a.ok());
        QVERIFY2(QString::fromStdString(a.error().reason).contains(QString("directory says %1").arg(claimed)), a.error().reason.c_str());
    }

    void damagedLocalHeaderOffset()
    {
        QTemporaryDir dir;
        std::string bytes = test::readFile(fixture("stored.npz"));
        bytes[0] = 'X'; // the first member's local header signature
        const std::string path = dir.filePath("bad.npz").toStdString();
        test::writeFile(path, bytes);
        auto npz = NpzFile::open(path);
        QVERIFY(!npz.ok());
        QVERIFY(QString::fromStdString(npz.error().reason).contains("no local header"));
    }
};

QTEST_GUILESS_MAIN(TestNpzFile)
#include "tst_npz_file.moc"
