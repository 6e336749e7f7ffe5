// The profiler's verdict against known causes (docs/profiling.md keeps the table): for each cause
// injected into a running pipeline, the bottleneck is the stage that causes it (or "consumer",
// or "pipeline" for CPU contention) with a reason of the right kind and advice that would help:
// - a slow map (CPU-bound): that map, compute, more num_parallel_calls;
// - slow storage under a mapped source (the simulated device of storage_throttle.h): the source,
//   storage, never more threads;
// - a slow consumer: "consumer", not input-bound;
// - too small a prefetch between a producer and a consumer whose speeds vary: that prefetch, buffer;
// - a shuffle buffer still filling: that shuffle, buffer; an interleave cycle smaller than the
//   threads over a CPU-bound per-file chain: that interleave, buffer (its cycle);
// - more threads than cores, or another process taking the CPU: "pipeline", CPU contention;
// - a host (Python) function holding the interpreter's lock: that map, GIL, vectorise.
// The rules themselves are also checked on figures of known cause (precedence, thresholds).
//
// Timing-sensitive by nature (CPU contention is what another test running beside it would
// cause): ctest runs it alone (RUN_SERIAL).
#include "pipeline/profile/bottleneck_verdict.h"
#include "pipeline/functions/host_functions.h"
#include "pipeline/storage/storage_throttle.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"
#include "telemetry/cpu_usage.h"

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <mutex>
#include <thread>

using namespace sluice;
using namespace sluice::test;

namespace {

// `rows` rows of `width` float32 values.
std::string writeWideRows(const QString &path, std::uint64_t rows, std::uint64_t width)
{
    std::vector<float> values(rows * width);
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = float(i % 1000) * 0.001f;
    writeNpy(path.toStdString(), values, {width});
    return path.toStdString();
}

// Burns the CPU for `duration` (work that no sleep imitates: it needs a core).
void spin(std::chrono::microseconds duration)
{
    const auto end = std::chrono::steady_clock::now() + duration;
    volatile std::uint64_t x = 1;
    while (std::chrono::steady_clock::now() < end)
        x = x * 6364136223846793005ULL + 1;
}

// A host whose functions spin `work` per call, all under one lock, as Python's functions run
// under the GIL: time waiting for the lock and inside the function is charged as the Python host
// charges it.
class LockedHost final : public pipeline::HostFunctions
{
public:
    explicit LockedHost(std::chrono::microseconds work) : m_work(work) {}
    std::string language() const override { return "Test"; }
    Result<std::shared_ptr<const pipeline::HostFunction>> resolve(const std::string &, const std::vector<std::string> &) override
    {
        return std::shared_ptr<const pipeline::HostFunction>(std::make_shared<Function>(this));
    }

private:
    class Function final : public pipeline::HostFunction
    {
    public:
        explicit Function(LockedHost *host) : m_host(host) {}
        Result<pipeline::NamedTensors> call(const pipeline::NamedTensors &features, pipeline::StageStats *stats) const override
        {
            const std::int64_t t0 = pipeline::nowNs();
            std::lock_guard lock(m_host->m_lock);
            const std::int64_t t1 = pipeline::nowNs();
            spin(m_host->m_work);
            if (stats) {
                stats->add(stats->hostWaitNs, t1 - t0);
                stats->add(stats->hostNs, pipeline::nowNs() - t1);
            }
            return features;
        }
        Result<bool> test(const pipeline::NamedTensors &, pipeline::StageStats *) const override { return true; }
        Result<std::unique_ptr<pipeline::HostGenerator>> start(pipeline::StageStats *) const override
        {
            return Error::invalid("", "no generators here");
        }
        std::string doc() const override { return {}; }
        std::string sourceFile() const override { return {}; }

    private:
        LockedHost *m_host;
    };

    std::chrono::microseconds m_work;
    std::mutex m_lock;
};

// Reads every element, calling `consume` on each (a training step's stand-in), and returns the
// last snapshot.
pipeline::PipelineSnapshot drain(pipeline::Pipeline &p, const std::function<void(std::uint64_t)> &consume = {})
{
    std::uint64_t n = 0;
    for (;;) {
        auto next = p.next();
        if (!next.ok()) {
            qWarning("%s", next.error().message().c_str());
            return {};
        }
        if (!*next)
            break;
        if (consume)
            consume(n);
        ++n;
    }
    return p.snapshot();
}

std::string describe(const pipeline::PipelineSnapshot &snap)
{
    std::string text = "verdict " + snap.bottleneck + " [" + snap.bottleneckKind + "]: " + snap.bottleneckReason + "; cpu " +
                       std::to_string(snap.cpuSeconds) + " s of " + std::to_string(snap.elapsedSeconds) + " s, machine busy " +
                       std::to_string(snap.systemBusyShare) + ", other processes " + std::to_string(snap.otherProcessCores) +
                       " cores, input-bound " + std::to_string(snap.inputBoundShare);
    for (const auto &s : snap.stages)
        text += "; " + s.id + " busy " + std::to_string(s.busySeconds) + " util " + std::to_string(s.utilisation);
    return text;
}

#define QVERIFY_VERDICT(snap, node, kind)                                                                                      \
    do {                                                                                                                       \
        const std::string why = describe(snap);                                                                                \
        qInfo("%s", why.c_str());                                                                                              \
        QVERIFY2((snap).bottleneck == (node), why.c_str());                                                                    \
        QVERIFY2((snap).bottleneckKind == (kind), why.c_str());                                                                \
    } while (false)

pipeline::StageSnapshot stage(const std::string &id, const std::string &op, double utilisation)
{
    pipeline::StageSnapshot s;
    s.id = id;
    s.op = op;
    s.utilisation = utilisation;
    s.busySeconds = utilisation;
    return s;
}

} // namespace

class TestBottleneckVerdicts : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_cores = 1;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_cores = usableCoreCount();
        qInfo("%d usable cores", m_cores);
        // 256 rows of 16 KiB (four pages each): the maps' and the storage's data.
        writeWideRows(m_dir.filePath("x.npy"), 256, 4096);
    }

    void cleanup()
    {
        pipeline::setStorageThrottle(std::chrono::microseconds(0));
        pipeline::setHostFunctions(nullptr);
    }

    // ---- the rules, on figures of known cause ----

    void rulesOnFigures()
    {
        pipeline::PipelineSnapshot snap;
        snap.elapsedSeconds = 1;
        snap.elements = 100;
        snap.threads = 2;
        snap.cores = 2;
        snap.cpuSeconds = 1.5;
        snap.stages = {stage("src", "from_npy", 0.2), stage("m", "map", 0.7), stage("pf", "prefetch", 0)};
        snap.stages[1].async = true;
        snap.stages[1].parallelism = 1;
        snap.systemBusyShare = 0.95; // the machine busy, by this pipeline alone
        snap.otherProcessCores = 0.1;
        auto v = pipeline::judgeBottleneck(snap);
        QCOMPARE(v.node, std::string("m"));
        QCOMPARE(v.kind, pipeline::BottleneckKind::Compute);
        QVERIFY2(contains(v.reason, "more num_parallel_calls would help"), v.reason.c_str());

        // A consumer that never waits: it is the limit, however busy a stage is.
        snap.consumerAttached = true;
        snap.inputBoundShare = 0.02;
        snap.inputBound = pipeline::classifyInputBound(0.02);
        v = pipeline::judgeBottleneck(snap);
        QCOMPARE(v.node, std::string("consumer"));
        QCOMPARE(v.kind, pipeline::BottleneckKind::Consumer);
        snap.inputBoundShare = 0.4;
        snap.inputBound = pipeline::classifyInputBound(0.4);

        // Other processes keeping cores busy on a saturated machine, while this one got less CPU
        // than its busiest stage could use (two call slots, under one core): contention.
        snap.otherProcessCores = 1.2;
        snap.stages[1].workers = 2;
        snap.cpuSeconds = 0.8;
        v = pipeline::judgeBottleneck(snap);
        QCOMPARE(v.node, std::string("pipeline"));
        QCOMPARE(v.kind, pipeline::BottleneckKind::Contention);
        QVERIFY2(contains(v.reason, "other processes kept 1.2 of the 2 cores busy"), v.reason.c_str());
        // More threads than cores on a saturated machine, too.
        snap.otherProcessCores = 0.1;
        snap.threads = 8;
        v = pipeline::judgeBottleneck(snap);
        QCOMPARE(v.kind, pipeline::BottleneckKind::Contention);
        QVERIFY2(contains(v.reason, "8 threads share 2 cores: lower --threads to 2"), v.reason.c_str());
        // Neither, where the machine has idle cores, or where the process got what its busiest
        // stage can use (one call slot, a core's worth: that stage is the limit).
        snap.systemBusyShare = 0.6;
        QCOMPARE(pipeline::judgeBottleneck(snap).kind, pipeline::BottleneckKind::Compute);
        snap.systemBusyShare = 0.95;
        snap.stages[1].workers = 1;
        snap.otherProcessCores = 1.2;
        QCOMPARE(pipeline::judgeBottleneck(snap).kind, pipeline::BottleneckKind::Compute);
        snap.stages[1].workers = 2;
        snap.otherProcessCores = 0.1;
        // Time off the CPU waiting for the GIL (or for pages) is that stage's own cause first.
        snap.stages[1].gilWaitSeconds = 0.5;
        QCOMPARE(pipeline::judgeBottleneck(snap).kind, pipeline::BottleneckKind::Gil);
        snap.stages[1].gilWaitSeconds = 0;
        snap.threads = 2;

        // A prefetch full (its input waits) and empty (its consumer waits) a good part of the time.
        snap.stages[2].async = true;
        snap.stages[2].queueCapacity = 1;
        snap.stages[2].waitConsumerSeconds = 0.3;
        snap.stages[2].waitInputSeconds = 0.1;
        QCOMPARE(pipeline::judgeBottleneck(snap).kind, pipeline::BottleneckKind::Compute); // rarely empty: not the buffer
        snap.stages[2].waitInputSeconds = 0.3;
        v = pipeline::judgeBottleneck(snap);
        QCOMPARE(v.node, std::string("pf"));
        QCOMPARE(v.kind, pipeline::BottleneckKind::Buffer);
        QVERIFY2(contains(v.reason, "buffer of 1") && contains(v.reason, "larger buffer_size"), v.reason.c_str());
        snap.stages[2].waitInputSeconds = 0;

        // Python: inside the function (compute) or waiting for the GIL.
        snap.stages[1].pythonSeconds = 0.6;
        snap.stages[1].gilWaitSeconds = 0.05;
        v = pipeline::judgeBottleneck(snap);
        QCOMPARE(v.kind, pipeline::BottleneckKind::Compute);
        QVERIFY2(contains(v.reason, "inside the Python function"), v.reason.c_str());
        snap.stages[1].gilWaitSeconds = 0.4;
        v = pipeline::judgeBottleneck(snap);
        QCOMPARE(v.kind, pipeline::BottleneckKind::Gil);
        QVERIFY2(contains(v.reason, "vectorise"), v.reason.c_str());

        snap.stages[1].pythonSeconds = snap.stages[1].gilWaitSeconds = 0;

        // A busiest stage mostly idle is no bottleneck: nothing is tagged, no advice is offered.
        snap.stages[0].utilisation = 0.05;
        snap.stages[1].utilisation = 0.13;
        v = pipeline::judgeBottleneck(snap);
        QCOMPARE(v.kind, pipeline::BottleneckKind::NoStage);
        QVERIFY(v.node.empty());
        QVERIFY2(contains(v.reason, "the busiest, m, 13%") && contains(v.reason, "will not help"), v.reason.c_str());
        QCOMPARE(pipeline::bottleneckKindName(v.kind), std::string("no_stage"));
        snap.stages[0].utilisation = 0.2;
        snap.stages[1].utilisation = 0.7;

        // AUTOTUNE sets the map's calls: its reason says so and never asks to raise them.
        snap.stages[1].tunesParallelism = true;
        snap.stages[1].tuned["num_parallel_calls"] = 1;
        v = pipeline::judgeBottleneck(snap);
        QCOMPARE(v.node, std::string("m"));
        QVERIFY2(contains(v.reason, "AUTOTUNE runs it on 1 of the 2 threads") && !contains(v.reason, "more num_parallel_calls"),
                 v.reason.c_str());
        snap.stages[1].tunesParallelism = false;
        snap.stages[1].tuned.clear();

        // Confidence: a verdict on too short a run, or on too few elements, says so.
        QVERIFY(pipeline::judgeBottleneck(snap).lowConfidence); // 1 s so far
        snap.elapsedSeconds = pipeline::kConfidentSeconds;
        snap.cpuSeconds = 1.5 * pipeline::kConfidentSeconds;
        QVERIFY(!pipeline::judgeBottleneck(snap).lowConfidence);
        snap.elements = pipeline::kConfidentElements - 1;
        QVERIFY(pipeline::judgeBottleneck(snap).lowConfidence);

        // Nothing ran: no verdict.
        pipeline::PipelineSnapshot idle;
        idle.stages = {stage("src", "range", 0)};
        QCOMPARE(pipeline::judgeBottleneck(idle).kind, pipeline::BottleneckKind::None);
        QVERIFY(pipeline::judgeBottleneck(idle).node.empty());
    }

    // ---- running pipelines with an injected cause ----

    void slowMapIsCompute()
    {
        // 64 batches of 4 rows; the noise over 64 Ki floats a batch is the work, on one call slot.
        auto p = buildPipeline(chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("b", "batch", {{"batch_size", 4}}),
                                      op("noise", "map", {{"function", "gaussian_noise"}, {"features", nlohmann::json::array({"x"})}, {"stddev", 1.0},
                                                          {"seed", 1}, {"num_parallel_calls", 1}}),
                                      op("pf", "prefetch", {{"buffer_size", 4}}), op("again", "repeat", {{"count", 6}})}),
                               m_dir.path().toStdString(), untunedOptions(2));
        QVERIFY(p);
        const auto snap = drain(*p);
        QVERIFY_VERDICT(snap, "noise", "compute");
        QVERIFY2(contains(snap.bottleneckReason, "more num_parallel_calls would help"), snap.bottleneckReason.c_str());
    }

    void slowStorageIsTheSources()
    {
        // Every page waits 100 µs: 400 µs a row, against a few microseconds to copy it.
        pipeline::setStorageThrottle(std::chrono::microseconds(100));
        auto p = buildPipeline(chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("shuf", "global_shuffle", {{"seed", 3}}),
                                      op("b", "batch", {{"batch_size", 8}, {"num_parallel_calls", 2}}),
                                      op("pf", "prefetch", {{"buffer_size", 2}})}),
                               m_dir.path().toStdString(), untunedOptions(2));
        QVERIFY(p);
        const auto snap = drain(*p);
        QVERIFY_VERDICT(snap, "src", "storage");
        QVERIFY2(contains(snap.bottleneckReason, "waits for storage"), snap.bottleneckReason.c_str());
        QVERIFY2(contains(snap.bottleneckReason, "more threads will not help"), snap.bottleneckReason.c_str());
        QVERIFY2(!contains(snap.bottleneckReason, "num_parallel_calls would help"), snap.bottleneckReason.c_str());
        const auto *src = &snap.stages.front();
        QVERIFY(src->storage && src->storage->waitShare >= 0.5 && src->storage->pagesPerRow >= 3.9);
    }

    void slowConsumerIsNotInputBound()
    {
        auto p = buildPipeline(chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("b", "batch", {{"batch_size", 8}}),
                                      op("pf", "prefetch", {{"buffer_size", 2}})}),
                               m_dir.path().toStdString(), untunedOptions(2));
        QVERIFY(p);
        p->setConsumerAttached(true);
        const auto snap = drain(*p, [](std::uint64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }); // the training step
        QVERIFY_VERDICT(snap, "consumer", "consumer");
        QCOMPARE(snap.inputBound, pipeline::InputBound::None);
        QVERIFY2(contains(snap.bottleneckReason, "keeps up"), snap.bottleneckReason.c_str());
    }

    void prefetchTooSmallIsItsBuffer()
    {
        // The producer takes about as long per batch as the consumer on average, but the consumer
        // alternates between long and no steps: a buffer of one is full during the long ones and
        // empty after the short ones.
        const std::string pipelineJson =
            chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("b", "batch", {{"batch_size", 4}}),
                   op("noise", "map", {{"function", "gaussian_noise"}, {"features", nlohmann::json::array({"x"})}, {"stddev", 1.0}, {"seed", 1}}),
                   op("pf", "prefetch", {{"buffer_size", 1}}), op("again", "repeat", {{"count", 3}})});
        // What one batch costs the producer, measured on the same pipeline as it will run (a
        // sanitizer build is several times slower): its map's busy time per batch.
        auto probe = buildPipeline(pipelineJson, m_dir.path().toStdString(), untunedOptions(2));
        QVERIFY(probe);
        const auto probed = drain(*probe);
        const auto perBatch = std::chrono::microseconds(std::int64_t(1e6 * probed.stages[2].busySeconds / double(probed.stages[2].elements)));
        qInfo("the producer's map: %lld us a batch", (long long)perBatch.count());
        auto p = buildPipeline(pipelineJson, m_dir.path().toStdString(), untunedOptions(2));
        QVERIFY(p);
        p->setConsumerAttached(true);
        const auto snap = drain(*p, [perBatch](std::uint64_t n) {
            if (n % 2 == 0)
                spin(2 * perBatch);
        });
        QVERIFY_VERDICT(snap, "pf", "buffer");
        QVERIFY2(contains(snap.bottleneckReason, "larger buffer_size"), snap.bottleneckReason.c_str());
    }

    void shuffleBufferStillFillingIsItsBuffer()
    {
        // A buffer of 40,000 elements: the first batch waits for all of them.
        auto p = buildPipeline(chain({op("src", "range", {{"stop", 1000000}}),
                                      op("to_float", "map", {{"function", "cast"}, {"dtype", "float32"}}),
                                      op("shuf", "shuffle", {{"buffer_size", 40000}, {"seed", 2}}), op("b", "batch", {{"batch_size", 32}})}),
                               m_dir.path().toStdString(), untunedOptions(2));
        QVERIFY(p);
        for (int i = 0; i < 3; ++i)
            QVERIFY(p->next().ok());
        const auto snap = p->snapshot();
        QVERIFY_VERDICT(snap, "shuf", "buffer");
        QVERIFY2(contains(snap.bottleneckReason, "buffer of 40000 elements") && contains(snap.bottleneckReason, "smaller buffer_size"),
                 snap.bottleneckReason.c_str());
        const auto &shuf = snap.stages[2];
        QCOMPARE(shuf.bufferSize, std::uint64_t(40000));
        QVERIFY(shuf.fillSeconds > 0 && shuf.buffered > 39000);
    }

    void interleaveCycleTooSmallIsTheInterleaves()
    {
        // Four files read through a CPU-bound per-file map, one file at a time on two threads.
        QDir(m_dir.path()).mkpath("parts");
        for (int i = 0; i < 4; ++i)
            writeWideRows(m_dir.filePath(QString("parts/p%1.npy").arg(i)), 64, 4096);
        auto p = buildPipeline(chain({op("src", "from_npy", {{"features", {{"x", "parts/p*.npy"}}}}),
                                      op("noise", "map", {{"function", "gaussian_noise"}, {"features", nlohmann::json::array({"x"})},
                                                          {"stddev", 1.0}, {"seed", 1}}),
                                      op("files", "interleave", {{"cycle_length", 1}, {"num_parallel_calls", 1}}),
                                      op("b", "batch", {{"batch_size", 8}}), op("again", "repeat", {{"count", 3}})}),
                               m_dir.path().toStdString(), untunedOptions(2));
        QVERIFY(p);
        const auto snap = drain(*p);
        QVERIFY_VERDICT(snap, "files", "buffer");
        QVERIFY2(contains(snap.bottleneckReason, "larger cycle_length"), snap.bottleneckReason.c_str());
    }

    void moreThreadsThanCoresIsContention()
    {
        const int threads = 4 * m_cores;
        auto p = buildPipeline(chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("b", "batch", {{"batch_size", 4}}),
                                      op("noise", "map", {{"function", "gaussian_noise"}, {"features", nlohmann::json::array({"x"})}, {"stddev", 1.0},
                                                          {"seed", 1}, {"num_parallel_calls", threads}}),
                                      op("pf", "prefetch", {{"buffer_size", threads}}), op("again", "repeat", {{"count", 8 * m_cores}})}),
                               m_dir.path().toStdString(), untunedOptions(threads));
        QVERIFY(p);
        const auto snap = drain(*p);
        QVERIFY_VERDICT(snap, "pipeline", "cpu_contention");
        QVERIFY2(contains(snap.bottleneckReason, std::to_string(threads) + " threads share " + std::to_string(m_cores) + " cores"),
                 snap.bottleneckReason.c_str());
    }

    void anotherProcessTakingTheCpuIsContention()
    {
        // Two busy processes a core beside a pipeline that uses every core.
        std::vector<std::unique_ptr<QProcess>> burners;
        for (int i = 0; i < 2 * m_cores; ++i) {
            burners.push_back(std::make_unique<QProcess>());
            burners.back()->start("sh", {"-c", "while :; do :; done"});
            QVERIFY(burners.back()->waitForStarted());
        }
        auto p = buildPipeline(chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("b", "batch", {{"batch_size", 4}}),
                                      op("noise", "map", {{"function", "gaussian_noise"}, {"features", nlohmann::json::array({"x"})}, {"stddev", 1.0},
                                                          {"seed", 1}, {"num_parallel_calls", m_cores}}),
                                      op("pf", "prefetch", {{"buffer_size", 4}}), op("again", "repeat", {{"count", 6 * m_cores}})}),
                               m_dir.path().toStdString(), untunedOptions(m_cores));
        QVERIFY(p);
        const auto snap = drain(*p);
        for (auto &burner : burners) {
            burner->kill();
            burner->waitForFinished();
        }
        QVERIFY_VERDICT(snap, "pipeline", "cpu_contention");
        QVERIFY2(contains(snap.bottleneckReason, "other processes kept"), snap.bottleneckReason.c_str());
    }

    void hostFunctionHoldingItsLockIsGil()
    {
        pipeline::setHostFunctions(std::make_shared<LockedHost>(std::chrono::microseconds(500)));
        nlohmann::json map = {{"function", "python"}, {"callable", "fake:f"}, {"num_parallel_calls", 2}};
        map["output_signature"]["value"] = {{"dtype", "int64"}, {"shape", nlohmann::json::array()}};
        auto p = buildPipeline(chain({op("src", "range", {{"stop", 400}}), op("py", "map", map), op("pf", "prefetch", {{"buffer_size", 2}})}),
                               m_dir.path().toStdString(), untunedOptions(2));
        QVERIFY(p);
        const auto snap = drain(*p);
        QVERIFY_VERDICT(snap, "py", "gil");
        QVERIFY2(contains(snap.bottleneckReason, "vectorise"), snap.bottleneckReason.c_str());
        QVERIFY2(contains(snap.bottleneckReason, "more num_parallel_calls will not help"), snap.bottleneckReason.c_str());
    }
};

QTEST_MAIN(TestBottleneckVerdicts)
#include "tst_bottleneck_verdicts.moc"
