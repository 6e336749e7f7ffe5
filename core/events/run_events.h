#pragma once
// The events of a run, defined once: what the trainer, the pipeline runner and the samplers
// emit, what `sluice run --json` prints and events.jsonl keeps, and what the run folder reader
// and the workbench read back. Each type is a struct; toJson() and fromJson() are the one
// encoder and decoder, so a key is spelt in this file's .cpp and nowhere else.
//
// One event is one JSON object with "event" naming its type:
//   run_start     a run begins (training: model, replicas, device…; pipeline: output node)
//   step          training progress, at most every TrainerOptions::stepEventInterval
//   epoch_end     an epoch's losses, metrics, validation figures and timings
//   stats         a pipeline snapshot (PipelineSnapshot's toJson() body)
//   checkpoint / resumed   a checkpoint written / a run continued from one
//   notice        something the user should know that is not an error ("note:" on the CLI)
//   advice_trial  `sluice run --try-advice`'s measurement
//   gpu / cpu     device samples (telemetry)
//   run_end       how the run ended, with the error's fields when it failed
//
// Decoding is strict about types (an error names the key and the event) and lenient about
// keys it does not know, so an events.jsonl written by a newer Sluice still reads.
//
// Threading: plain values and pure functions; any thread.

#include "events/run_status.h"
#include "io/error.h"
#include "pipeline/profile/pipeline_stats.h"
#include "telemetry/cpu_usage.h"
#include "telemetry/nvml_telemetry.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace sluice::events {

struct RunStart
{
    enum class Kind { Training, Pipeline };
    Kind kind = Kind::Training;
    // Training runs.
    std::string model; // Model::summary(), as printed above the run
    std::int64_t parameters = 0;
    int replicas = 1, processes = 1;
    std::string reducer, device = "cpu", sharding, optimizer;
    int epochs = 0;
    std::int64_t startStep = 0;
    int startEpoch = 0;
    // Pipeline runs.
    std::string output;           // the node the run iterates
    std::int64_t cardinality = -1; // elements per pass; -1 unknown, -2 infinite
};

struct Step
{
    std::int64_t step = 0;
    int epoch = 0;                 // counted from 1
    std::int64_t batch = 0;        // within the epoch
    double loss = 0;               // the epoch's mean so far
    double batchLoss = 0;
    double learningRate = 0;
    double samplesPerSecond = 0;
    double timeSeconds = 0;        // since the run started: the charts' shared time axis
    std::int64_t cardinality = -1; // batches per pass, when the pipeline knows
};

struct EpochEnd
{
    int epoch = 0;
    std::int64_t step = 0;
    // loss, <output>_loss, the metrics, then val_* (in the order the trainer gave them; decoded
    // events come in the JSON object's order).
    std::vector<std::pair<std::string, double>> values;
    double seconds = 0, samplesPerSecond = 0, learningRate = 0;

    std::optional<double> value(std::string_view name) const;
};

struct Stats
{
    pipeline::PipelineSnapshot snapshot; // encoded by PipelineSnapshot::toJson(), decoded by its fromJson()
    // What the input-bound share is measured against: "as fast as possible" or {"step_ms": x}
    // (a simulated training step); null when no consumer is named.
    nlohmann::json consumer;
};

struct Checkpoint
{
    std::int64_t step = 0;
    int epoch = 0;
    std::string path;
};

struct Resumed
{
    std::string path;
    std::int64_t step = 0;
};

struct Notice
{
    std::string message;
};

struct AdviceTrial
{
    std::string bottleneck, bottleneckKind;
    bool tried = false;
    std::string why;    // when not tried
    nlohmann::json trial; // pipeline::AdviceTrial::toJson() when tried
};

using GpuSample = telemetry::GpuSnapshot;
using CpuSample = CpuUsage;

struct RunEnd
{
    using Status = RunStatus;
    Status status = Status::Ok;
    std::optional<Error> error; // a failed run's, with its kind, node and parameter or layer and key
    // Training runs.
    std::optional<std::int64_t> step;
    std::optional<int> epoch;  // where a cancelled run stopped
    std::optional<int> epochs; // completed
    // Pipeline runs.
    std::optional<int> passes;
    std::optional<std::uint64_t> elements;
    std::optional<double> seconds;
    std::optional<Stats> stats; // the final snapshot (`sluice run --json`)
};

using Event = std::variant<RunStart, Step, EpochEnd, Stats, Checkpoint, Resumed, Notice, AdviceTrial, GpuSample, CpuSample, RunEnd>;

// "run_start", "step", … as the "event" key spells it.
const char *typeName(const Event &event);

nlohmann::json toJson(const Event &event);
// An error names the line's problem: not an object, no "event", an unknown type, a key of the
// wrong type ("step: \"loss\" must be a number").
Result<Event> fromJson(const nlohmann::json &json);
Result<Event> parseLine(std::string_view line);

// An Error as a failed run_end carries it: {"error": message, "error_kind", "node", "param",
// "layer", "key"}, and back (the message's `what` and reason are not split again: `what` is
// empty and `reason` the whole message).
void addErrorFields(nlohmann::json &event, const Error &error);
Error errorFromFields(const nlohmann::json &event);

template <typename T>
const T *as(const Event &event)
{
    return std::get_if<T>(&event);
}

} // namespace sluice::events
