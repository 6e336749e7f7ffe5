#pragma once
// AUTOTUNE: while the pipeline runs, adjusts the parallelism of stages whose num_parallel_calls is
// AUTOTUNE and the buffer size of prefetches whose buffer_size is AUTOTUNE, by hill climbing on
// what the counters of the last interval show:
//   - a parallel stage whose consumer waited for it while its tasks were busy gets one more task,
//     while the AUTOTUNE'd stages together stay within the CPU budget; one whose consumer never
//     waited and whose tasks idle gives one back;
//   - a prefetch whose consumer found it empty although it was also full at times (the producer
//     is bursty, so a deeper buffer smooths it) grows by half, while all buffers together
//     (capacity × average element size) stay within the RAM budget. A buffer that never fills
//     would not help: its producer is simply slower than the consumer.
// The values chosen are the stages' `parallelism` / `capacity` counters, which the stages read
// before each decision and the snapshot reports.
//
// Threading: step() from one thread (the consumer's, between elements or while it waits).

#include "pipeline/profile/stage_stats.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sluice::pipeline {

enum class TuneDecision {
    None,        // no interval judged yet
    Raised,      // one more task / a deeper buffer: its consumer waited while it was busy / bursty
    Lowered,     // one task fewer: its tasks idled and its consumer never waited
    Kept,        // the figures asked for no change
    AtCpuBudget, // more tasks would help, but the AUTOTUNE'd stages use the whole CPU budget
    AtRamBudget, // a deeper buffer would help, but the buffers would pass the RAM budget
};

// Why an AUTOTUNE'd value (`param`: "num_parallel_calls" or "buffer_size") of `stats` is what
// it is: "raised to 2: its consumer waited 12% of the time while each task was busy 85%".
std::string autotuneReason(const StageStats &stats, const std::string &param, int value);

class Autotuner
{
public:
    Autotuner(std::vector<StageStats *> stages, int cpuBudget, std::uint64_t ramBudgetBytes);
    // Looks at the counters since the last step and adjusts; does nothing within `interval`.
    void step(std::int64_t nowNanoseconds);

private:
    struct Seen
    {
        std::int64_t busy = 0, waitInput = 0, waitConsumer = 0;
        std::uint64_t elements = 0, bytes = 0;
    };
    std::vector<StageStats *> m_stages;
    int m_cpuBudget;
    std::uint64_t m_ramBudget;
    std::int64_t m_last = 0;
    std::map<StageStats *, Seen> m_seen;
    static constexpr std::int64_t kIntervalNs = 100'000'000;
};

} // namespace sluice::pipeline
