#pragma once
// What a running pipeline reports: per-stage figures, the bottleneck with its reason, and the
// input-bound share of the consumer's time, classified as TensorFlow's input-pipeline analyser
// does. Snapshots are plain values; StatsSink hands them to any observer thread-safely.

#include "io/error.h"
#include "util/mutex.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sluice::pipeline {

// How a mapped source's rows reached memory (see pass_storage.h).
struct StorageSnapshot
{
    std::string access;            // "sequential" or "random": the advice its mappings got
    std::uint64_t rowsRead = 0;
    double readSeconds = 0;        // copying rows out of the mappings
    double waitSeconds = 0;        // of which off the CPU, waiting for pages from storage
    double waitShare = 0;          // wait / read
    std::uint64_t majorFaults = 0; // pages a copy had to wait for, not read ahead
    std::uint64_t pagesReadAhead = 0;
    bool readAhead = false;
    std::uint64_t readAheadRows = 0, readAheadLimitRows = 0, readAheadLimitBytes = 0;
    std::uint64_t releases = 0;
    std::uint64_t residentBudgetBytes = 0, mappedBytes = 0;
    // Process-wide, from the kernel's I/O accounting: bytes read from storage per second, and
    // 4 KiB pages read per row read (readahead amplification; 0.25 for 1 KiB rows read in order).
    double storageBytesPerSecond = 0;
    double pagesPerRow = 0;
    // The device's random 4 KiB read rate as `sluice bench storage` measured it (0: unknown).
    std::string device;
    double deviceIops = 0;

    nlohmann::json toJson() const;
};

struct StageSnapshot
{
    std::string id, op;
    std::string note; // StageStats::note
    std::uint64_t skipped = 0; // elements left out by "on_error": "skip" (StageStats::skipped)
    bool async = false;
    std::uint64_t elements = 0, bytes = 0;
    double elementsPerSecond = 0, bytesPerSecond = 0;
    double busySeconds = 0;        // the stage's own work, its inputs' time excluded
    double waitInputSeconds = 0;   // waiting for its input (sync: time inside inputs; async: consumer found it empty)
    double waitConsumerSeconds = 0; // async: its buffer was full (backpressure)
    double utilisation = 0;        // busy / (elapsed × parallelism)
    double queueFill = -1;         // async: average buffer fill 0..1; -1 for sync stages
    int queueCapacity = 0;
    int parallelism = 0;           // async: tasks at once (0: sync)
    std::map<std::string, int> tuned; // AUTOTUNE'd parameters and their current values
    std::map<std::string, std::string> tunedWhy; // and why each is what it is (autotuneReason())
    std::optional<StorageSnapshot> storage; // mapped sources
    double pythonSeconds = 0;      // inside its Python function (map, filter predicate, generator)
    double gilWaitSeconds = 0;     // waiting for Python's GIL before a call could start
    // What the verdict (bottleneck_verdict.h) needs besides the figures: the threads its work
    // runs on, whether AUTOTUNE sets its num_parallel_calls, and the parallel interleave's
    // slots it runs in (0: none).
    int workers = 1;
    bool tunesParallelism = false;
    int concurrency = 0;
    std::string interleave;        // the parallel interleave whose slots it runs in ("" when none)
    // shuffle: its buffer's size (0 for other ops), the elements in it, and the time spent
    // filling it before each pass's first element, a fill under way included.
    std::uint64_t bufferSize = 0, buffered = 0;
    double fillSeconds = 0;
};

// Whether the source's rows come from storage rather than the page cache (pages read per row).
bool readsFromStorage(const StorageSnapshot &s);
// The bottleneck's reason when its time goes to waiting for storage: the read rate, the wait
// share, readahead amplification and what would help. Empty when storage is not what limits it.
std::string storageBottleneckReason(const StageSnapshot &stage);
// The bottleneck's reason when its time goes to a Python function: inside it, or waiting for the
// GIL (then more parallel calls cannot help, vectorising can). Empty for stages without one.
std::string pythonBottleneckReason(const StageSnapshot &stage);

enum class InputBound { None, Moderately, Highly };
const char *inputBoundName(InputBound verdict); // "not input-bound", "moderately input-bound", "highly input-bound"
// TensorFlow's thresholds: under 5% not input-bound, 5–20% moderately, over 20% highly.
InputBound classifyInputBound(double share);

struct PipelineSnapshot
{
    double elapsedSeconds = 0;
    std::uint64_t elements = 0; // delivered to the consumer
    double elementsPerSecond = 0;
    std::vector<StageSnapshot> stages; // in pipeline order, source first
    std::string bottleneck;            // a node id, "consumer", "pipeline" (CPU contention), or empty when nothing ran
    std::string bottleneckKind;        // bottleneckKindName(): "compute", "storage", "gil", "buffer", "cpu_contention", "consumer"
    std::string bottleneckReason;
    bool verdictLowConfidence = false; // judged on too short a run (BottleneckVerdict::lowConfidence)
    // The one parameter change the verdict's advice names, which `--try-advice` and the
    // workbench's Try Advice measure (AdviceChange::toJson()); null when the advice needs other
    // data, storage, code or hardware.
    nlohmann::json adviceChange;
    bool consumerAttached = false;
    double inputBoundShare = 0; // of the consumer's time since its first request
    InputBound inputBound = InputBound::None;
    int threads = 0;
    int cores = 0;           // the cores this process may run on
    double cpuSeconds = 0;   // CPU time the process got since the pipeline started (all its threads)
    // The machine since the pipeline started: the share of its CPU time busy (every process),
    // and the cores other processes kept busy on average (-1: unknown, no /proc/stat).
    double systemBusyShare = -1;
    double otherProcessCores = -1;
    std::uint64_t ramBudgetBytes = 0;
    std::uint64_t residentBytes = 0;       // the process's resident set
    std::uint64_t storageReadBytes = 0;    // read from storage since the pipeline started

    nlohmann::json toJson() const; // the "stats" event's body
    // The inverse of toJson() (what it writes comes back; fields it leaves out keep their
    // defaults); an error names the key of the wrong type, as the run events' decoder does.
    static Result<PipelineSnapshot> fromJson(const nlohmann::json &json);
};

// Thread-safe: publish() from the pipeline's thread, latest() and observers from anywhere.
class StatsSink
{
public:
    using Observer = std::function<void(const PipelineSnapshot &)>;
    void publish(const PipelineSnapshot &snapshot);
    std::optional<PipelineSnapshot> latest() const;
    // Observers are called on the publishing thread; keep them short (copy and return).
    int subscribe(Observer observer);
    void unsubscribe(int id);

private:
    mutable Mutex m_mutex;
    std::optional<PipelineSnapshot> m_latest GUARDED_BY(m_mutex);
    std::map<int, Observer> m_observers GUARDED_BY(m_mutex);
    int m_nextId GUARDED_BY(m_mutex) = 1;
};

} // namespace sluice::pipeline
