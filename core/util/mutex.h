#pragma once
// A std::mutex that clang's thread safety analysis can see (util/thread_annotations.h), and its
// scoped lock. Costs what std::mutex and std::unique_lock cost: they are all there is inside.
//
//   Mutex m_mutex;
//   int m_count GUARDED_BY(m_mutex) = 0;
//   ...
//   MutexLock lock(m_mutex);
//   ++m_count;
//   m_changed.wait(lock.native()); // a std::condition_variable waits on the lock inside

#include "util/thread_annotations.h"

#include <mutex>

namespace sluice {

class CAPABILITY("mutex") Mutex
{
public:
    void lock() ACQUIRE() { m_mutex.lock(); }
    void unlock() RELEASE() { m_mutex.unlock(); }
    bool try_lock() TRY_ACQUIRE(true) { return m_mutex.try_lock(); }

private:
    friend class MutexLock;
    std::mutex m_mutex;
};

class SCOPED_CAPABILITY MutexLock
{
public:
    explicit MutexLock(Mutex &mutex) ACQUIRE(mutex) : m_lock(mutex.m_mutex) {}
    ~MutexLock() RELEASE() {}
    MutexLock(const MutexLock &) = delete;
    MutexLock &operator=(const MutexLock &) = delete;

    // Lets go early, and takes it again (a wake-up sent outside the lock).
    void unlock() RELEASE() { m_lock.unlock(); }
    void lock() ACQUIRE() { m_lock.lock(); }

    // What std::condition_variable waits on. The wait lets go and takes the lock again inside;
    // to the analysis the lock is held throughout, as it is whenever the caller's code runs.
    std::unique_lock<std::mutex> &native() { return m_lock; }

private:
    std::unique_lock<std::mutex> m_lock;
};

} // namespace sluice
