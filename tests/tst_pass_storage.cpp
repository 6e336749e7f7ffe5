// How passes over mapped sources read their files: the access advice reaches every mapping for
// every source and order, the read-ahead of a shuffled pass stays within its budget, each file
// is mapped once whatever the stages above it, an in-order pass releases the pages behind it,
// and a pass that waits for storage is charged to its source with storage advice.
#include "io/storage/mapped_file.h"
#include "io/writers/npz_writer.h"
#include "io/storage/page_cache.h"
#include "io/storage/storage_probe.h"
#include "support/pipeline_test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <mutex>
#include <numeric>
#include <set>

using namespace sluice;
using namespace sluice::test;
using Hint = MappedFile::Hint;

namespace {

// Records every hint given to a mapping while alive.
class HintRecorder
{
public:
    struct Entry
    {
        std::string path;
        Hint hint;
        std::size_t offset, length;
    };
    HintRecorder()
    {
        MappedFile::setHintObserver([this](const MappedFile &file, Hint hint, std::size_t offset, std::size_t length) {
            std::lock_guard lock(m_mutex);
            m_entries.push_back({file.path(), hint, offset, length});
        });
    }
    ~HintRecorder() { MappedFile::setHintObserver({}); }
    std::vector<Entry> entries() const
    {
        std::lock_guard lock(m_mutex);
        return m_entries;
    }
    // The last access advice each file got.
    std::map<std::string, Hint> access() const
    {
        std::map<std::string, Hint> out;
        for (const auto &e : entries())
            if (e.hint == Hint::Normal || e.hint == Hint::Sequential || e.hint == Hint::Random)
                out[e.path] = e.hint;
        return out;
    }
    std::size_t count(Hint hint) const
    {
        std::size_t n = 0;
        for (const auto &e : entries())
            n += e.hint == hint;
        return n;
    }

private:
    mutable std::mutex m_mutex;
    std::vector<Entry> m_entries;
};

// Rows of `width` float32 whose first value is the row's number.
std::string writeRows(const QString &path, std::uint64_t rows, std::uint64_t width, std::uint64_t first = 0)
{
    std::vector<float> values(rows * width, 0.5f);
    for (std::uint64_t r = 0; r < rows; ++r)
        values[r * width] = float(first + r);
    writeNpy(path.toStdString(), values, {width});
    return path.toStdString();
}

std::size_t processMappings()
{
    std::ifstream in("/proc/self/maps");
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
        ++n;
    return n;
}

// Resident bytes of this process's mapping of `path` (/proc/self/smaps).
std::uint64_t mappedResidentBytes(const std::string &path)
{
    std::ifstream in("/proc/self/smaps");
    std::uint64_t total = 0;
    bool inFile = false;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') != std::string::npos &&
            line.find(':') > line.find(' '))
            inFile = line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
        else if (inFile && line.rfind("Rss:", 0) == 0)
            total += std::stoull(line.substr(4)) * 1024;
    }
    return total;
}

std::vector<std::int64_t> firstColumn(const Pass &pass)
{
    std::vector<std::int64_t> out;
    for (const auto &e : pass.elements) {
        const auto &t = e.tensors.at(0);
        const auto rows = t.shape().empty() ? 1 : t.shape()[0];
        const auto width = t.nbytes() / sizeof(float) / std::size_t(rows);
        const auto *v = reinterpret_cast<const float *>(t.data());
        for (std::int64_t r = 0; r < rows; ++r)
            out.push_back(std::int64_t(v[std::size_t(r) * width]));
    }
    return out;
}

const pipeline::StageSnapshot *stage(const pipeline::PipelineSnapshot &s, const std::string &id)
{
    for (const auto &st : s.stages)
        if (st.id == id)
            return &st;
    return nullptr;
}

} // namespace

class TestPassStorage : public QObject
{
    Q_OBJECT
    QTemporaryDir m_records; // the device measurements profiles look up: never the user's own

private Q_SLOTS:
    void initTestCase() { qputenv("SLUICE_STORAGE_RECORDS", m_records.filePath("storage.json").toUtf8()); }

    void adviceReachesTheMapping_data()
    {
        QTest::addColumn<QString>("pipelineJson");
        QTest::addColumn<QString>("expected"); // the advice every file gets: random or sequential
        const auto src = op("src", "from_npy", {{"features", {{"x", "parts/*.npy"}}}});
        const auto batch = op("batch", "batch", {{"batch_size", 16}});
        QTest::newRow("global_shuffle → batch (fused gather)")
            << QString::fromStdString(chain({src, op("shuf", "global_shuffle", {{"seed", 1}}), batch})) << "random";
        QTest::newRow("global_shuffle → map → batch (element path)")
            << QString::fromStdString(chain({src, op("shuf", "global_shuffle", {{"seed", 1}}),
                                             op("m", "map", {{"function", "identity"}}), batch}))
            << "random";
        QTest::newRow("in order → batch") << QString::fromStdString(chain({src, batch})) << "sequential";
        QTest::newRow("shard → batch") << QString::fromStdString(chain({src, op("sh", "shard", {{"num_shards", 2}, {"index", 1}}), batch}))
                                       << "sequential";
        QTest::newRow("in order, element path") << QString::fromStdString(chain({src, op("m", "map", {{"function", "identity"}}), batch}))
                                                << "sequential";
        QTest::newRow("interleave: per file") << QString::fromStdString(chain({src, op("il", "interleave", {{"cycle_length", 2}}), batch}))
                                              << "sequential";
        QTest::newRow("interleave, parallel, shuffled files")
            << QString::fromStdString(
                   chain({src, op("il", "interleave", {{"cycle_length", 2}, {"num_parallel_calls", 2}}), op("sb", "shuffle", {{"buffer_size", 8}}), batch}))
            << "sequential";
    }

    void adviceReachesTheMapping()
    {
        QFETCH(QString, pipelineJson);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir("parts"));
        std::set<std::string> files;
        for (int i = 0; i < 3; ++i)
            files.insert(writeRows(dir.filePath(QString("parts/p%1.npy").arg(i)), 40, 8, 40 * i));
        HintRecorder hints;
        const Pass pass = runPass(pipelineJson.toStdString(), "x", dir.path().toStdString());
        QVERIFY2(pass.ok(), pass.error.c_str());
        std::vector<std::int64_t> expectedRows = iota(0, 120); // every row once, whatever the advice
        if (QTest::currentDataTag() == QString("shard → batch")) // shard 1 of 2: the odd rows
            std::erase_if(expectedRows, [](std::int64_t r) { return r % 2 == 0; });
        QCOMPARE(sorted(firstColumn(pass)), expectedRows);
        const auto access = hints.access();
        const Hint want = expected == "random" ? Hint::Random : Hint::Sequential;
        for (const auto &file : files) {
            QVERIFY2(access.count(file), ("no advice reached " + file).c_str());
            QVERIFY2(access.at(file) == want, ("wrong advice for " + file).c_str());
        }
    }

    void npzMembersAreAdvisedToo()
    {
        QTemporaryDir dir;
        // A stored (uncompressed) .npz: its members are read from the archive's mapping. uint8 rows
        // need no alignment, so the member is used in place.
        const std::string npz = dir.filePath("images.npz").toStdString();
        {
            auto writer = NpzWriter::create(npz);
            QVERIFY(writer.ok());
            std::vector<std::uint8_t> pixels(40 * 16);
            std::iota(pixels.begin(), pixels.end(), 0);
            const std::vector<std::uint64_t> shape{40, 16};
            QVERIFY(writer->add("pix", {DType::UInt8, nativeByteOrder()}, shape, std::as_bytes(std::span(pixels))).ok());
            QVERIFY(writer->finish().ok());
        }
        HintRecorder hints;
        const auto json = chain({op("src", "from_npz", {{"path", npz}}), op("shuf", "global_shuffle", {{"seed", 3}}),
                                 op("batch", "batch", {{"batch_size", 8}})});
        const Pass pass = runPass(json, "pix", dir.path().toStdString());
        QVERIFY2(pass.ok(), pass.error.c_str());
        QCOMPARE(pass.size(), std::size_t(5));
        QVERIFY(hints.access().count(npz));
        QVERIFY(hints.access().at(npz) == Hint::Random);
    }

    void readAheadStaysWithinItsBudget()
    {
        QTemporaryDir dir;
        const std::string path = writeRows(dir.filePath("x.npy"), 4096, 256); // 4 MiB of 1 KiB rows
        auto evicted = evictFromPageCache(path);
        QVERIFY(evicted.ok());
        if (*evicted > 0.5)
            QSKIP("this file system keeps files in memory: nothing to read ahead from storage");
        pipeline::PipelineOptions options;
        options.threads = 2;
        options.residentBudgetBytes = 1 << 20; // the 4 MiB file counts as larger than RAM
        HintRecorder hints;
        const auto json = chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("shuf", "global_shuffle", {{"seed", 5}}),
                                 op("batch", "batch", {{"batch_size", 64}, {"num_parallel_calls", 2}})});
        auto p = buildPipeline(json, dir.path().toStdString(), options);
        QVERIFY(p);
        QVERIFY(evictFromPageCache(path).ok()); // what opening the file read of it, too
        const Pass pass = collect(*p, "x", 20);
        QVERIFY2(pass.ok(), pass.error.c_str());
        const auto snap = p->snapshot();
        const auto *src = stage(snap, "src");
        QVERIFY(src && src->storage);
        const auto &s = *src->storage;
        QCOMPARE(s.access, std::string("random"));
        QVERIFY(s.readAhead);
        QVERIFY2(s.readAheadLimitBytes <= options.residentBudgetBytes, std::to_string(s.readAheadLimitBytes).c_str());
        QVERIFY(s.readAheadLimitRows >= 1);
        QVERIFY(s.readAheadRows <= s.readAheadLimitRows);
        QVERIFY(s.pagesReadAhead > 0);
        // Every row requested ahead is one the pass read, or one of the batches started but not
        // read yet, or within the window beyond them.
        std::size_t requested = 0;
        for (const auto &e : hints.entries())
            requested += e.hint == Hint::WillNeed && e.path == path;
        const std::uint64_t inFlight = 64 * 2 /* gathers at once */ + 64 * 8 /* batches buffered ahead */;
        QVERIFY2(requested <= s.rowsRead + inFlight + s.readAheadLimitRows,
                 (std::to_string(requested) + " rows requested, " + std::to_string(s.rowsRead) + " read, window " +
                  std::to_string(s.readAheadLimitRows))
                     .c_str());
        QVERIFY(requested > 0);
        const auto json2 = snap.toJson();
        QVERIFY(json2["stages"][0].contains("storage"));
        QCOMPARE(json2["stages"][0]["storage"]["access"].get<std::string>(), std::string("random"));
    }

    void thousandsOfFilesMapOnce_data()
    {
        QTest::addColumn<QString>("middle"); // the stages between the source and batch
        QTest::newRow("interleave") << QString::fromStdString(op("mid", "interleave", {{"cycle_length", 4}, {"num_parallel_calls", 2}}));
        QTest::newRow("global_shuffle") << QString::fromStdString(op("mid", "global_shuffle", {{"seed", 9}}));
        QTest::newRow("shard") << QString::fromStdString(op("mid", "shard", {{"num_shards", 3}, {"index", 0}}));
    }

    void thousandsOfFilesMapOnce()
    {
        QFETCH(QString, middle);
        constexpr int kFiles = 2000, kRows = 3;
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir("parts"));
        for (int i = 0; i < kFiles; ++i)
            writeRows(dir.filePath(QString("parts/p%1.npy").arg(i, 5, 10, QChar('0'))), kRows, 4, std::uint64_t(kRows * i));
        const std::size_t before = processMappings();
        const auto json = chain({op("src", "from_npy", {{"features", {{"x", "parts/*.npy"}}}}), middle.toStdString(),
                                 op("batch", "batch", {{"batch_size", 50}})});
        auto p = buildPipeline(json, dir.path().toStdString());
        QVERIFY(p);
        const Pass pass = collect(*p, "x");
        QVERIFY2(pass.ok(), pass.error.c_str());
        const std::size_t during = processMappings();
        // One mapping per file (an interleave sub-pipeline per file must not map all of them),
        // plus what the runtime's threads and buffers take.
        QVERIFY2(during <= before + kFiles + 300, (std::to_string(before) + " → " + std::to_string(during)).c_str());
        auto values = sorted(firstColumn(pass));
        if (QTest::currentDataTag() == QString("shard")) {
            QCOMPARE(values.size(), std::size_t(kFiles * kRows / 3));
        } else {
            QCOMPARE(values, iota(0, kFiles * kRows));
        }
        p.reset();
        QVERIFY(processMappings() <= before + 64); // released with the pipeline
    }

    void sequentialPassReleasesBehind()
    {
        QTemporaryDir dir;
        const std::string path = writeRows(dir.filePath("x.npy"), 8192, 1024); // 32 MiB of 4 KiB rows
        pipeline::PipelineOptions options;
        options.threads = 2;
        options.residentBudgetBytes = 4 << 20; // releases behind every MiB
        const auto json = chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("batch", "batch", {{"batch_size", 32}}),
                                 op("pf", "prefetch", {{"buffer_size", 2}})});
        auto p = buildPipeline(json, dir.path().toStdString(), options);
        QVERIFY(p);
        std::uint64_t peak = 0, rows = 0;
        for (;;) {
            auto r = p->next();
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
            if (!*r)
                break;
            rows += std::uint64_t((*r)->tensors[0].shape()[0]);
            peak = std::max(peak, mappedResidentBytes(path));
        }
        QCOMPARE(rows, std::uint64_t(8192));
        qInfo("peak resident %llu KiB of a 32 MiB file", static_cast<unsigned long long>(peak >> 10));
        QVERIFY2(peak <= std::uint64_t(8) << 20, ("peak resident " + std::to_string(peak >> 10) + " KiB of a 32 MiB file").c_str());
        const auto snap = p->snapshot();
        const auto *src = stage(snap, "src");
        QVERIFY(src && src->storage && src->storage->releases > 0);
        QCOMPARE(src->storage->access, std::string("sequential"));
    }

    void shuffledPassOverBudgetReleasesAndStaysComplete()
    {
        QTemporaryDir dir;
        writeRows(dir.filePath("x.npy"), 4096, 1024); // 16 MiB
        pipeline::PipelineOptions options;
        options.threads = 2;
        options.residentBudgetBytes = 2 << 20;
        const auto json = chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("shuf", "global_shuffle", {{"seed", 2}}),
                                 op("batch", "batch", {{"batch_size", 64}})});
        auto p = buildPipeline(json, dir.path().toStdString(), options);
        QVERIFY(p);
        const Pass pass = collect(*p, "x");
        QVERIFY2(pass.ok(), pass.error.c_str());
        QCOMPARE(sorted(firstColumn(pass)), iota(0, 4096)); // released pages are read back correctly
        const auto snap = p->snapshot();
        const auto *src = stage(snap, "src");
        QVERIFY(src && src->storage);
        QVERIFY(src->storage->releases > 0);
    }

    void storageWaitIsChargedToTheSource()
    {
        QTemporaryDir dir;
        // 64 MiB of 64 KiB rows: each row a read of its own, long against copying it, so the wait
        // dominates even where the storage answers fast (a virtual disk's host cache).
        const std::string path = writeRows(dir.filePath("x.npy"), 1024, 16384);
        auto evicted = evictFromPageCache(path);
        QVERIFY(evicted.ok());
        if (*evicted > 0.5)
            QSKIP("this file system keeps files in memory: no storage to wait for");
        // The device was measured (`sluice bench storage`): the profile compares with its rate.
        StorageMeasurement measured;
        measured.device = *storageDeviceOf(path);
        measured.randomReadIops = 1e6;
        QVERIFY(rememberStorage(measured).ok());
        pipeline::PipelineOptions options;
        options.threads = 2;
        options.residentBudgetBytes = 8 << 20; // the file counts as larger than RAM
        const auto json = chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("shuf", "global_shuffle", {{"seed", 4}}),
                                 op("batch", "batch", {{"batch_size", 16}, {"num_parallel_calls", "AUTOTUNE"}}),
                                 op("pf", "prefetch", {{"buffer_size", "AUTOTUNE"}})});
        auto p = buildPipeline(json, dir.path().toStdString(), options);
        QVERIFY(p);
        QVERIFY(evictFromPageCache(path).ok()); // what opening the file read of it, too
        const Pass pass = collect(*p, "x");
        QVERIFY2(pass.ok(), pass.error.c_str());
        QCOMPARE(pass.size(), std::size_t(1024 / 16));
        const auto snap = p->snapshot();
        const auto *src = stage(snap, "src");
        QVERIFY(src && src->storage);
        const std::string why = "bottleneck " + snap.bottleneck + ": " + snap.bottleneckReason + "; wait share " +
                                std::to_string(src->storage->waitShare);
        qInfo("%s", why.c_str());
        // The time goes to the source, with the pages it brought in, and the advice is never
        // more threads. How much of it is waiting depends on the storage (0.6–0.75 on a virtual
        // disk whose host caches what was just written); where it is most, the verdict says so.
        QVERIFY2(snap.bottleneck == "src", why.c_str());
        QVERIFY2(src->storage->waitSeconds > 0, why.c_str());
        QVERIFY2(src->storage->pagesReadAhead + src->storage->majorFaults > 0, why.c_str());
        QVERIFY(stage(snap, "src")->utilisation > stage(snap, "batch")->utilisation);
        QVERIFY2(!contains(snap.bottleneckReason, "num_parallel_calls would help"), why.c_str());
        QVERIFY2(!contains(snap.bottleneckReason, "CPU budget"), why.c_str());
        QCOMPARE(src->storage->deviceIops, 1e6);
        QCOMPARE(src->storage->device, measured.device.name);
        if (src->storage->waitShare >= 0.5) {
            QVERIFY2(contains(snap.bottleneckReason, "waits for storage"), why.c_str());
            QVERIFY2(contains(snap.bottleneckReason, "pages read per row"), why.c_str());
            QVERIFY2(contains(snap.bottleneckReason, "of the 1000000 random reads/s " + measured.device.name + " can do"), why.c_str());
        } else {
            QVERIFY2(contains(snap.bottleneckReason, "waiting for storage"), why.c_str());
        }
    }

    // The rule itself, on figures of known cause: storage-bound only when most of the reading
    // time is spent off the CPU and pages did come from storage.
    void storageVerdictRule_data()
    {
        QTest::addColumn<double>("waitShare");
        QTest::addColumn<int>("pagesIn");
        QTest::addColumn<double>("deviceIops"); // as `sluice bench storage` measured it (0: never)
        QTest::addColumn<bool>("storageBound");
        QTest::addColumn<QString>("advice");
        // 5000 pages in 10 s: 500 reads/s.
        QTest::newRow("waits, pages read, device not measured") << 0.8 << 5000 << 0.0 << true << "measure it with sluice bench storage";
        QTest::newRow("waits at the device's limit") << 0.8 << 5000 << 550.0 << true << "91% of the 550 random reads/s";
        QTest::newRow("waits, the device has headroom") << 0.8 << 5000 << 50000.0 << true << "the device has headroom";
        QTest::newRow("mostly copying") << 0.3 << 5000 << 0.0 << false << "";
        QTest::newRow("mostly copying, far below the device's limit") << 0.3 << 5000 << 50000.0 << false << "";
        // Read-ahead hides most of the wait, but the device is saturated: storage-bound all the same.
        QTest::newRow("little waiting at the device's limit") << 0.3 << 5000 << 550.0 << true << "the device is at its limit";
        QTest::newRow("in order, pages past the random-read rate") << 0.3 << 5000 << 550.0 << false << "";
        QTest::newRow("off the CPU, nothing read (CPU taken by others)") << 0.9 << 0 << 550.0 << false << "";
    }

    void storageVerdictRule()
    {
        QFETCH(double, waitShare);
        QFETCH(int, pagesIn);
        QFETCH(double, deviceIops);
        QFETCH(bool, storageBound);
        QFETCH(QString, advice);
        pipeline::StageSnapshot st;
        st.id = "src";
        st.op = "from_npy";
        pipeline::StorageSnapshot s;
        s.access = QByteArray(QTest::currentDataTag()).startsWith("in order") ? "sequential" : "random";
        s.readSeconds = 10;
        s.waitSeconds = 10 * waitShare;
        s.waitShare = waitShare;
        s.pagesReadAhead = std::uint64_t(pagesIn);
        s.storageBytesPerSecond = pagesIn * 4096.0 / 10;
        s.pagesPerRow = pagesIn ? 1.25 : 0.001; // one odd page per thousand rows is no storage read
        s.device = "vdz";
        s.deviceIops = deviceIops;
        st.storage = s;
        const std::string reason = pipeline::storageBottleneckReason(st);
        QCOMPARE(!reason.empty(), storageBound);
        if (storageBound) {
            QVERIFY2(contains(reason, std::to_string(int(100 * waitShare)) + "% of its reading time waiting"), reason.c_str());
            QVERIFY2(contains(reason, "1.25 pages read per row"), reason.c_str());
            QVERIFY2(contains(reason, "more threads will not help"), reason.c_str());
            QVERIFY2(contains(reason, "cache"), reason.c_str());
            QVERIFY2(contains(reason, advice.toStdString()), reason.c_str());
            QCOMPARE(contains(reason, "the device is at its limit"), deviceIops > 0 && deviceIops < 600);
        }
    }

    void mappingFailureNamesTheLimit()
    {
        const std::string atLimit = mappingFailureReason(ENOMEM, 65500, 65530);
        QVERIFY2(contains(atLimit, "vm.max_map_count"), atLimit.c_str());
        QVERIFY2(contains(atLimit, "65530"), atLimit.c_str());
        QVERIFY2(!contains(atLimit, "Cannot allocate memory"), atLimit.c_str());
        const std::string addressSpace = mappingFailureReason(ENOMEM, 120, 65530);
        QVERIFY2(!contains(addressSpace, "vm.max_map_count"), addressSpace.c_str());
        QVERIFY2(contains(addressSpace, "ulimit -v"), addressSpace.c_str());
        QVERIFY2(contains(mappingFailureReason(EACCES, 1, 65530), "Permission denied"), "other errors keep their text");
    }

    void oneMappingPerFile()
    {
        QTemporaryDir dir;
        const std::string path = writeRows(dir.filePath("x.npy"), 10, 4);
        auto a = MappedFile::open(path), b = MappedFile::open(path);
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(a->get(), b->get());
        // A rewritten file is a new mapping; the old one stays valid while in use.
        const auto oldByte = (*a)->bytes()[0];
        QTest::qWait(10);
        writeRows(dir.filePath("x.npy"), 20, 4);
        auto c = MappedFile::open(path);
        QVERIFY(c.ok());
        QVERIFY(c->get() != a->get());
        QCOMPARE((*a)->bytes()[0], oldByte);
    }
};

QTEST_GUILESS_MAIN(TestPassStorage)
#include "tst_pass_storage.moc"
