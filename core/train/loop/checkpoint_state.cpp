#include "train/loop/checkpoint_state.h"

#include "io/json_fields.h"

#include <algorithm>
#include <limits>

namespace sluice::train {

namespace {

bool isCount(const nlohmann::json &v)
{
    return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

bool isIntCount(const nlohmann::json &v)
{
    return isCount(v) && v.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<int>::max());
}

template <typename Item>
bool isListOf(const nlohmann::json &v, Item item)
{
    return v.is_array() && std::all_of(v.begin(), v.end(), item);
}

bool isNumber(const nlohmann::json &v) { return v.is_number(); }
bool isNumberList(const nlohmann::json &v) { return isListOf(v, isNumber); }
bool isCountList(const nlohmann::json &v) { return isListOf(v, isCount); }
bool isMetricStates(const nlohmann::json &v) { return isListOf(v, isNumberList); }

bool isTotals(const nlohmann::json &v)
{
    return v.is_object() && (!v.contains("rows") || v["rows"].is_number()) && (!v.contains("output_loss") || isNumberList(v["output_loss"]));
}

} // namespace

nlohmann::json CheckpointState::toJson() const
{
    return {{"format", "sluice-checkpoint"},
            {"version", 1},
            {"step", step},
            {"epoch", epoch},
            {"batch_in_epoch", batchInEpoch},
            {"step_in_epoch", stepInEpoch},
            {"pass_counters", passCounters},
            {"validation_pass_counters", validationPassCounters},
            {"train_totals", trainTotals},
            {"held_totals", heldTotals},
            {"metric_states", metricStates},
            {"held_metric_states", heldMetricStates},
            {"replicas", replicas},
            {"workers", workers},
            {"parameters", parameters}};
}

Result<CheckpointState> CheckpointState::fromJson(const nlohmann::json &j, const std::string &path)
{
    if (!j.is_object())
        return Error::corrupt(path, "its training state is not a JSON object");
    CheckpointState s;
    JsonFields r(j, path + ": its training state");
    for (const char *key : {"step", "epoch", "batch_in_epoch", "step_in_epoch", "pass_counters", "train_totals", "metric_states", "replicas", "workers"})
        r.require(key);
    r.get("step", s.step, isCount, "a count");
    r.get("epoch", s.epoch, isIntCount, "a count");
    r.get("batch_in_epoch", s.batchInEpoch, isCount, "a count");
    r.get("step_in_epoch", s.stepInEpoch, isCount, "a count");
    r.get("pass_counters", s.passCounters, isCountList, "a list of counts");
    r.get("validation_pass_counters", s.validationPassCounters, isCountList, "a list of counts");
    r.get("train_totals", s.trainTotals, isTotals, "an object of running totals");
    r.get("held_totals", s.heldTotals, isTotals, "an object of running totals");
    r.get("metric_states", s.metricStates, isMetricStates, "a list of metric states (lists of numbers)");
    r.get("held_metric_states", s.heldMetricStates, isMetricStates, "a list of metric states (lists of numbers)");
    r.get("replicas", s.replicas, isCount, "a count");
    r.get("workers", s.workers, isIntCount, "a count");
    r.get("parameters", s.parameters, isCount, "a count");
    if (r.error())
        return *r.error();
    return s;
}

} // namespace sluice::train
