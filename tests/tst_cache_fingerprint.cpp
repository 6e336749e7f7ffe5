// cache(filename) is never stale: its file holds what it was written from, and a later run
// replays it only while all of that still holds. Each cause of staleness is checked on real
// files: a new seed upstream, a changed parameter upstream, a source file rewritten with the
// same shape (new values, same size), a cache file cut short, a file that is not a cache. Each
// one rebuilds the file with a note naming the cause (in the build's notes and the stage's
// statistics), and the rebuilt elements are the new ones; with "on_mismatch": "error" the build
// stops naming the file and the cause instead. Unchanged, the file is replayed with no note.
#include "pipeline/ops/cache_fingerprint.h"
#include "pipeline/engine/pipeline.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <thread>

using namespace sluice;
using namespace sluice::test;
using Ints = std::vector<std::int64_t>;

namespace {

std::string source(const std::string &file) { return op("src", "from_npy", {{"features", {{"value", file}}}}); }
std::string shuffle(int seed) { return op("s", "shuffle", {{"buffer_size", 16}, {"seed", seed}}); }
std::string cache(const std::string &onMismatch = "rebuild") { return op("c", "cache", {{"filename", "rows.cache"}, {"on_mismatch", onMismatch}}); }

std::string joined(const std::vector<std::string> &notes)
{
    std::string all;
    for (const auto &n : notes)
        all += n + "\n";
    return all;
}

} // namespace

class TestCacheFingerprint : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string d;

    void writeRows(std::int64_t first)
    {
        std::vector<std::int64_t> values(16);
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = first + std::int64_t(i);
        writeNpy(d + "/rows.npy", values);
    }

    // One full pass (which writes the cache file when it is not replayed) and the pipeline's notes.
    Ints run(const std::string &pipelineJson, std::vector<std::string> *notes = nullptr)
    {
        auto p = buildPipeline(pipelineJson, d);
        if (!p)
            return {};
        if (notes)
            *notes = p->notes();
        const Pass pass = collect(*p);
        if (notes && !p->snapshot().stages.empty())
            for (const auto &s : p->snapshot().stages)
                if (s.id == "c" && !s.note.empty())
                    notes->push_back("stats: " + s.note);
        return pass.firstValues();
    }

private Q_SLOTS:
    void init()
    {
        m_dir.remove();
        m_dir = QTemporaryDir();
        QVERIFY(m_dir.isValid());
        d = m_dir.path().toStdString();
        writeRows(0);
    }

    void anUnchangedPipelineReplaysItsFile()
    {
        std::vector<std::string> notes;
        const Ints first = run(chain({source("rows.npy"), shuffle(1), cache()}), &notes);
        QCOMPARE(sorted(first), iota(0, 16));
        QVERIFY(notes.empty());
        QVERIFY(std::filesystem::exists(d + "/rows.cache"));
        const auto written = std::filesystem::last_write_time(d + "/rows.cache");
        QCOMPARE(run(chain({source("rows.npy"), shuffle(1), cache()}), &notes), first);
        QVERIFY2(notes.empty(), joined(notes).c_str());
        QCOMPARE(std::filesystem::last_write_time(d + "/rows.cache"), written); // replayed, not rewritten
    }

    void aNewSeedUpstreamRebuilds()
    {
        const Ints seed1 = run(chain({source("rows.npy"), shuffle(1), cache()}));
        std::vector<std::string> notes;
        const Ints seed2 = run(chain({source("rows.npy"), shuffle(2), cache()}), &notes);
        QVERIFY(seed2 != seed1); // the new order, not the cached one
        QCOMPARE(sorted(seed2), iota(0, 16));
        QVERIFY2(contains(joined(notes), "cache 'c': rebuilding rows.cache: stage 's' draws another seed"), joined(notes).c_str());
        QVERIFY2(contains(joined(notes), "stats: rebuilding rows.cache"), joined(notes).c_str());
        // And now the file is the new one: replayed without a note.
        QCOMPARE(run(chain({source("rows.npy"), shuffle(2), cache()}), &notes), seed2);
        QVERIFY(notes.empty());
    }

    void aChangedParameterUpstreamRebuilds()
    {
        const std::string keepBelow8 = op("f", "filter", {{"feature", "value"}, {"op", "<"}, {"value", 8}});
        QCOMPARE(run(chain({source("rows.npy"), keepBelow8, cache()})), iota(0, 8));
        std::vector<std::string> notes;
        const std::string keepBelow4 = op("f", "filter", {{"feature", "value"}, {"op", "<"}, {"value", 4}});
        QCOMPARE(run(chain({source("rows.npy"), keepBelow4, cache()}), &notes), iota(0, 4));
        QVERIFY2(contains(joined(notes), "stage 'f' changed its op or parameters"), joined(notes).c_str());
    }

    void aSourceFileRewrittenWithTheSameShapeRebuilds()
    {
        QCOMPARE(run(chain({source("rows.npy"), cache()})), iota(0, 16));
        // Regenerated data: the same dtype, shape and size, other values.
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const auto size = std::filesystem::file_size(d + "/rows.npy");
        writeRows(100);
        QCOMPARE(std::filesystem::file_size(d + "/rows.npy"), size);
        std::vector<std::string> notes;
        QCOMPARE(run(chain({source("rows.npy"), cache()}), &notes), iota(100, 116));
        QVERIFY2(contains(joined(notes), "source file " + d + "/rows.npy changed (rewritten"), joined(notes).c_str());
    }

    void aCacheFileCutShortIsNeverReplayed()
    {
        QCOMPARE(run(chain({source("rows.npy"), cache()})), iota(0, 16));
        const auto size = std::filesystem::file_size(d + "/rows.cache");
        std::filesystem::resize_file(d + "/rows.cache", size - 30); // as a crash or a full disk leaves it
        std::vector<std::string> notes;
        QCOMPARE(run(chain({source("rows.npy"), cache()}), &notes), iota(0, 16));
        QVERIFY2(contains(joined(notes), "it is incomplete"), joined(notes).c_str());
        QCOMPARE(std::filesystem::file_size(d + "/rows.cache"), size); // written whole again
        // Not a cache file at all.
        writeFile(d + "/rows.cache", "hello");
        QCOMPARE(run(chain({source("rows.npy"), cache()}), &notes), iota(0, 16));
        QVERIFY2(contains(joined(notes), "it is not a Sluice cache file"), joined(notes).c_str());
    }

    void onMismatchErrorStopsWithTheReason()
    {
        QCOMPARE(run(chain({source("rows.npy"), shuffle(1), cache("error")})).size(), std::size_t(16));
        const std::string error = buildError(chain({source("rows.npy"), shuffle(3), cache("error")}), d);
        QVERIFY2(contains(error, "filename") && contains(error, "rows.cache cannot be replayed: stage 's' draws another seed (") &&
                     contains(error, "on_mismatch"),
                 error.c_str());
        QVERIFY2(contains(buildError(chain({source("rows.npy"), shuffle(1), cache("sometimes")}), d), "on_mismatch"), "a bad choice is refused");
    }

    void differencesSaySomethingPlain()
    {
        using pipeline::fingerprintDifference;
        const std::vector<std::string> base{"spec\t{value: int64 ()}", "file /d/x.npy\t128 5 aa", "stage s\tshuffle {}"};
        QCOMPARE(fingerprintDifference(base, base), std::string());
        auto with = [&](std::size_t i, const std::string &line) {
            auto v = base;
            v[i] = line;
            return v;
        };
        QCOMPARE(fingerprintDifference(base, with(0, "spec\t{value: float32 ()}")),
                 std::string("its elements differ (were {value: int64 ()}, now {value: float32 ()})"));
        QCOMPARE(fingerprintDifference(base, with(1, "file /d/x.npy\t256 6 bb")), std::string("source file /d/x.npy changed (size 128 → 256 bytes)"));
        QCOMPARE(fingerprintDifference(base, with(1, "file /d/x.npy\tmissing")), std::string("source file /d/x.npy is gone"));
        QCOMPARE(fingerprintDifference(base, with(2, "stage t\tshuffle {}")), std::string("stage 't' was added upstream"));
        auto fewer = base;
        fewer.pop_back();
        QCOMPARE(fingerprintDifference(base, fewer), std::string("stage 's' was removed upstream"));
    }
};

QTEST_MAIN(TestCacheFingerprint)
#include "tst_cache_fingerprint.moc"
