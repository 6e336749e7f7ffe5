#pragma once
// What a running pipeline reports: per-stage figures, the bottleneck with its reason, and the
// input-bound share of the consumer's time, classified as TensorFlow's input-pipeline analyser
// does. Snapshots are plain values; StatsSink hands them to any observer thread-safely.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sluice::pipeline {

struct StageSnapshot
{
    std::string id, op;
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
};

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
    std::string bottleneck;            // a node id, "consumer", or empty when nothing ran
    std::string bottleneckReason;
    bool consumerAttached = false;
    double inputBoundShare = 0; // of the consumer's time since its first request
    InputBound inputBound = InputBound::None;
    int threads = 0;
    std::uint64_t ramBudgetBytes = 0;

    nlohmann::json toJson() const; // the "stats" event's body
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
    mutable std::mutex m_mutex;
    std::optional<PipelineSnapshot> m_latest; // GUARDED_BY(m_mutex)
    std::map<int, Observer> m_observers;      // GUARDED_BY(m_mutex)
    int m_nextId = 1;                         // GUARDED_BY(m_mutex)
};

} // namespace sluice::pipeline
