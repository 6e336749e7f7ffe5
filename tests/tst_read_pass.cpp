// Batch gathering from a mapping: every row exactly once per pass in either order, seeded
// permutations, and bounded resident memory while scanning a file much larger than the
// window the scan keeps.
#include "io/formats/npy_file.h"
#include "io/writers/npy_writer.h"
#include "io/storage/read_pass.h"
#include "io/storage/row_gather.h"
#include "support/test_support.h"
#include "telemetry/process_memory.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <thread>

using namespace sluice;

namespace {

// Writes rows of `width` int32 whose values encode (row, column).
std::string writeRows(const QTemporaryDir &dir, std::uint64_t rows, std::uint64_t width)
{
    const std::string path = dir.filePath("rows.npy").toStdString();
    auto w = NpyWriter::create(path, {DType::Int32, nativeByteOrder()}, {width});
    std::vector<std::int32_t> chunk;
    for (std::uint64_t first = 0; first < rows; first += 4096) {
        const std::uint64_t n = std::min<std::uint64_t>(4096, rows - first);
        chunk.resize(n * width);
        for (std::uint64_t r = 0; r < n; ++r)
            for (std::uint64_t c = 0; c < width; ++c)
                chunk[r * width + c] = std::int32_t((first + r) * 31 + c);
        if (!w->appendRows(std::span<const std::int32_t>(chunk)).ok())
            return {};
    }
    return w->finish().ok() ? path : std::string{};
}

std::uint64_t referenceChecksum(const NdArray &a)
{
    std::uint64_t sum = 0;
    for (std::uint64_t r = 0; r < a.rowCount(); ++r)
        sum += rowHash(a.rowRangeBytes(r, r + 1).data(), std::size_t(a.rowBytes()));
    return sum;
}

} // namespace

class TestReadPass : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void permutationIsSeededAndComplete()
    {
        const auto p = seededPermutation(1000, 42);
        QCOMPARE(p, seededPermutation(1000, 42));
        QVERIFY(p != seededPermutation(1000, 43));
        auto sorted = p;
        std::sort(sorted.begin(), sorted.end());
        for (std::uint64_t i = 0; i < 1000; ++i)
            QCOMPARE(sorted[i], i);
    }

    void gatherCopiesTheRequestedRows()
    {
        QTemporaryDir dir;
        auto a = openNpy(writeRows(dir, 100, 5));
        QVERIFY(a.ok());
        const std::vector<std::uint64_t> idx{99, 0, 42, 42, 7};
        std::vector<std::int32_t> out(idx.size() * 5);
        gatherRows(*a, idx, reinterpret_cast<std::byte *>(out.data()));
        for (std::size_t i = 0; i < idx.size(); ++i)
            for (std::uint64_t c = 0; c < 5; ++c)
                QCOMPARE(out[i * 5 + c], std::int32_t(idx[i] * 31 + c));
        copyRows(*a, 10, 12, reinterpret_cast<std::byte *>(out.data()));
        QCOMPARE(out[5], std::int32_t(11 * 31));
    }

    void everyRowOncePerPass_data()
    {
        QTest::addColumn<bool>("shuffled");
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("batch");
        QTest::newRow("sequential 1 thread") << false << 1 << 64;
        QTest::newRow("sequential 2 threads, ragged last batch") << false << 2 << 77;
        QTest::newRow("shuffled 1 thread") << true << 1 << 64;
        QTest::newRow("shuffled 2 threads, ragged last batch") << true << 2 << 77;
    }
    void everyRowOncePerPass()
    {
        QFETCH(bool, shuffled);
        QFETCH(int, threads);
        QFETCH(int, batch);
        QTemporaryDir dir;
        auto a = openNpy(writeRows(dir, 20000, 16));
        QVERIFY(a.ok());
        ReadPassOptions o;
        o.order = shuffled ? ReadPassOptions::Order::Shuffled : ReadPassOptions::Order::Sequential;
        o.threads = threads;
        o.batchRows = std::uint64_t(batch);
        o.passes = 3;
        o.verify = true;
        o.residentBudgetBytes = 64 << 10; // small: shuffled passes release pages as they go
        const auto r = runReadPass(*a, o);
        QVERIFY(r.ok());
        QCOMPARE(r->samples, std::uint64_t(60000));
        QCOMPARE(r->bytes, std::uint64_t(60000 * 64));
        QCOMPARE(r->passes, 3.0);
        QCOMPARE(r->checksum, 3 * referenceChecksum(*a)); // each row exactly once per pass
    }

    void refusesWhatHasNoRows()
    {
        QTemporaryDir dir;
        auto scalar = openNpy(test::fixture("scalar_f8.npy"));
        QVERIFY(scalar.ok());
        QVERIFY(!runReadPass(*scalar, {}).ok());
        auto fortran = openNpy(test::fixture("fortran_f8.npy"));
        QVERIFY(fortran.ok());
        const auto r = runReadPass(*fortran, {});
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(r.error().reason).contains("Fortran"));
        ReadPassOptions zeroBatch;
        zeroBatch.batchRows = 0;
        QVERIFY(!runReadPass(*openNpy(writeRows(dir, 10, 2)), zeroBatch).ok());
    }

    void sequentialScanKeepsResidentMemoryBounded()
    {
        // A 384 MiB file scanned sequentially: pages are released behind the 64 MiB window,
        // so resident memory must grow by far less than the file. RSS is sampled from another
        // thread, independently of what the pass reports about itself.
        QTemporaryDir dir;
        const std::uint64_t rows = 384u << 10, width = 256; // 1 KiB rows
        const std::string path = writeRows(dir, rows, width);
        QVERIFY(!path.empty());
        auto a = openNpy(path);
        QVERIFY(a.ok());
        const std::uint64_t baseline = currentRssBytes();
        std::atomic<bool> done{false};
        std::atomic<std::uint64_t> peak{0};
        std::thread sampler([&] {
            while (!done.load()) {
                peak = std::max(peak.load(), currentRssBytes());
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        });
        ReadPassOptions o;
        o.passes = 1;
        o.threads = 2;
        const auto r = runReadPass(*a, o);
        done = true;
        sampler.join();
        QVERIFY(r.ok());
        QCOMPARE(r->samples, rows);
        const std::uint64_t growth = peak > baseline ? peak - baseline : 0;
        qInfo("file %llu MiB, resident growth during the scan %llu MiB", static_cast<unsigned long long>(a->nbytes() >> 20),
              static_cast<unsigned long long>(growth >> 20));
        QVERIFY2(growth < (160u << 20), "sequential scan kept too much of the file resident");
    }
};

QTEST_GUILESS_MAIN(TestReadPass)
#include "tst_read_pass.moc"
