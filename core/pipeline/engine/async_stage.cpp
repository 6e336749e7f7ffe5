#include "pipeline/engine/async_stage.h"

#include "pipeline/engine/runtime.h"

namespace sluice::pipeline {

class AsyncIterator final : public Iterator
{
public:
    explicit AsyncIterator(std::shared_ptr<AsyncStage> stage) : m_stage(std::move(stage)) {}
    ~AsyncIterator() override { m_stage->stop(); }
    Result<Poll> next(Element &out) override { return m_stage->take(out); }

private:
    std::shared_ptr<AsyncStage> m_stage;
};

std::unique_ptr<Iterator> AsyncStage::start(const IteratorContext &context,
                                            const std::function<std::unique_ptr<Iterator>(const IteratorContext &)> &makeInput,
                                            Function function, AsyncOptions options, StageStats *stats)
{
    auto stage = std::make_shared<AsyncStage>(context.runtime, context.waker, std::move(function), options, stats);
    // The input wakes the pump through a weak reference: an input never keeps its consumer alive.
    std::weak_ptr<AsyncStage> weak = stage;
    // Wakers run on the arena thread that made the input ready, so the pump continues right
    // there instead of paying for a task hand-off (and a sleeping worker's wake-up) per element.
    stage->m_input = makeInput(IteratorContext{context.runtime, [weak] {
                                                   if (auto s = weak.lock())
                                                       s->schedulePump(true);
                                               }});
    stage->schedulePump();
    return std::make_unique<AsyncIterator>(std::move(stage));
}

AsyncStage::AsyncStage(Runtime *runtime, Waker consumerWaker, Function function, AsyncOptions options, StageStats *stats)
    : m_runtime(runtime), m_consumerWaker(std::move(consumerWaker)), m_function(std::move(function)), m_options(options),
      m_stats(stats ? stats : &m_ownStats)
{
    if (m_stats->capacity.load() <= 0)
        m_stats->capacity.store(std::max(1, options.capacity));
    if (m_stats->parallelism.load() <= 0 && options.parallelism > 0)
        m_stats->parallelism.store(options.parallelism);
}

AsyncStage::~AsyncStage() = default;

int AsyncStage::capacity() const
{
    return std::max({1, m_stats->capacity.load(std::memory_order_relaxed), m_function && m_options.parallelism > 0
                                                                                ? m_stats->parallelism.load(std::memory_order_relaxed)
                                                                                : 1});
}

void AsyncStage::stop()
{
    MutexLock lock(m_mutex);
    m_stopped = true;
}

void AsyncStage::schedulePump(bool runHere)
{
    {
        MutexLock lock(m_mutex);
        if (m_stopped)
            return;
        if (m_pumpScheduled) {
            m_pumpRerun = true; // the running pump looks again before it ends
            return;
        }
        m_pumpScheduled = true;
        m_pumpBlocked = false;
    }
    if (runHere)
        pump();
    else
        m_runtime->spawn([self = shared_from_this()] { self->pump(); });
}

bool AsyncStage::takeConsumerWaiting()
{
    const bool waiting = m_consumerWaiting;
    m_consumerWaiting = false;
    if (waiting && m_emptySince) {
        m_stats->add(m_stats->waitInputNs, nowNs() - m_emptySince);
        m_emptySince = 0;
    }
    return waiting;
}

void AsyncStage::noteFill()
{
    const int queued = int(m_done.size() + m_doneUnordered.size());
    m_stats->queued.store(queued, std::memory_order_relaxed);
}

void AsyncStage::pump()
{
    for (;;) {
        bool wake = false;
        {
            MutexLock lock(m_mutex);
            const bool full = m_inFlight + int(m_done.size() + m_doneUnordered.size()) >= capacity() ||
                              (m_function && m_options.parallelism > 0 &&
                               m_inFlight >= std::max(1, m_stats->parallelism.load(std::memory_order_relaxed)));
            if (m_stopped || m_runtime->cancelled() || m_inputEnded || m_inputError || full) {
                if (m_pumpRerun && !m_stopped && !m_runtime->cancelled()) {
                    m_pumpRerun = false;
                    continue;
                }
                if (full && !m_fullSince)
                    m_fullSince = nowNs();
                m_pumpBlocked = full;
                m_pumpScheduled = false;
                return;
            }
            if (m_fullSince) {
                m_stats->add(m_stats->waitConsumerNs, nowNs() - m_fullSince);
                m_fullSince = 0;
            }
        }

        Element item;
        Result<Poll> r = Poll::Pending;
        try {
            r = m_input->next(item);
        } catch (const std::bad_alloc &) {
            r = Error::outOfMemory("pipeline", "out of memory");
        }
        if (!r.ok() || *r == Poll::End) {
            MutexLock lock(m_mutex);
            if (!r.ok())
                m_inputError = r.error();
            m_inputEnded = true;
            wake = takeConsumerWaiting();
        } else if (*r == Poll::Pending) {
            MutexLock lock(m_mutex);
            if (m_pumpRerun) {
                m_pumpRerun = false;
                continue;
            }
            m_pumpScheduled = false;
            return;
        } else {
            std::uint64_t sequence;
            bool parallel = false;
            {
                MutexLock lock(m_mutex);
                sequence = m_nextIn++;
                parallel = m_function && m_options.parallelism > 0;
                if (parallel)
                    ++m_inFlight;
            }
            if (parallel) {
                m_runtime->spawn([self = shared_from_this(), item = std::move(item), sequence]() mutable {
                    self->runFunction(std::move(item), sequence);
                });
                continue;
            }
            if (m_function) {
                const std::int64_t t0 = nowNs();
                auto result = m_function(std::move(item), sequence);
                m_stats->add(m_stats->busyNs, nowNs() - t0);
                deliver(sequence, std::move(result));
            } else {
                deliver(sequence, std::move(item));
            }
            continue;
        }
        if (wake)
            m_consumerWaker();
    }
}

void AsyncStage::runFunction(Element &&item, std::uint64_t sequence)
{
    {
        MutexLock lock(m_mutex);
        if (m_stopped || m_runtime->cancelled()) {
            --m_inFlight;
            return;
        }
    }
    const std::int64_t t0 = nowNs();
    Result<Element> result = Error::outOfMemory("pipeline", "out of memory");
    try {
        result = m_function(std::move(item), sequence);
    } catch (const std::bad_alloc &) {
    }
    m_stats->add(m_stats->busyNs, nowNs() - t0);
    // The in-flight count drops in the same critical section that stores the result: a consumer
    // seeing no task in flight and the input ended must also see every result.
    deliver(sequence, std::move(result), true);
    bool blocked;
    {
        MutexLock lock(m_mutex);
        blocked = m_pumpBlocked;
    }
    if (blocked)
        schedulePump(true); // a slot is free: pull the next item on this thread
}

void AsyncStage::deliver(std::uint64_t sequence, Result<Element> result, bool fromTask)
{
    bool wake = false;
    {
        MutexLock lock(m_mutex);
        if (fromTask)
            --m_inFlight;
        if (m_options.deterministic)
            m_done.emplace(sequence, std::move(result));
        else
            m_doneUnordered.push_back(std::move(result));
        noteFill();
        // In order, only the element the consumer waits for is worth waking it for.
        if (!m_options.deterministic || sequence == m_nextOut)
            wake = takeConsumerWaiting();
    }
    if (wake)
        m_consumerWaker();
}

Result<Poll> AsyncStage::take(Element &out)
{
    std::optional<Result<Element>> result;
    {
        MutexLock lock(m_mutex);
        if (m_options.deterministic) {
            auto it = m_done.find(m_nextOut);
            if (it != m_done.end()) {
                result.emplace(std::move(it->second));
                m_done.erase(it);
                ++m_nextOut;
            }
        } else if (!m_doneUnordered.empty()) {
            result.emplace(std::move(m_doneUnordered.front()));
            m_doneUnordered.pop_front();
            ++m_nextOut;
        }
        if (result) {
            noteFill();
            m_stats->fillSamples.fetch_add(1, std::memory_order_relaxed);
            m_stats->fillSum.fetch_add(std::uint64_t(1000.0 * double(m_done.size() + m_doneUnordered.size() + 1) / capacity()),
                                       std::memory_order_relaxed);
        } else {
            m_stats->fillSamples.fetch_add(1, std::memory_order_relaxed);
            if (m_inFlight == 0 && m_inputEnded) {
                if (m_inputError) {
                    Error e = *m_inputError;
                    m_inputError.reset();
                    return e;
                }
                return Poll::End;
            }
            if (!m_consumerWaiting) {
                m_consumerWaiting = true;
                if (!m_emptySince)
                    m_emptySince = nowNs();
            }
        }
    }
    if (!result) {
        return Poll::Pending;
    }
    bool blocked;
    {
        MutexLock lock(m_mutex);
        const int left = m_inFlight + int(m_done.size() + m_doneUnordered.size());
        blocked = m_pumpBlocked && (m_options.refillAt < 0 || left <= m_options.refillAt);
    }
    if (blocked)
        schedulePump(); // room in the buffer; the consumer may be the main thread, so a task pumps
    if (!result->ok())
        return result->error();
    out = std::move(result->value());
    return Poll::Ready;
}

} // namespace sluice::pipeline
