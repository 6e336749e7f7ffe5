// AUTOTUNE's hill climbing on given counters and a simulated clock (no pipeline runs, nothing is
// timed): what each interval's figures make of a stage's parallelism and a prefetch's buffer,
// the CPU and RAM budgets that bound them, and the reason the inspector shows.
#include "pipeline/profile/autotuner.h"

#include <QtTest>

#include <cstdint>

using namespace sluice;
using namespace sluice::pipeline;

namespace {

constexpr std::int64_t kMs = 1'000'000;

// Counts `ms` milliseconds of an interval's figures into the stage's counters.
void addInterval(StageStats &s, std::int64_t busyMs, std::int64_t starvedMs, std::int64_t fullMs, std::uint64_t elements, std::uint64_t bytes)
{
    s.busyNs += busyMs * kMs;
    s.waitInputNs += starvedMs * kMs;
    s.waitConsumerNs += fullMs * kMs;
    s.elements += elements;
    s.bytes += bytes;
}

void parallelStage(StageStats &s, int parallelism)
{
    s.async = true;
    s.tunesParallelism = true;
    s.parallelism = parallelism;
    s.capacity = parallelism;
}

} // namespace

class TestAutotuner : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aStarvedBusyStageGetsATask()
    {
        StageStats map;
        parallelStage(map, 1);
        Autotuner tuner({&map}, 4, 1 << 30);
        QCOMPARE(autotuneReason(map, "num_parallel_calls", 1), std::string("starts at 1 (the CPU budget); tuned while the pipeline runs"));
        tuner.step(1000 * kMs); // the first step only takes the counters as they are
        QCOMPARE(map.parallelism.load(), 1);
        addInterval(map, 90, 10, 0, 100, 100 * 64);
        tuner.step(1050 * kMs); // within the 100 ms interval: nothing judged
        QCOMPARE(map.parallelism.load(), 1);
        tuner.step(1100 * kMs);
        QCOMPARE(map.parallelism.load(), 2);
        QCOMPARE(map.capacity.load(), 2);
        QCOMPARE(TuneDecision(map.parallelismDecision.load()), TuneDecision::Raised);
        QCOMPARE(autotuneReason(map, "num_parallel_calls", 2),
                 std::string("raised to 2: its consumer waited 10% of the time while each task was busy 90%"));
    }

    void theCpuBudgetBoundsEveryTunedStageTogether()
    {
        StageStats a, b;
        parallelStage(a, 1);
        parallelStage(b, 1);
        Autotuner tuner({&a, &b}, 3, 1 << 30);
        tuner.step(1000 * kMs);
        addInterval(a, 90, 10, 0, 100, 0);
        addInterval(b, 95, 20, 0, 100, 0);
        tuner.step(1100 * kMs);
        QCOMPARE(a.parallelism.load() + b.parallelism.load(), 3); // one of them raised: the budget's third task
        QCOMPARE(a.parallelism.load(), 2);
        addInterval(a, 190, 10, 0, 100, 0);
        addInterval(b, 95, 20, 0, 100, 0);
        tuner.step(1200 * kMs);
        QCOMPARE(a.parallelism.load(), 2);
        QCOMPARE(b.parallelism.load(), 1);
        QCOMPARE(TuneDecision(b.parallelismDecision.load()), TuneDecision::AtCpuBudget);
        QVERIFY(autotuneReason(b, "num_parallel_calls", 1).find("use the whole CPU budget") != std::string::npos);
    }

    void anIdleStageGivesATaskBack()
    {
        StageStats map;
        parallelStage(map, 3);
        Autotuner tuner({&map}, 4, 1 << 30);
        tuner.step(1000 * kMs);
        addInterval(map, 30, 0, 80, 50, 0); // 10% busy per task, its consumer never waited
        tuner.step(1100 * kMs);
        QCOMPARE(map.parallelism.load(), 2);
        QCOMPARE(TuneDecision(map.parallelismDecision.load()), TuneDecision::Lowered);
        QCOMPARE(autotuneReason(map, "num_parallel_calls", 2),
                 std::string("lowered to 2: its consumer never waited and each task was busy only 10%"));
        // Nothing produced in an interval (the consumer stopped): nothing to judge by.
        tuner.step(1200 * kMs);
        QCOMPARE(map.parallelism.load(), 2);
        QCOMPARE(TuneDecision(map.parallelismDecision.load()), TuneDecision::Kept);
    }

    void aBurstyProducersBufferGrowsByHalfWithinTheRamBudget()
    {
        StageStats prefetch;
        prefetch.async = true;
        prefetch.tunesBuffer = true;
        prefetch.capacity = 4;
        // 1 KiB elements: 4 buffered take 4 KiB; the budget allows 8.
        Autotuner tuner({&prefetch}, 2, 8 * 1024);
        tuner.step(1000 * kMs);
        addInterval(prefetch, 0, 10, 5, 100, 100 * 1024);
        tuner.step(1100 * kMs);
        QCOMPARE(prefetch.capacity.load(), 6);
        QCOMPARE(TuneDecision(prefetch.bufferDecision.load()), TuneDecision::Raised);
        QVERIFY(autotuneReason(prefetch, "buffer_size", 6).find("grown to 6") == 0);
        addInterval(prefetch, 0, 10, 5, 100, 100 * 1024);
        tuner.step(1200 * kMs); // 6 KiB + 3 more would pass 8 KiB
        QCOMPARE(prefetch.capacity.load(), 6);
        QCOMPARE(TuneDecision(prefetch.bufferDecision.load()), TuneDecision::AtRamBudget);
    }

    void aBufferThatNeverFillsIsKept()
    {
        StageStats prefetch;
        prefetch.async = true;
        prefetch.tunesBuffer = true;
        prefetch.capacity = 2;
        Autotuner tuner({&prefetch}, 2, 1 << 30);
        tuner.step(1000 * kMs);
        addInterval(prefetch, 0, 50, 0, 100, 100);
        tuner.step(1100 * kMs);
        QCOMPARE(prefetch.capacity.load(), 2);
        QCOMPARE(TuneDecision(prefetch.bufferDecision.load()), TuneDecision::Kept);
        QVERIFY2(autotuneReason(prefetch, "buffer_size", 2).find("its producer is simply slower") != std::string::npos,
                 autotuneReason(prefetch, "buffer_size", 2).c_str());
    }
};

QTEST_MAIN(TestAutotuner)
#include "tst_autotuner.moc"
