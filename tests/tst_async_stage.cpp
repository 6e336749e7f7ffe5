// The asynchronous engine behind prefetch, parallel map and the fused batch
// (pipeline/engine/async_stage.h), driven directly: results in input order whatever order the
// function's tasks finish in, every result exactly once in completion order when not
// deterministic, never more results held than the capacity, a function's error at its own
// position, and a stage left mid-stream with tasks in flight (ASan checks nothing outlives it).
#include "pipeline/engine/async_stage.h"
#include "pipeline/engine/runtime.h"

#include <QtTest>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

using namespace sluice;
using namespace sluice::pipeline;

namespace {

// 0, 1, …, count-1 as int64 scalars, never Pending.
class Counter final : public Iterator
{
public:
    explicit Counter(std::int64_t count) : m_count(count) {}
    Result<Poll> next(Element &out) override
    {
        if (m_next >= m_count)
            return Poll::End;
        out.tensors = {Tensor::scalar<std::int64_t>(m_next++)};
        return Poll::Ready;
    }

private:
    std::int64_t m_count, m_next = 0;
};

std::int64_t valueOf(const Element &e) { return e.tensors.front().as<std::int64_t>()[0]; }

// The consumer: waits on the stage's waker whenever it finds nothing ready.
struct Consumer
{
    std::mutex mutex;
    std::condition_variable cv;
    bool woken = false;
    Waker waker() { return [this] { std::lock_guard lock(mutex); woken = true; cv.notify_all(); }; }

    // Every value until the end, or the error's message after the values before it.
    std::vector<std::int64_t> drain(Iterator &it, std::string *error = nullptr)
    {
        std::vector<std::int64_t> values;
        for (;;) {
            {
                std::lock_guard lock(mutex);
                woken = false;
            }
            Element e;
            auto r = it.next(e);
            if (!r.ok()) {
                if (error)
                    *error = r.error().message();
                return values;
            }
            if (*r == Poll::End)
                return values;
            if (*r == Poll::Ready) {
                values.push_back(valueOf(e));
                continue;
            }
            std::unique_lock lock(mutex);
            cv.wait_for(lock, std::chrono::milliseconds(50), [this] { return woken; });
        }
    }
};

// Doubles the value; the even ones take longer, so tasks finish out of order.
AsyncStage::Function doubling(std::atomic<int> *inFlight = nullptr, std::atomic<int> *mostInFlight = nullptr)
{
    return [=](Element &&item, std::uint64_t) -> Result<Element> {
        if (inFlight) {
            const int now = ++*inFlight;
            int most = mostInFlight->load();
            while (now > most && !mostInFlight->compare_exchange_weak(most, now)) {
            }
        }
        const std::int64_t v = valueOf(item);
        if (v % 2 == 0)
            std::this_thread::sleep_for(std::chrono::microseconds(300));
        if (inFlight)
            --*inFlight;
        Element out;
        out.tensors = {Tensor::scalar<std::int64_t>(2 * v)};
        return out;
    };
}

std::vector<std::int64_t> doubled(std::int64_t count)
{
    std::vector<std::int64_t> v;
    for (std::int64_t i = 0; i < count; ++i)
        v.push_back(2 * i);
    return v;
}

} // namespace

class TestAsyncStage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void deterministicResultsComeInInputOrder()
    {
        Runtime runtime(4);
        Consumer consumer;
        StageStats stats;
        auto it = AsyncStage::start(
            {&runtime, consumer.waker()}, [](const IteratorContext &) { return std::make_unique<Counter>(200); }, doubling(),
            AsyncOptions{.parallelism = 4, .capacity = 8, .deterministic = true}, &stats);
        QCOMPARE(consumer.drain(*it), doubled(200));
    }

    void nondeterministicResultsComeEachOnce()
    {
        Runtime runtime(4);
        Consumer consumer;
        auto it = AsyncStage::start(
            {&runtime, consumer.waker()}, [](const IteratorContext &) { return std::make_unique<Counter>(200); }, doubling(),
            AsyncOptions{.parallelism = 4, .capacity = 8, .deterministic = false}, nullptr);
        auto values = consumer.drain(*it);
        std::sort(values.begin(), values.end());
        QCOMPARE(values, doubled(200));
    }

    void noMoreTasksThanTheParallelismAndNoMoreResultsThanTheCapacity()
    {
        Runtime runtime(4);
        Consumer consumer;
        StageStats stats;
        std::atomic<int> inFlight{0}, mostInFlight{0};
        auto it = AsyncStage::start(
            {&runtime, consumer.waker()}, [](const IteratorContext &) { return std::make_unique<Counter>(100); },
            doubling(&inFlight, &mostInFlight), AsyncOptions{.parallelism = 2, .capacity = 3, .deterministic = true}, &stats);
        // A slow consumer: the stage fills its buffer and waits.
        std::vector<std::int64_t> values;
        int mostQueued = 0;
        for (;;) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            mostQueued = std::max(mostQueued, stats.queued.load());
            Element e;
            auto r = it->next(e);
            QVERIFY(r.ok());
            if (*r == Poll::End)
                break;
            if (*r == Poll::Ready)
                values.push_back(valueOf(e));
        }
        QCOMPARE(values, doubled(100));
        QVERIFY2(mostInFlight.load() <= 2, qPrintable(QString::number(mostInFlight.load())));
        QVERIFY2(mostQueued <= 3, qPrintable(QString::number(mostQueued)));
        QCOMPARE(stats.capacity.load(), 3);
        QCOMPARE(stats.parallelism.load(), 2);
    }

    void anErrorComesAtItsPosition()
    {
        Runtime runtime(2);
        Consumer consumer;
        auto failing = [](Element &&item, std::uint64_t) -> Result<Element> {
            if (valueOf(item) == 13)
                return Error::invalid("m", "13 is not accepted");
            return std::move(item);
        };
        auto it = AsyncStage::start(
            {&runtime, consumer.waker()}, [](const IteratorContext &) { return std::make_unique<Counter>(50); }, failing,
            AsyncOptions{.parallelism = 2, .capacity = 4, .deterministic = true}, nullptr);
        std::string error;
        const auto values = consumer.drain(*it, &error);
        QCOMPARE(values.size(), std::size_t(13)); // 0 … 12, then the error
        QVERIFY2(error.find("13 is not accepted") != std::string::npos, error.c_str());
    }

    void leftMidStreamWithTasksInFlight()
    {
        Runtime runtime(4);
        for (int round = 0; round < 20; ++round) {
            Consumer consumer;
            auto it = AsyncStage::start(
                {&runtime, consumer.waker()}, [](const IteratorContext &) { return std::make_unique<Counter>(1000); }, doubling(),
                AsyncOptions{.parallelism = 4, .capacity = 8, .deterministic = round % 2 == 0}, nullptr);
            Element e;
            while (true) { // the first result, then the stage is dropped with its tasks still running
                auto r = it->next(e);
                QVERIFY(r.ok());
                if (*r == Poll::Ready)
                    break;
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            it.reset();
        }
        runtime.waitIdle(); // every task ends; ASan reports anything used after it was freed
    }
};

QTEST_MAIN(TestAsyncStage)
#include "tst_async_stage.moc"
