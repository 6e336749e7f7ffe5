#include "events/run_events.h"

#include "io/json_fields.h"

#include <algorithm>
#include <concepts>
#include <set>
#include <type_traits>

namespace sluice::events {

using nlohmann::json;

namespace {

// Reads the keys of one event ("event \"step\""), checking each one's type.
class Reader : public JsonFields
{
public:
    Reader(const json &j, const char *type) : JsonFields(j, std::string("event \"") + type + "\"") {}
};

// Each event's keys, declared once for both directions: fields(e, f) calls f(key, member) for
// every plain field, with `e` const when encoding and not when decoding.
template <typename E, typename T>
concept EventOf = std::same_as<std::remove_const_t<E>, T>;

template <EventOf<RunStart> E, typename F>
void trainingFields(E &e, F &&f)
{
    f("model", e.model), f("parameters", e.parameters), f("replicas", e.replicas), f("processes", e.processes);
    f("reducer", e.reducer), f("device", e.device), f("sharding", e.sharding), f("optimizer", e.optimizer);
    f("epochs", e.epochs), f("start_step", e.startStep), f("start_epoch", e.startEpoch);
}

template <EventOf<RunStart> E, typename F>
void pipelineFields(E &e, F &&f)
{
    f("output", e.output), f("cardinality", e.cardinality);
}

template <EventOf<Step> E, typename F>
void fields(E &e, F &&f)
{
    f("step", e.step), f("epoch", e.epoch), f("batch", e.batch), f("loss", e.loss), f("batch_loss", e.batchLoss);
    f("learning_rate", e.learningRate), f("samples_per_s", e.samplesPerSecond), f("time_s", e.timeSeconds);
    f("cardinality", e.cardinality);
}

// EpochEnd's named keys; every other number of the event is a loss or a metric.
template <EventOf<EpochEnd> E, typename F>
void fields(E &e, F &&f)
{
    f("epoch", e.epoch), f("step", e.step), f("seconds", e.seconds), f("samples_per_s", e.samplesPerSecond);
    f("learning_rate", e.learningRate);
}

template <EventOf<Checkpoint> E, typename F>
void fields(E &e, F &&f)
{
    f("step", e.step), f("epoch", e.epoch), f("path", e.path);
}

template <EventOf<Resumed> E, typename F>
void fields(E &e, F &&f)
{
    f("path", e.path), f("step", e.step);
}

template <EventOf<Notice> E, typename F>
void fields(E &e, F &&f)
{
    f("message", e.message);
}

template <EventOf<CpuSample> E, typename F>
void fields(E &e, F &&f)
{
    f("time", e.time), f("process_percent", e.processPercent), f("cores", e.cores);
}

template <EventOf<telemetry::GpuReading> E, typename F>
void fields(E &e, F &&f)
{
    f("index", e.index), f("name", e.name), f("utilization_percent", e.utilizationPercent);
    f("memory_used_bytes", e.memoryUsedBytes), f("memory_total_bytes", e.memoryTotalBytes), f("power_watts", e.powerWatts);
    f("temperature_c", e.temperatureC);
}

// RunEnd's optional figures (its status, stats and error are not plain fields).
template <EventOf<RunEnd> E, typename F>
void fields(E &e, F &&f)
{
    f("step", e.step), f("epoch", e.epoch), f("epochs", e.epochs), f("passes", e.passes), f("elements", e.elements);
    f("seconds", e.seconds);
}

template <typename T>
struct IsOptional : std::false_type
{
};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type
{
};

// Writes a field into `j`: an absent optional is left out, or written as null where
// `nullForAbsent` (the GPU readings, whose absent figures the charts show as gaps).
struct Writer
{
    json &j;
    bool nullForAbsent = false;
    template <typename T>
    void operator()(const char *key, const T &value) const
    {
        if constexpr (IsOptional<T>::value) {
            if (value)
                j[key] = *value;
            else if (nullForAbsent)
                j[key] = nullptr;
        } else {
            j[key] = value;
        }
    }
};

// Reads a field from the event, its type checked (Reader).
struct FieldReader
{
    JsonFields &r;
    template <typename T>
    void operator()(const char *key, T &value) const
    {
        r.get(key, value);
    }
};

template <typename E>
json encodeFields(const E &e)
{
    json j = json::object();
    fields(e, Writer{j});
    return j;
}

json encode(const RunStart &e)
{
    json j{{"kind", e.kind == RunStart::Kind::Pipeline ? "pipeline" : "training"}};
    if (e.kind == RunStart::Kind::Pipeline)
        pipelineFields(e, Writer{j});
    else
        trainingFields(e, Writer{j});
    return j;
}

json encode(const Step &e) { return encodeFields(e); }

json encode(const EpochEnd &e)
{
    json j = encodeFields(e);
    for (const auto &[name, value] : e.values)
        j[name] = value;
    return j;
}

json encode(const Stats &e)
{
    json j = e.snapshot.toJson();
    if (!e.consumer.is_null())
        j["consumer"] = e.consumer;
    return j;
}

json encode(const Checkpoint &e) { return encodeFields(e); }
json encode(const Resumed &e) { return encodeFields(e); }
json encode(const Notice &e) { return encodeFields(e); }

json encode(const AdviceTrial &e)
{
    json j{{"bottleneck", e.bottleneck}, {"bottleneck_kind", e.bottleneckKind}, {"tried", e.tried}};
    if (!e.tried)
        j["why"] = e.why;
    else if (e.trial.is_object())
        j.update(e.trial);
    return j;
}

json encode(const GpuSample &e)
{
    json devices = json::array();
    for (const auto &r : e.devices) {
        json d = json::object();
        fields(r, Writer{d, true});
        devices.push_back(std::move(d));
    }
    return {{"time", e.timeSeconds}, {"devices", devices}};
}

json encode(const CpuSample &e) { return encodeFields(e); }

json encode(const RunEnd &e)
{
    json j = encodeFields(e);
    j["status"] = runStatusName(e.status);
    if (e.stats)
        j["stats"] = encode(*e.stats);
    if (e.error)
        addErrorFields(j, *e.error);
    return j;
}

Result<Stats> decodeStats(const json &j)
{
    auto snapshot = pipeline::PipelineSnapshot::fromJson(j);
    if (!snapshot)
        return snapshot.error();
    Stats s;
    s.snapshot = std::move(*snapshot);
    if (const auto it = j.find("consumer"); it != j.end())
        s.consumer = *it;
    return s;
}

Result<Event> decode(const json &j, const std::string &type)
{
    Reader r(j, type.c_str());
    auto done = [&](Event e) -> Result<Event> {
        if (r.error())
            return *r.error();
        return e;
    };
    if (type == "run_start") {
        RunStart e;
        std::string kind = "training";
        r.get("kind", kind);
        e.kind = kind == "pipeline" ? RunStart::Kind::Pipeline : RunStart::Kind::Training;
        trainingFields(e, FieldReader{r});
        pipelineFields(e, FieldReader{r});
        return done(e);
    }
    if (type == "step") {
        Step e;
        if (!r.has("step"))
            r.fail("step", "there");
        fields(e, FieldReader{r});
        return done(e);
    }
    if (type == "epoch_end") {
        EpochEnd e;
        std::set<std::string> named{"event"};
        fields(e, [&](const char *key, auto &value) {
            r.get(key, value);
            named.insert(key);
        });
        // Every other number is a loss or a metric; "loss" leads as the trainer writes it.
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string &k = it.key();
            if (named.count(k))
                continue;
            if (!it->is_number()) {
                r.fail(k, "a number (a loss or metric)");
                continue;
            }
            e.values.emplace_back(k, it->get<double>());
        }
        std::stable_partition(e.values.begin(), e.values.end(), [](const auto &v) { return v.first == "loss"; });
        return done(e);
    }
    if (type == "stats") {
        auto stats = decodeStats(j);
        if (!stats)
            return stats.error();
        return done(std::move(*stats));
    }
    if (type == "checkpoint") {
        Checkpoint e;
        fields(e, FieldReader{r});
        return done(e);
    }
    if (type == "resumed") {
        Resumed e;
        fields(e, FieldReader{r});
        return done(e);
    }
    if (type == "notice") {
        Notice e;
        fields(e, FieldReader{r});
        return done(e);
    }
    if (type == "advice_trial") {
        AdviceTrial e;
        r.get("bottleneck", e.bottleneck);
        r.get("bottleneck_kind", e.bottleneckKind);
        r.get("tried", e.tried);
        r.get("why", e.why);
        if (e.tried) {
            e.trial = j;
            for (const char *k : {"event", "bottleneck", "bottleneck_kind", "tried", "why"})
                e.trial.erase(k);
        }
        return done(e);
    }
    if (type == "gpu") {
        GpuSample e;
        r.get("time", e.timeSeconds);
        const auto devices = j.find("devices");
        if (devices != j.end() && !devices->is_array())
            r.fail("devices", "a list");
        else if (devices != j.end())
            for (const json &d : *devices) {
                if (!d.is_object()) {
                    r.fail("devices", "a list of objects");
                    break;
                }
                Reader dr(d, "gpu");
                telemetry::GpuReading g;
                fields(g, FieldReader{dr});
                if (dr.error())
                    return *dr.error();
                e.devices.push_back(std::move(g));
            }
        return done(e);
    }
    if (type == "cpu") {
        CpuSample e;
        fields(e, FieldReader{r});
        return done(e);
    }
    if (type == "run_end") {
        RunEnd e;
        std::string status = "ok";
        r.get("status", status);
        if (const auto known = runStatusFromName(status))
            e.status = *known;
        else
            r.fail("status", "\"ok\", \"failed\" or \"cancelled\"");
        fields(e, FieldReader{r});
        if (const auto it = j.find("stats"); it != j.end() && it->is_object()) {
            auto stats = decodeStats(*it);
            if (!stats)
                return stats.error();
            e.stats = std::move(*stats);
        }
        if (r.has("error"))
            e.error = errorFromFields(j);
        return done(e);
    }
    return Error::unsupported("event \"" + type + "\"", "not an event type this Sluice knows");
}

} // namespace

std::optional<double> EpochEnd::value(std::string_view name) const
{
    for (const auto &[key, v] : values)
        if (key == name)
            return v;
    return std::nullopt;
}

} // namespace sluice::events

namespace sluice {

const char *runStatusName(RunStatus status)
{
    switch (status) {
    case RunStatus::Ok: return "ok";
    case RunStatus::Failed: return "failed";
    case RunStatus::Cancelled: return "cancelled";
    }
    return "failed";
}

std::optional<RunStatus> runStatusFromName(std::string_view name)
{
    for (RunStatus s : {RunStatus::Ok, RunStatus::Failed, RunStatus::Cancelled})
        if (name == runStatusName(s))
            return s;
    return std::nullopt;
}

} // namespace sluice

namespace sluice::events {

const char *typeName(const Event &event)
{
    static constexpr const char *names[] = {"run_start", "step", "epoch_end", "stats", "checkpoint", "resumed",
                                            "notice",    "advice_trial", "gpu", "cpu", "run_end"};
    static_assert(std::size(names) == std::variant_size_v<Event>);
    return names[event.index()];
}

json toJson(const Event &event)
{
    json j = std::visit([](const auto &e) { return encode(e); }, event);
    j["event"] = typeName(event);
    return j;
}

Result<Event> fromJson(const json &j)
{
    if (!j.is_object())
        return Error::corrupt("event", "not a JSON object");
    const auto type = j.find("event");
    if (type == j.end() || !type->is_string())
        return Error::corrupt("event", "has no \"event\" naming its type");
    return decode(j, type->get<std::string>());
}

Result<Event> parseLine(std::string_view line)
{
    json j = json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded())
        return Error::corrupt("event", "not valid JSON");
    return fromJson(j);
}

void addErrorFields(json &event, const Error &error)
{
    event["error"] = error.message();
    event["error_kind"] = kindName(error.kind);
    for (const auto &[key, value] : {std::pair{"node", &error.node}, {"param", &error.param}, {"layer", &error.layer}, {"key", &error.key}})
        if (!value->empty())
            event[key] = *value;
}

Error errorFromFields(const json &event)
{
    auto text = [&](const char *key) {
        const auto it = event.find(key);
        return it != event.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    Error e = Error::make(kindFromName(text("error_kind")), {}, text("error"));
    e.node = text("node");
    e.param = text("param");
    e.layer = text("layer");
    e.key = text("key");
    return e;
}

} // namespace sluice::events
