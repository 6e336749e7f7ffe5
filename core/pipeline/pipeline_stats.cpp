#include "pipeline/pipeline_stats.h"

namespace sluice::pipeline {

const char *inputBoundName(InputBound verdict)
{
    switch (verdict) {
    case InputBound::None: return "not input-bound";
    case InputBound::Moderately: return "moderately input-bound";
    case InputBound::Highly: return "highly input-bound";
    }
    return "";
}

InputBound classifyInputBound(double share)
{
    if (share < 0.05)
        return InputBound::None;
    if (share <= 0.20)
        return InputBound::Moderately;
    return InputBound::Highly;
}

nlohmann::json PipelineSnapshot::toJson() const
{
    nlohmann::json stagesJson = nlohmann::json::array();
    for (const auto &s : stages) {
        nlohmann::json j{{"id", s.id},
                         {"op", s.op},
                         {"elements", s.elements},
                         {"bytes", s.bytes},
                         {"elements_per_s", s.elementsPerSecond},
                         {"bytes_per_s", s.bytesPerSecond},
                         {"busy_s", s.busySeconds},
                         {"wait_input_s", s.waitInputSeconds},
                         {"utilisation", s.utilisation}};
        if (s.async) {
            j["wait_consumer_s"] = s.waitConsumerSeconds;
            j["queue_fill"] = s.queueFill;
            j["queue_capacity"] = s.queueCapacity;
            j["parallelism"] = s.parallelism;
        }
        if (!s.tuned.empty())
            j["tuned"] = s.tuned;
        stagesJson.push_back(std::move(j));
    }
    nlohmann::json j{{"elapsed_s", elapsedSeconds},
                     {"elements", elements},
                     {"elements_per_s", elementsPerSecond},
                     {"stages", std::move(stagesJson)},
                     {"bottleneck", bottleneck},
                     {"bottleneck_reason", bottleneckReason},
                     {"threads", threads},
                     {"ram_budget_bytes", ramBudgetBytes},
                     {"consumer_attached", consumerAttached}};
    if (consumerAttached) {
        j["input_bound_share"] = inputBoundShare;
        j["input_bound"] = inputBoundName(inputBound);
    }
    return j;
}

void StatsSink::publish(const PipelineSnapshot &snapshot)
{
    std::map<int, Observer> observers;
    {
        std::lock_guard lock(m_mutex);
        m_latest = snapshot;
        observers = m_observers;
    }
    for (const auto &[id, observer] : observers)
        observer(snapshot);
}

std::optional<PipelineSnapshot> StatsSink::latest() const
{
    std::lock_guard lock(m_mutex);
    return m_latest;
}

int StatsSink::subscribe(Observer observer)
{
    std::lock_guard lock(m_mutex);
    m_observers[m_nextId] = std::move(observer);
    return m_nextId++;
}

void StatsSink::unsubscribe(int id)
{
    std::lock_guard lock(m_mutex);
    m_observers.erase(id);
}

} // namespace sluice::pipeline
