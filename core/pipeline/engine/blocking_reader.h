#pragma once
// The consumer's side of a pipeline: waits (on the calling thread, never an arena task) for the
// next element of a dataset, waking on the iterator's waker, on cancellation, or every `tick`
// so the caller can publish statistics and tune while it waits.
//
// Threading: one consumer thread; cancellation comes through the Runtime from any thread.

#include "pipeline/engine/dataset.h"
#include "util/mutex.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace sluice::pipeline {

class BlockingReader
{
public:
    BlockingReader(const Dataset &dataset, Runtime &runtime);
    ~BlockingReader();

    // The next element; nothing at the end; an error when the pipeline failed or was cancelled.
    // `onTick` (may be empty) runs on this thread about every `tick` while waiting.
    Result<std::optional<Element>> next(std::chrono::milliseconds tick = std::chrono::milliseconds(20),
                                        const std::function<void()> &onTick = {});
    // Nanoseconds spent waiting inside next() so far (the consumer was input-bound).
    std::int64_t waitedNs() const { return m_waitedNs; }

    // Wakes a next() that is waiting (cancellation does it through this).
    void wake();

private:
    struct Signal
    {
        Mutex mutex;
        std::condition_variable cv;
        bool woken GUARDED_BY(mutex) = false;
    };
    Runtime &m_runtime;
    std::shared_ptr<Signal> m_signal;
    std::unique_ptr<Iterator> m_iterator;
    std::int64_t m_waitedNs = 0;
};

} // namespace sluice::pipeline
