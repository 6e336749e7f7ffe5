#pragma once
// Where pipeline work runs: tasks on a oneTBB task_arena of a fixed size (docs/architecture.md,
// decision 2), a cancellation flag every stage checks, and a way to wait until no task is left. oneTBB
// stays behind the pimpl so that no Qt translation unit ever sees its headers.
//
// Threading: every function may be called from any thread, tasks included.

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace sluice::pipeline {

class Runtime
{
public:
    explicit Runtime(int threads); // <= 0: all cores
    ~Runtime();                    // waits for every task
    Runtime(const Runtime &) = delete;
    Runtime &operator=(const Runtime &) = delete;

    int threads() const { return m_threads; }

    // Runs `task` on the arena. Tasks never block on each other: a stage whose input is not
    // ready returns and is re-spawned by the input's waker.
    void spawn(std::function<void()> task);
    // Blocks the calling thread (never a task) until no task is queued or running.
    void waitIdle();

    void cancel() { m_cancelled.store(true, std::memory_order_relaxed); }
    bool cancelled() const { return m_cancelled.load(std::memory_order_relaxed); }
    // The message of the first exception a task ended with (it also cancels), or empty.
    std::string failure() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
    int m_threads = 1;
    std::atomic<bool> m_cancelled{false};
};

} // namespace sluice::pipeline
