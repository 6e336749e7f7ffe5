#include "pipeline/engine/runtime.h"
#include "util/mutex.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>

namespace sluice::pipeline {

struct Runtime::Impl
{
    // Enqueued tasks are run by oneTBB's worker threads only (the consumer thread waits outside
    // the arena), so the worker pool must allow `threads` workers: oneTBB's default keeps one
    // slot for a main thread that here never joins.
    tbb::global_control workers;
    tbb::task_arena arena;
    Mutex mutex;
    std::condition_variable idle;
    long pending GUARDED_BY(mutex) = 0;
    std::string failure GUARDED_BY(mutex); // the first exception a task ended with
    std::atomic<bool> *cancelled = nullptr;

    void fail(const std::string &what)
    {
        MutexLock lock(mutex);
        if (failure.empty())
            failure = what.empty() ? "a pipeline task failed" : what;
        cancelled->store(true);
    }

    explicit Impl(int threads)
        : workers(tbb::global_control::max_allowed_parallelism,
                  std::max<std::size_t>(std::size_t(threads) + 1,
                                        tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism))),
          arena(threads, 0)
    {
    }
};

Runtime::Runtime(int threads)
{
    m_threads = threads > 0 ? threads : tbb::info::default_concurrency();
    m_impl = std::make_unique<Impl>(m_threads);
    m_impl->cancelled = &m_cancelled;
}

std::string Runtime::failure() const
{
    MutexLock lock(m_impl->mutex);
    return m_impl->failure;
}

Runtime::~Runtime()
{
    cancel();
    waitIdle();
}

void Runtime::spawn(std::function<void()> task)
{
    {
        MutexLock lock(m_impl->mutex);
        ++m_impl->pending;
    }
    Impl *impl = m_impl.get();
    // oneTBB calls enqueued functors as const; the task is moved out of a shared holder so that
    // what it captured is destroyed before the pending count drops.
    auto holder = std::make_shared<std::function<void()>>(std::move(task));
    impl->arena.enqueue([impl, holder] {
        {
            // The task (and what it captured: stage state it may be the last owner of) is
            // destroyed before the count drops, so waitIdle() means nothing of ours still runs.
            std::function<void()> run = std::move(*holder);
            try {
                run();
            } catch (const std::exception &e) {
                impl->fail(e.what());
            } catch (...) {
                impl->fail("unknown exception in a pipeline task");
            }
        }
        MutexLock lock(impl->mutex);
        if (--impl->pending == 0)
            impl->idle.notify_all();
    });
}

void Runtime::waitIdle()
{
    MutexLock lock(m_impl->mutex);
    while (m_impl->pending != 0)
        m_impl->idle.wait(lock.native());
}

} // namespace sluice::pipeline
