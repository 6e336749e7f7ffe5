#include "pipeline/engine/dataset.h"

#include "pipeline/engine/blocking_reader.h"
#include "pipeline/engine/runtime.h"

namespace sluice::pipeline {
namespace {

// Counts what a node produces and the time its consumer spends inside it.
class MeasuredIterator final : public Iterator
{
public:
    MeasuredIterator(std::unique_ptr<Iterator> inner, StageStats *stats) : m_inner(std::move(inner)), m_stats(stats) {}

    Result<Poll> next(Element &out) override
    {
        const std::int64_t t0 = nowNs();
        auto r = m_inner->next(out);
        m_stats->add(m_stats->inclusiveNs, nowNs() - t0);
        if (r.ok() && *r == Poll::Ready) {
            m_stats->elements.fetch_add(1, std::memory_order_relaxed);
            m_stats->bytes.fetch_add(out.nbytes(), std::memory_order_relaxed);
        }
        return r;
    }

private:
    std::unique_ptr<Iterator> m_inner;
    StageStats *m_stats;
};

} // namespace

std::vector<StageStats *> chainBelow(const StageStats *stats)
{
    std::vector<StageStats *> chain;
    for (const StageStats *s = stats; s && !s->inputs.empty(); s = s->inputs.front())
        chain.push_back(s->inputs.front());
    return chain;
}

std::unique_ptr<Iterator> Dataset::makeIterator(const IteratorContext &context) const
{
    auto raw = makeRawIterator(context);
    if (!m_stats)
        return raw;
    return std::make_unique<MeasuredIterator>(std::move(raw), m_stats);
}

BlockingReader::BlockingReader(const Dataset &dataset, Runtime &runtime) : m_runtime(runtime), m_signal(std::make_shared<Signal>())
{
    std::weak_ptr<Signal> weak = m_signal;
    IteratorContext context{&runtime, [weak] {
                                if (auto s = weak.lock()) {
                                    MutexLock lock(s->mutex);
                                    s->woken = true;
                                    s->cv.notify_all();
                                }
                            }};
    m_iterator = dataset.makeIterator(context);
}

BlockingReader::~BlockingReader() = default;

void BlockingReader::wake()
{
    MutexLock lock(m_signal->mutex);
    m_signal->woken = true;
    m_signal->cv.notify_all();
}

Result<std::optional<Element>> BlockingReader::next(std::chrono::milliseconds tick, const std::function<void()> &onTick)
{
    std::int64_t waitStart = 0;
    for (;;) {
        if (m_runtime.cancelled()) {
            const std::string failure = m_runtime.failure();
            if (!failure.empty())
                return Error::io("pipeline", failure);
            return Error::cancelled("pipeline");
        }
        {
            MutexLock lock(m_signal->mutex);
            m_signal->woken = false; // anything that happened before this poll is seen by it
        }
        Element element;
        auto r = m_iterator->next(element);
        if (!r.ok() || *r != Poll::Pending) {
            if (waitStart)
                m_waitedNs += nowNs() - waitStart;
            if (!r.ok())
                return r.error();
            if (*r == Poll::End)
                return std::optional<Element>{};
            return std::optional<Element>{std::move(element)};
        }
        if (!waitStart)
            waitStart = nowNs();
        MutexLock lock(m_signal->mutex);
        // wait_for with a predicate, written out so that the analysis sees `woken` read under the lock.
        const auto deadline = std::chrono::steady_clock::now() + tick;
        while (!m_signal->woken && m_signal->cv.wait_until(lock.native(), deadline) != std::cv_status::timeout) {
        }
        if (!m_signal->woken && onTick) {
            lock.unlock();
            onTick();
        }
    }
}

std::unique_ptr<Iterator> failingIterator(Error error)
{
    class Failing final : public Iterator
    {
    public:
        explicit Failing(Error e) : m_error(std::move(e)) {}
        Result<Poll> next(Element &) override { return m_error; }

    private:
        Error m_error;
    };
    return std::make_unique<Failing>(std::move(error));
}

Status drain(const Dataset &dataset, Runtime &runtime, const std::function<bool(Element &&)> &consume)
{
    BlockingReader reader(dataset, runtime);
    for (;;) {
        auto r = reader.next();
        if (!r.ok())
            return r.error();
        if (!*r)
            return Status::success();
        if (!consume(std::move(**r)))
            return Status::success();
    }
}

} // namespace sluice::pipeline
