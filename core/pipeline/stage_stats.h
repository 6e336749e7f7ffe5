#pragma once
// Live counters of one pipeline node, written by whichever thread does the node's work and read
// by the stats snapshot at any time: relaxed atomics, no locks on the element path.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::pipeline {

inline std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
    std::atomic<std::int64_t> waitInputNs{0};    // async nodes: their consumer found nothing ready
    std::atomic<std::int64_t> waitConsumerNs{0}; // async nodes: their buffer was full
    std::atomic<int> queued{0};                  // async nodes: elements ready in the buffer
    std::atomic<int> capacity{0};                // async nodes: buffer size (tuned when AUTOTUNE)
    std::atomic<int> parallelism{0};             // async nodes: tasks at once (tuned when AUTOTUNE)
    bool tunesParallelism = false;
    bool tunesBuffer = false;
    // Sum of queued/capacity samples, for the average fill.
    std::atomic<std::uint64_t> fillSamples{0};
    std::atomic<std::uint64_t> fillSum{0}; // in 1/1000ths

    void add(std::atomic<std::int64_t> &counter, std::int64_t ns) { counter.fetch_add(ns, std::memory_order_relaxed); }
};

} // namespace sluice::pipeline
