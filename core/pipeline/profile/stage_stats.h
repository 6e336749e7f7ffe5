#pragma once
// Live counters of one pipeline node, written by whichever thread does the node's work and read
// by the stats snapshot at any time: relaxed atomics, no locks on the element path.

#include "util/mutex.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace sluice::pipeline {

inline std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// How a mapped source's rows reach memory (pass_storage.h): written by the tasks that read
// them, shown under the source in the stats.
struct StorageStats
{
    enum Access : int { None = 0, Sequential = 1, Random = 2 };
    std::atomic<int> access{None};              // the advice its mappings got for the current pass
    std::atomic<int> readers{0};                // tasks reading its rows at once (the fused batch's)
    std::atomic<std::uint64_t> rowsRead{0};     // rows copied out of the mappings
    std::atomic<std::int64_t> readNs{0};        // wall time of those copies
    std::atomic<std::int64_t> timedReadNs{0};   // of which measured with the CPU clock (pass_storage.h samples)
    std::atomic<std::int64_t> waitNs{0};        // of those, off the CPU: waiting for pages from storage
    std::atomic<std::uint64_t> majorFaults{0};  // pages the copies had to wait for, not read ahead
    std::atomic<std::uint64_t> pagesReadAhead{0}; // pages found missing and requested ahead
    std::atomic<bool> readAhead{false};           // rows are requested ahead (the data comes from storage)
    std::atomic<std::uint64_t> readAheadRows{0};  // rows requested ahead of the copy (AUTOTUNE'd)
    std::atomic<std::uint64_t> readAheadLimitRows{0}; // the read-ahead budget in rows
    std::atomic<std::uint64_t> readAheadLimitBytes{0};
    std::atomic<std::uint64_t> releases{0};     // times pages were released from the resident set
    std::atomic<std::uint64_t> residentBudgetBytes{0};
    std::atomic<std::uint64_t> mappedBytes{0};
};

struct StageStats
{
    std::string nodeId;
    std::string op;
    bool async = false; // runs its work on tasks of its own (prefetch, parallel map, interleave, fused batch)
    std::vector<StageStats *> inputs; // for telling a node's own time from its inputs'

    std::atomic<std::uint64_t> elements{0};
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<std::int64_t> inclusiveNs{0};    // time inside next(), inputs' time included
    std::atomic<std::int64_t> busyNs{0};         // async nodes: work done on their tasks
    // Async nodes: time their tasks spent on work charged to another stage (the fused batch's
    // reads of mapped rows, charged to the source); AUTOTUNE counts it as the tasks' work.
    std::atomic<std::int64_t> offloadedNs{0};
    std::atomic<std::int64_t> waitInputNs{0};    // async nodes: their consumer found nothing ready
    std::atomic<std::int64_t> waitConsumerNs{0}; // async nodes: their buffer was full
    std::atomic<int> queued{0};                  // async nodes: elements ready in the buffer
    std::atomic<int> capacity{0};                // async nodes: buffer size (tuned when AUTOTUNE)
    std::atomic<int> parallelism{0};             // async nodes: tasks at once (tuned when AUTOTUNE)
    bool tunesParallelism = false;
    bool tunesBuffer = false;
    // AUTOTUNE's last decision on each value (TuneDecision, autotuner.h) and the figures of the
    // interval it decided on, in thousandths: the inspector shows why a value is what it is.
    std::atomic<int> parallelismDecision{0}, bufferDecision{0};
    std::atomic<int> tuneStarvedPermille{0}, tuneBusyPerTaskPermille{0}, tuneFullPermille{0};
    // Sum of queued/capacity samples, for the average fill.
    std::atomic<std::uint64_t> fillSamples{0};
    std::atomic<std::uint64_t> fillSum{0}; // in 1/1000ths
    bool readsMappedRows = false; // a source whose rows are read from file mappings
    // Synchronous stages below a parallel interleave run in its slots, this many at once (set at
    // build time; 0: on their consumer's thread, one element at a time), and which interleave.
    int concurrency = 0;
    std::string interleaveId;
    std::string note; // set at build time: what the stage did that the user should know (a cache rebuilt, and why)
    // cache: a pass ended before its end (a run stopped early, take or steps_per_epoch after
    // it), so nothing was cached and the next pass reads upstream again (tf.data warns the same).
    std::atomic<bool> cacheCutShort{false};
    static constexpr const char *kCacheCutShortNote =
        "a pass ended before its end, so nothing was cached: the next pass reads its input again (cache keeps only a complete pass)";
    // shuffle: its buffer's size, the elements in it, and the time spent filling it before a
    // pass's first element (summed over passes; fillingSinceNs set while a fill is under way).
    std::uint64_t shuffleBufferSize = 0;
    std::atomic<std::uint64_t> shuffleBuffered{0};
    std::atomic<std::int64_t> fillNs{0};
    std::atomic<std::int64_t> fillingSinceNs{0};
    // Set at build time for mapped sources whose device `sluice bench storage` measured
    // (storage_probe.h): its name and random 4 KiB reads per second.
    std::string storageDevice;
    double storageDeviceIops = 0;
    StorageStats storage;
    // Host (Python) functions of the node (host_functions.h): time inside them, and time waiting
    // for the interpreter (Python's GIL) before a call could start.
    std::atomic<std::int64_t> hostNs{0};
    std::atomic<std::int64_t> hostWaitNs{0};

    // Elements left out because their input was bad and the node says "on_error": "skip" (a
    // corrupt image, an unreadable file), and why the first one was.
    std::atomic<std::uint64_t> skipped{0};
    void recordSkip(const std::string &reason)
    {
        if (skipped.fetch_add(1, std::memory_order_relaxed) == 0) {
            MutexLock lock(m_skipMutex);
            m_firstSkipReason = reason;
        }
    }
    std::string firstSkipReason() const
    {
        MutexLock lock(m_skipMutex);
        return m_firstSkipReason;
    }

    void add(std::atomic<std::int64_t> &counter, std::int64_t ns) { counter.fetch_add(ns, std::memory_order_relaxed); }

private:
    mutable Mutex m_skipMutex;
    std::string m_firstSkipReason GUARDED_BY(m_skipMutex);
};

} // namespace sluice::pipeline
