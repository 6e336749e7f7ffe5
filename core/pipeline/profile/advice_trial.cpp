#include "pipeline/profile/advice_trial.h"

#include "io/text_format.h"

#include <algorithm>
#include <chrono>

namespace sluice::pipeline {
namespace {

const StageSnapshot *stageOf(const PipelineSnapshot &snapshot, const std::string &id)
{
    for (const StageSnapshot &s : snapshot.stages)
        if (s.id == id)
            return &s;
    return nullptr;
}

nlohmann::json valueOf(const Project &project, const std::string &node, const std::string &param)
{
    const PipelineNode *n = project.findNode(node);
    return n && n->params.contains(param) ? n->params[param] : nlohmann::json();
}

// Elements per second of one pipeline over `seconds`, passes restarted as needed.
Result<double> measure(const Project &project, const PipelineOptions &options, double seconds, const std::atomic<bool> *cancel)
{
    auto built = Pipeline::build(project, options);
    if (!built)
        return built.error();
    Pipeline &p = **built;
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t elements = 0;
    double elapsed = 0;
    while ((elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) < seconds) {
        if (cancel && cancel->load())
            return Error::cancelled("trial");
        auto next = p.next();
        if (!next)
            return next.error();
        if (*next) {
            ++elements;
        } else if (elements == 0) {
            return Error::invalid("trial", "the pipeline gives no elements");
        } else {
            p.restart();
        }
    }
    return double(elements) / elapsed;
}

} // namespace

std::string AdviceChange::text() const
{
    if (node.empty())
        return "run with --" + param + " " + to.dump() + " instead of " + from.dump();
    return "set " + node + "." + param + " from " + (from.is_null() ? std::string("unset") : from.dump()) + " to " + to.dump();
}

std::optional<AdviceChange> adviceChange(const BottleneckVerdict &verdict, const PipelineSnapshot &snapshot, const Project &project)
{
    const int threads = std::max(1, snapshot.threads);
    if (verdict.kind == BottleneckKind::Contention) {
        if (snapshot.cores > 0 && snapshot.threads > snapshot.cores)
            return AdviceChange{"", "threads", snapshot.threads, snapshot.cores};
        return std::nullopt; // another process: nothing in the project to change
    }
    const StageSnapshot *stage = stageOf(snapshot, verdict.node);
    const PipelineNode *node = project.findNode(verdict.node);
    if (!stage || !node)
        return std::nullopt;
    // A value AUTOTUNE sets is never advice to raise by hand: the tuner's reason says why it is
    // where it is.
    auto change = [&](const std::string &param, nlohmann::json to) -> std::optional<AdviceChange> {
        if (stage->tuned.count(param) || (param == "num_parallel_calls" && stage->tunesParallelism))
            return std::nullopt;
        return AdviceChange{verdict.node, param, valueOf(project, verdict.node, param), std::move(to)};
    };
    if (verdict.kind == BottleneckKind::Buffer) {
        if (node->op == "prefetch")
            return change("buffer_size", std::max(4, 4 * std::max(1, stage->queueCapacity)));
        if (node->op == "shuffle" && stage->bufferSize > 1)
            return change("buffer_size", std::max<std::uint64_t>(1, stage->bufferSize / 4));
        if (node->op == "interleave")
            return change("cycle_length", threads);
        return std::nullopt;
    }
    if (verdict.kind != BottleneckKind::Compute)
        return std::nullopt;
    // More calls at once, up to the thread budget, where the op takes num_parallel_calls.
    if ((node->op == "map" || node->op == "batch") && stage->pythonSeconds + stage->gilWaitSeconds == 0) {
        const int now = stage->async ? std::max(1, stage->parallelism) : 1;
        if (now < threads)
            return change("num_parallel_calls", threads);
    }
    return std::nullopt;
}

nlohmann::json AdviceChange::toJson() const { return {{"node", node}, {"param", param}, {"from", from}, {"to", to}, {"text", text()}}; }

Result<AdviceChange> AdviceChange::fromJson(const nlohmann::json &j)
{
    if (!j.is_object() || !j.contains("to"))
        return Error::invalid("advice_change", "expected an object with \"node\", \"param\", \"from\" and \"to\", got " + j.dump());
    for (const char *key : {"node", "param"})
        if (!j.contains(key) || !j[key].is_string())
            return Error::invalid("advice_change", std::string("\"") + key + "\" must be a string");
    AdviceChange change{j["node"].get<std::string>(), j["param"].get<std::string>(), j.value("from", nlohmann::json()), j["to"]};
    if (change.param.empty() || (change.node.empty() && change.param != "threads"))
        return Error::invalid("advice_change", "names no parameter: " + j.dump());
    return change;
}

Project withChange(const Project &project, const AdviceChange &change)
{
    Project changed = project;
    for (PipelineNode &node : changed.nodes)
        if (node.id == change.node)
            node.params[change.param] = change.to;
    return changed;
}

PipelineOptions withChange(PipelineOptions options, const AdviceChange &change)
{
    if (change.node.empty() && change.param == "threads")
        options.threads = change.to.get<int>();
    return options;
}

std::string AdviceTrial::summary() const
{
    return formatText("%.2fx (%.2f-%.2f over %zu rounds of %.1f s each): %s", speedup, lowest, highest, rounds.size(), secondsEach,
                      helps ? "it helps" : "no gain");
}

nlohmann::json AdviceTrial::toJson() const
{
    nlohmann::json r = nlohmann::json::array();
    for (const TrialRound &round : rounds)
        r.push_back({{"baseline_per_s", round.baseline}, {"changed_per_s", round.changed}, {"speedup", round.speedup()}});
    return {{"change", change.text()}, {"node", change.node},      {"param", change.param},   {"from", change.from},
            {"to", change.to},          {"seconds_each", secondsEach}, {"rounds", r},          {"speedup", speedup},
            {"lowest", lowest},         {"highest", highest},      {"helps", helps}};
}

Result<AdviceTrial> tryAdvice(const Project &project, const PipelineOptions &options, const AdviceChange &change, double secondsEach,
                              int rounds, const std::atomic<bool> *cancel)
{
    AdviceTrial trial;
    trial.change = change;
    trial.secondsEach = secondsEach;
    const Project changed = withChange(project, change);
    const PipelineOptions changedOptions = withChange(options, change);
    // Alternating, so that a machine getting slower or faster over the trial (another process,
    // the page cache warming) weighs on both sides alike.
    for (int i = 0; i < std::max(1, rounds); ++i) {
        TrialRound round;
        auto baseline = measure(project, options, secondsEach, cancel);
        if (!baseline)
            return baseline.error();
        auto after = measure(changed, changedOptions, secondsEach, cancel);
        if (!after)
            return Error::make(after.error().kind, "trial (" + change.text() + ")", after.error().message());
        round.baseline = *baseline;
        round.changed = *after;
        trial.rounds.push_back(round);
    }
    judge(trial);
    return trial;
}

void judge(AdviceTrial &trial)
{
    if (trial.rounds.empty())
        return;
    std::vector<double> speedups;
    for (const TrialRound &r : trial.rounds)
        speedups.push_back(r.speedup());
    std::sort(speedups.begin(), speedups.end());
    trial.speedup = speedups[speedups.size() / 2];
    trial.lowest = speedups.front();
    trial.highest = speedups.back();
    trial.helps = trial.lowest > kHelpsAbove;
}

} // namespace sluice::pipeline
