// Streaming .npy writing: rows appended in pieces, header rewritten in place, the file
// appearing atomically; read back by Sluice and, where numpy is installed, by numpy.
#include "io/formats/npy_file.h"
#include "io/writers/npy_writer.h"
#include "support/test_support.h"
#include "support/reference.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <numeric>

using namespace sluice;

class TestNpyWriter : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void streamsRowsAndRewritesTheHeader()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("rows.npy").toStdString();
        auto w = NpyWriter::create(path, {DType::Float32, nativeByteOrder()}, {3, 2});
        QVERIFY(w.ok());
        std::vector<float> values(10 * 6);
        std::iota(values.begin(), values.end(), 0.0f);
        // Appends of 1, 4 and 5 rows.
        QVERIFY(w->appendRows(std::span<const float>(values).subspan(0, 6)).ok());
        QVERIFY(w->appendRows(std::span<const float>(values).subspan(6, 24)).ok());
        QVERIFY(w->appendRows(std::span<const float>(values).subspan(30, 30)).ok());
        QCOMPARE(w->rows(), std::uint64_t(10));
        QVERIFY2(!QFile::exists(QString::fromStdString(path)), "the file must not appear before finish()");
        QVERIFY(w->finish().ok());

        auto a = openNpy(path);
        QVERIFY(a.ok());
        QCOMPARE(a->shape(), (std::vector<std::uint64_t>{10, 3, 2}));
        QCOMPARE(a->header().dataOffset % 64, std::uint64_t(0));
        const auto v = a->view<float>();
        QVERIFY(v.ok());
        for (std::size_t i = 0; i < values.size(); ++i)
            QCOMPARE(v->flat(i), values[i]);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"rows.npy"}); // no temporary left behind
    }

    void refusesPartialRows()
    {
        QTemporaryDir dir;
        auto w = NpyWriter::create(dir.filePath("x.npy").toStdString(), {DType::Int16, nativeByteOrder()}, {4});
        QVERIFY(w.ok());
        const std::vector<std::byte> sevenBytes(7);
        const Status s = w->appendRows(std::span<const std::byte>(sevenBytes));
        QVERIFY(!s.ok());
        QVERIFY(QString::fromStdString(s.error().reason).contains("not a whole number of 8-byte rows"));
    }

    void abandonedWriterLeavesNoFile()
    {
        QTemporaryDir dir;
        {
            auto w = NpyWriter::create(dir.filePath("gone.npy").toStdString(), {DType::Float64, nativeByteOrder()}, {});
            QVERIFY(w.ok());
            const double one = 1;
            QVERIFY(w->appendRows(std::span<const double>(&one, 1)).ok());
        }
        QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());
    }

    void existingFileSurvivesAFailedWrite()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("keep.npy").toStdString();
        test::writeFile(path, "old contents");
        {
            auto w = NpyWriter::create(path, {DType::UInt8, nativeByteOrder()}, {2});
            QVERIFY(w.ok());
        } // never finished
        QCOMPARE(test::readFile(path), std::string("old contents"));
    }

    void unwritableFolderIsAnError()
    {
        auto w = NpyWriter::create("/nonexistent-folder/x.npy", {DType::UInt8, nativeByteOrder()}, {2});
        QVERIFY(!w.ok());
        QCOMPARE(w.error().what, std::string("/nonexistent-folder/x.npy"));
    }

    void numpyReadsWhatWeWrite()
    {
        if (!test::numpyPython())
            SLUICE_REFERENCE_MISSING("numpy is not installed: the cross-check with numpy is skipped");
        QTemporaryDir dir;
        const std::string path = dir.filePath("big_endian.npy").toStdString();
        auto w = NpyWriter::create(path, {DType::Int32, ByteOrder::Big}, {2});
        QVERIFY(w.ok());
        std::vector<std::int32_t> values{1, -2, 300000, -400000, 5, 6};
        byteSwapInPlace(values.data(), values.size(), 4);
        QVERIFY(w->appendRows(std::span<const std::int32_t>(values)).ok());
        QVERIFY(w->finish().ok());
        const auto out = test::runPython("import sys, numpy as np; a = np.load(sys.argv[1]); "
                                         "print(a.dtype.str, a.shape, a.tolist())",
                                         {QString::fromStdString(path)});
        QVERIFY(out.has_value());
        QCOMPARE(out->trimmed(), QString(">i4 (3, 2) [[1, -2], [300000, -400000], [5, 6]]"));
    }
};

QTEST_GUILESS_MAIN(TestNpyWriter)
#include "tst_npy_writer.moc"
