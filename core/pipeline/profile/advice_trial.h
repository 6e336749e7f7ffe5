#pragma once
// Advice that is measured: the change a verdict's advice names (a parameter of a node, or the
// thread budget), and trials that run the project as it is and with the change, alternately,
// for the same time each over several rounds, reporting the speed-up with its spread. Nothing
// changes the user's project: trials run on copies.
//
// Threading: tryAdvice() runs pipelines on the calling thread and blocks until done; `cancel`
// may be set from another thread.

#include "io/error.h"
#include "pipeline/profile/bottleneck_verdict.h"
#include "pipeline/engine/pipeline.h"
#include "project/project.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <optional>
#include <string>

namespace sluice::pipeline {

struct AdviceChange
{
    std::string node;    // the node whose parameter changes; empty for the thread budget
    std::string param;   // "num_parallel_calls", "buffer_size", "cycle_length", or "threads"
    nlohmann::json from; // its value now (null when unset)
    nlohmann::json to;
    std::string text() const; // "set noise.num_parallel_calls from 1 to 2", "run with --threads 2 instead of 8"
    nlohmann::json toJson() const; // {"node", "param", "from", "to", "text"}
    // The inverse of toJson(); an error names what is missing or of the wrong type.
    static Result<AdviceChange> fromJson(const nlohmann::json &j);
};

// The change the verdict's advice names, where one parameter makes it; nothing for advice that
// needs other data, hardware or code (storage, the GIL) or none at all (the consumer).
std::optional<AdviceChange> adviceChange(const BottleneckVerdict &verdict, const PipelineSnapshot &snapshot, const Project &project);

// The project with the change, and the options (the thread budget) to run it with.
Project withChange(const Project &project, const AdviceChange &change);
PipelineOptions withChange(PipelineOptions options, const AdviceChange &change);

struct TrialRound
{
    double baseline = 0, changed = 0; // elements per second
    double speedup() const { return baseline > 0 ? changed / baseline : 0; }
};

struct AdviceTrial
{
    AdviceChange change;
    std::vector<TrialRound> rounds;
    double secondsEach = 0;
    double speedup = 0;          // the median of the rounds' speed-ups
    double lowest = 0, highest = 0; // their spread
    bool helps = false;          // every round faster by more than the noise allows
    std::string summary() const; // "1.84x (1.79-1.90 over 3 rounds of 2.0 s each): it helps"
    nlohmann::json toJson() const;
};

// A change helps when its slowest round is this much faster than the baseline.
constexpr double kHelpsAbove = 1.05;

// The verdict over a trial's rounds: the median speed-up, the spread, and whether it helps (its
// slowest round faster than kHelpsAbove). Apart from the measuring, so that it is tested on given
// figures.
void judge(AdviceTrial &trial);

// Runs `rounds` rounds of the project as it is, then with the change, for `secondsEach` each,
// and judges them.
Result<AdviceTrial> tryAdvice(const Project &project, const PipelineOptions &options, const AdviceChange &change, double secondsEach,
                              int rounds, const std::atomic<bool> *cancel = nullptr);

} // namespace sluice::pipeline
