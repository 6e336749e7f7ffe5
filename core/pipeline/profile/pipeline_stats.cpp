#include "pipeline/profile/pipeline_stats.h"

#include "io/json_fields.h"

#include <algorithm>
#include <cstdio>

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

nlohmann::json StorageSnapshot::toJson() const
{
    return {{"access", access},
            {"rows_read", rowsRead},
            {"read_s", readSeconds},
            {"wait_s", waitSeconds},
            {"wait_share", waitShare},
            {"major_faults", majorFaults},
            {"pages_read_ahead", pagesReadAhead},
            {"read_ahead", readAhead},
            {"read_ahead_rows", readAheadRows},
            {"read_ahead_limit_rows", readAheadLimitRows},
            {"read_ahead_limit_bytes", readAheadLimitBytes},
            {"releases", releases},
            {"resident_budget_bytes", residentBudgetBytes},
            {"mapped_bytes", mappedBytes},
            {"storage_bytes_per_s", storageBytesPerSecond},
            {"pages_per_row", pagesPerRow},
            {"device", device},
            {"device_random_read_iops", deviceIops}};
}

bool readsFromStorage(const StorageSnapshot &s)
{
    // A page per hundred rows: less is the odd page the cache had dropped, not a storage-bound read.
    return s.pagesPerRow >= 0.01;
}

std::string storageBottleneckReason(const StageSnapshot &stage)
{
    // Waiting off the CPU for most of its reading time, or reading at 80% or more of what the
    // device was measured to do (read-ahead then hides part of the wait, but the device is the
    // limit all the same): the storage limits this stage, and more threads or
    // num_parallel_calls cannot help.
    if (!stage.storage || stage.storage->readSeconds <= 0)
        return {};
    const StorageSnapshot &s = *stage.storage;
    const double readsPerSecond = s.storageBytesPerSecond / 4096;
    // Only random access compares with random reads (an in-order pass's pages come in large reads).
    const bool atDeviceLimit = s.access == "random" && s.deviceIops > 0 && readsPerSecond >= 0.8 * s.deviceIops;
    if (s.waitShare < 0.5 && !atDeviceLimit)
        return {};
    // Time off the CPU with nothing read from storage is not a storage wait (another process
    // took the CPU): no storage verdict without pages brought in.
    if (!readsFromStorage(s))
        return {};
    // Against the device's measured limit, the advice differs: at the limit only less reading or
    // faster storage helps; below it, more reads in flight do.
    std::string device;
    std::string advice = "cache the data if it fits (cache), read ahead further (prefetch), read more files at once (interleave), "
                         "or use faster storage";
    if (s.deviceIops > 0) {
        const double share = readsPerSecond / s.deviceIops;
        char text[256];
        // Pages read per second against 4 KiB reads per second: over 100% when neighbouring pages
        // travel in one read, or the device is faster now than when it was measured.
        std::snprintf(text, sizeof text, "; %.0f%% of the %.0f random reads/s %s can do (measured by sluice bench storage%s)",
                      100 * share, s.deviceIops, s.device.c_str(), share > 1.05 ? "; pages read together count once there" : "");
        device = text;
        if (share >= 0.8)
            advice = "the device is at its limit: cache the data if it fits (cache), store it in the order it is read "
                     "(shuffle a buffer instead of the whole file), or use faster storage";
        else
            advice = "the device has headroom: keep more reads in flight (prefetch, more files at once with interleave), or cache "
                     "the data if it fits (cache)";
    } else {
        device = "; the device's limit is not known (measure it with sluice bench storage FILE)";
    }
    char text[1024];
    std::snprintf(text, sizeof text,
                  "%s waits for storage: %.0f%% of its reading time waiting for pages, %.1f MB/s (%.0f pages/s) from storage%s, "
                  "%.2f pages read per row (%s access%s); more threads will not help: %s",
                  stage.op.c_str(), 100 * s.waitShare, s.storageBytesPerSecond / 1e6, readsPerSecond, device.c_str(), s.pagesPerRow,
                  s.access.c_str(), s.readAhead ? ", rows requested ahead" : "", advice.c_str());
    return text;
}

std::string pythonBottleneckReason(const StageSnapshot &stage)
{
    const double python = stage.pythonSeconds, wait = stage.gilWaitSeconds;
    if (python + wait <= 0)
        return {};
    const double busy = std::max(stage.busySeconds, python + wait);
    char text[400];
    if (wait >= 0.25 * (python + wait))
        std::snprintf(text, sizeof text,
                      "%.0f%% of its time waiting for Python's GIL and %.0f%% inside the Python function: Python runs one call at a "
                      "time, so more num_parallel_calls will not help; vectorise the function (batch first, then map over whole batches)",
                      100 * wait / busy, 100 * python / busy);
    else
        std::snprintf(text, sizeof text,
                      "%.0f%% of its time inside the Python function; vectorise it (batch first, then map over whole batches) or move "
                      "the work into built-in functions",
                      100 * python / busy);
    return text;
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
        if (!s.note.empty())
            j["note"] = s.note;
        if (s.skipped)
            j["skipped"] = s.skipped;
        if (!s.tuned.empty())
            j["tuned"] = s.tuned;
        if (!s.tunedWhy.empty())
            j["tuned_why"] = s.tunedWhy;
        if (s.bufferSize > 0) {
            j["buffer_size"] = s.bufferSize;
            j["buffered"] = s.buffered;
            j["fill_s"] = s.fillSeconds;
        }
        if (s.storage)
            j["storage"] = s.storage->toJson();
        if (s.pythonSeconds + s.gilWaitSeconds > 0) {
            j["python_s"] = s.pythonSeconds;
            j["gil_wait_s"] = s.gilWaitSeconds;
        }
        stagesJson.push_back(std::move(j));
    }
    nlohmann::json j{{"elapsed_s", elapsedSeconds},
                     {"elements", elements},
                     {"elements_per_s", elementsPerSecond},
                     {"stages", std::move(stagesJson)},
                     {"bottleneck", bottleneck},
                     {"bottleneck_kind", bottleneckKind},
                     {"bottleneck_reason", bottleneckReason},
                     {"verdict_confidence", verdictLowConfidence ? "low" : "ok"},
                     {"advice_change", adviceChange},
                     {"threads", threads},
                     {"cores", cores},
                     {"cpu_s", cpuSeconds},
                     {"system_busy_share", systemBusyShare},
                     {"other_process_cores", otherProcessCores},
                     {"ram_budget_bytes", ramBudgetBytes},
                     {"resident_bytes", residentBytes},
                     {"storage_read_bytes", storageReadBytes},
                     {"consumer_attached", consumerAttached}};
    if (consumerAttached) {
        j["input_bound_share"] = inputBoundShare;
        j["input_bound"] = inputBoundName(inputBound);
    }
    return j;
}

namespace {

void readStorage(const nlohmann::json &j, StorageSnapshot &s, JsonFields &errors)
{
    JsonFields f(j, "stats: storage");
    f.get("access", s.access);
    f.get("rows_read", s.rowsRead);
    f.get("read_s", s.readSeconds);
    f.get("wait_s", s.waitSeconds);
    f.get("wait_share", s.waitShare);
    f.get("major_faults", s.majorFaults);
    f.get("pages_read_ahead", s.pagesReadAhead);
    f.get("read_ahead", s.readAhead);
    f.get("read_ahead_rows", s.readAheadRows);
    f.get("read_ahead_limit_rows", s.readAheadLimitRows);
    f.get("read_ahead_limit_bytes", s.readAheadLimitBytes);
    f.get("releases", s.releases);
    f.get("resident_budget_bytes", s.residentBudgetBytes);
    f.get("mapped_bytes", s.mappedBytes);
    f.get("storage_bytes_per_s", s.storageBytesPerSecond);
    f.get("pages_per_row", s.pagesPerRow);
    f.get("device", s.device);
    f.get("device_random_read_iops", s.deviceIops);
    if (f.error())
        errors.fail(*f.error());
}

void readStage(const nlohmann::json &j, StageSnapshot &s, JsonFields &errors)
{
    JsonFields f(j, "stats: stage");
    f.get("id", s.id);
    f.get("op", s.op);
    f.get("note", s.note);
    f.get("skipped", s.skipped);
    f.get("elements", s.elements);
    f.get("bytes", s.bytes);
    f.get("elements_per_s", s.elementsPerSecond);
    f.get("bytes_per_s", s.bytesPerSecond);
    f.get("busy_s", s.busySeconds);
    f.get("wait_input_s", s.waitInputSeconds);
    f.get("utilisation", s.utilisation);
    // Buffered stages carry their queue; toJson() writes it only for them.
    s.async = f.has("queue_capacity");
    f.get("wait_consumer_s", s.waitConsumerSeconds);
    f.get("queue_fill", s.queueFill);
    f.get("queue_capacity", s.queueCapacity);
    f.get("parallelism", s.parallelism);
    if (const auto it = j.find("tuned"); it != j.end() && it->is_object())
        for (const auto &[k, v] : it->items()) {
            if (!v.is_number_integer())
                f.fail("tuned." + k, "a whole number");
            else
                s.tuned[k] = v.get<int>();
        }
    if (const auto it = j.find("tuned_why"); it != j.end() && it->is_object())
        for (const auto &[k, v] : it->items())
            if (v.is_string())
                s.tunedWhy[k] = v.get<std::string>();
    f.get("buffer_size", s.bufferSize);
    f.get("buffered", s.buffered);
    f.get("fill_s", s.fillSeconds);
    f.get("python_s", s.pythonSeconds);
    f.get("gil_wait_s", s.gilWaitSeconds);
    if (const auto it = j.find("storage"); it != j.end() && it->is_object()) {
        s.storage.emplace();
        readStorage(*it, *s.storage, f);
    }
    if (f.error())
        errors.fail(*f.error());
}

} // namespace

Result<PipelineSnapshot> PipelineSnapshot::fromJson(const nlohmann::json &j)
{
    if (!j.is_object())
        return Error::corrupt("stats", "not a JSON object");
    PipelineSnapshot s;
    JsonFields f(j, "stats");
    f.get("elapsed_s", s.elapsedSeconds);
    f.get("elements", s.elements);
    f.get("elements_per_s", s.elementsPerSecond);
    if (const auto it = j.find("stages"); it != j.end() && !it->is_null()) {
        if (!it->is_array()) {
            f.fail("stages", "a list");
        } else {
            for (const auto &stage : *it) {
                if (!stage.is_object()) {
                    f.fail("stages", "a list of objects");
                    break;
                }
                readStage(stage, s.stages.emplace_back(), f);
            }
        }
    }
    f.get("bottleneck", s.bottleneck);
    f.get("bottleneck_kind", s.bottleneckKind);
    f.get("bottleneck_reason", s.bottleneckReason);
    std::string confidence = "ok";
    f.get("verdict_confidence", confidence);
    s.verdictLowConfidence = confidence == "low";
    if (const auto it = j.find("advice_change"); it != j.end())
        s.adviceChange = *it;
    f.get("threads", s.threads);
    f.get("cores", s.cores);
    f.get("cpu_s", s.cpuSeconds);
    f.get("system_busy_share", s.systemBusyShare);
    f.get("other_process_cores", s.otherProcessCores);
    f.get("ram_budget_bytes", s.ramBudgetBytes);
    f.get("resident_bytes", s.residentBytes);
    f.get("storage_read_bytes", s.storageReadBytes);
    f.get("consumer_attached", s.consumerAttached);
    f.get("input_bound_share", s.inputBoundShare);
    s.inputBound = classifyInputBound(s.inputBoundShare);
    if (f.error())
        return *f.error();
    return s;
}

void StatsSink::publish(const PipelineSnapshot &snapshot)
{
    std::map<int, Observer> observers;
    {
        MutexLock lock(m_mutex);
        m_latest = snapshot;
        observers = m_observers;
    }
    for (const auto &[id, observer] : observers)
        observer(snapshot);
}

std::optional<PipelineSnapshot> StatsSink::latest() const
{
    MutexLock lock(m_mutex);
    return m_latest;
}

int StatsSink::subscribe(Observer observer)
{
    MutexLock lock(m_mutex);
    m_observers[m_nextId] = std::move(observer);
    return m_nextId++;
}

void StatsSink::unsubscribe(int id)
{
    MutexLock lock(m_mutex);
    m_observers.erase(id);
}

} // namespace sluice::pipeline
