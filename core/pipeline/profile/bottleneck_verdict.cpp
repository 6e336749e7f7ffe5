#include "pipeline/profile/bottleneck_verdict.h"

#include "io/text_format.h"

#include <algorithm>
#include <optional>

namespace sluice::pipeline {
namespace {

// A prefetch buffer both full (its producer waits) and empty (its consumer waits) for a good
// part of the time: their speeds vary more than it can hold. Parallel maps are left out: their
// "full" also counts every call slot busy, which is work, not a buffer too small.
constexpr double kBufferShare = 0.15;
// A shuffle buffer whose filling took this share of the run so far.
constexpr double kFillShare = 0.5;

// CPU contention: the machine's cores busy this share of the time (every process), with other
// processes keeping this many cores busy on average, or more threads than cores.
constexpr double kSaturated = 0.9;
constexpr double kOtherProcessCores = 0.5;
// ... while this process got at least this much less than its busiest stage's demand, in cores.
constexpr double kDemandSlack = 0.25;

BottleneckVerdict consumerVerdict(const PipelineSnapshot &snap)
{
    return {"consumer", BottleneckKind::Consumer,
            formatText("the pipeline keeps up: the consumer waited for input %.1f%% of its time", 100 * snap.inputBoundShare)};
}

std::optional<BottleneckVerdict> bufferVerdict(const PipelineSnapshot &snap)
{
    if (snap.elapsedSeconds <= 0)
        return std::nullopt;
    // A shuffle whose buffer took most of the run so far to fill: everything after it waited.
    for (const StageSnapshot &st : snap.stages)
        if (st.bufferSize > 0 && st.fillSeconds >= kFillShare * snap.elapsedSeconds)
            return BottleneckVerdict{
                st.id, BottleneckKind::Buffer,
                formatText("its buffer of %llu elements took %.2f s of the %.2f s so far to fill (%llu in it now) before a pass's first "
                           "element: everything after it waited; a smaller buffer_size starts sooner, or global_shuffle over a "
                           "random-access source (from_npy, range) shuffles with no buffer",
                           (unsigned long long)st.bufferSize, st.fillSeconds, snap.elapsedSeconds, (unsigned long long)st.buffered)};
    for (const StageSnapshot &st : snap.stages) {
        if (st.op != "prefetch" || st.queueCapacity <= 0)
            continue;
        const double full = st.waitConsumerSeconds / snap.elapsedSeconds, empty = st.waitInputSeconds / snap.elapsedSeconds;
        if (full >= kBufferShare && empty >= kBufferShare)
            return BottleneckVerdict{
                st.id, BottleneckKind::Buffer,
                formatText("its buffer of %d was full %.0f%% of the time (its input waited) and empty %.0f%% (its consumer waited): "
                       "their speeds vary more than it holds; %s",
                       st.queueCapacity, 100 * full, 100 * empty,
                       st.tuned.count("buffer_size") ? "AUTOTUNE is growing it (see its tuned value's reason)"
                                                     : "a larger buffer_size (or AUTOTUNE) evens them out")};
    }
    return std::nullopt;
}

std::optional<BottleneckVerdict> contentionVerdict(const PipelineSnapshot &snap, const StageSnapshot &busiest)
{
    // The machine saturated, and by more than this pipeline's fair share: other processes keep
    // cores busy, or more threads than cores queue for them. (A thread's own figures cannot show
    // it: a call that waited for a core before it started looks like an idle worker.)
    if (snap.systemBusyShare < kSaturated || snap.elapsedSeconds <= 0)
        return std::nullopt;
    // ... and this process got clearly less CPU than its busiest stage could use (its threads;
    // one core for a Python function, which holds the GIL): otherwise that stage is the limit.
    const double demand = busiest.pythonSeconds + busiest.gilWaitSeconds > 0 ? 1.0 : double(busiest.workers);
    if (snap.cpuSeconds / snap.elapsedSeconds >= demand - kDemandSlack)
        return std::nullopt;
    const bool others = snap.otherProcessCores >= kOtherProcessCores;
    const bool oversubscribed = snap.cores > 0 && snap.threads > snap.cores;
    if (!others && !oversubscribed)
        return std::nullopt;
    std::string why;
    if (others)
        why = formatText("other processes kept %.1f of the %d cores busy: stop them, or run where the cores are free", snap.otherProcessCores,
                     snap.cores);
    if (oversubscribed)
        why += formatText("%s%d threads share %d cores: lower --threads to %d", why.empty() ? "" : "; ", snap.threads, snap.cores, snap.cores);
    return BottleneckVerdict{"pipeline", BottleneckKind::Contention,
                             formatText("CPU contention: the machine's cores were busy %.0f%% of the time; more num_parallel_calls will not "
                                    "help: %s",
                                    100 * snap.systemBusyShare, why.c_str())};
}

BottleneckVerdict stageVerdict(const StageSnapshot &st, const PipelineSnapshot &snap)
{
    BottleneckVerdict v{st.id, BottleneckKind::Compute,
                        formatText("%s busy %.0f%% of the time on %d thread%s", st.op.c_str(), 100 * st.utilisation, st.workers,
                               st.workers > 1 ? "s" : "")};
    if (const std::string python = pythonBottleneckReason(st); !python.empty()) {
        v.reason += "; " + python;
        if (st.gilWaitSeconds >= 0.25 * (st.pythonSeconds + st.gilWaitSeconds))
            v.kind = BottleneckKind::Gil;
    } else if (const std::string storage = storageBottleneckReason(st); !storage.empty()) {
        v.reason += "; " + storage;
        v.kind = BottleneckKind::Storage;
    } else if (st.storage && !st.async && readsFromStorage(*st.storage)) {
        v.reason += "; copying rows out of the mapping on the fused batch's tasks, " + std::to_string(int(100 * st.storage->waitShare + 0.5)) +
                    "% of it waiting for storage";
    } else if (st.storage && !st.async) {
        v.reason += "; copying rows out of the mapping (in the page cache) on the fused batch's tasks";
    } else if (st.tunesParallelism) {
        // AUTOTUNE sets num_parallel_calls: raising it by hand is not advice; the budget is.
        v.reason += st.parallelism >= snap.threads
                        ? "; AUTOTUNE gives it the whole CPU budget (--threads): more threads, where there are cores, would help"
                        : formatText("; AUTOTUNE runs it on %d of the %d threads (see its tuned value's reason)", st.parallelism, snap.threads);
    } else if (st.async && st.parallelism > 0 && st.op != "prefetch") {
        v.reason += st.parallelism >= snap.threads ? "; it uses the whole CPU budget (--threads)" : "; more num_parallel_calls would help";
    } else if (!st.async && st.concurrency > 0 && st.concurrency >= snap.threads) {
        v.reason += "; it runs in the parallel interleave's slots and uses the whole CPU budget (--threads)";
    } else if (!st.async && st.concurrency > 0) {
        // The interleave's cycle, not the stage, is what holds it back: name the interleave.
        v.node = st.interleave.empty() ? st.id : st.interleave;
        v.kind = BottleneckKind::Buffer;
        v.reason = formatText("%s's per-file chain (%s busy %.0f%% of the time) runs in %d of its slots while %d threads are there: a "
                              "larger cycle_length (or AUTOTUNE) reads more files at once",
                              v.node.c_str(), st.op.c_str(), 100 * st.utilisation, st.concurrency, snap.threads);
    } else if (!st.async && st.op != "prefetch") {
        v.reason += "; it runs one element at a time";
    }
    return v;
}

} // namespace

const char *bottleneckKindName(BottleneckKind kind)
{
    switch (kind) {
    case BottleneckKind::None: return "";
    case BottleneckKind::Compute: return "compute";
    case BottleneckKind::Storage: return "storage";
    case BottleneckKind::Gil: return "gil";
    case BottleneckKind::Buffer: return "buffer";
    case BottleneckKind::Contention: return "cpu_contention";
    case BottleneckKind::Consumer: return "consumer";
    case BottleneckKind::NoStage: return "no_stage";
    }
    return "";
}

namespace {

BottleneckVerdict judge(const PipelineSnapshot &snap)
{
    const StageSnapshot *busiest = nullptr;
    for (const StageSnapshot &st : snap.stages)
        if (!busiest || st.utilisation > busiest->utilisation)
            busiest = &st;
    if (!busiest || (snap.elements == 0 && busiest->utilisation <= 0))
        return {};
    // The consumer first: when it does not wait for input, no stage is worth speeding up.
    if (snap.consumerAttached && snap.inputBound == InputBound::None && snap.elements > 0)
        return consumerVerdict(snap);
    // A stage waiting off the CPU by its nature (for pages, for Python's GIL) says so itself.
    BottleneckVerdict busiestVerdict = stageVerdict(*busiest, snap);
    if (busiestVerdict.kind == BottleneckKind::Storage || busiestVerdict.kind == BottleneckKind::Gil)
        return busiestVerdict;
    // Then causes that no stage's parallelism fixes, which would otherwise show as a busy stage.
    if (auto contention = contentionVerdict(snap, *busiest))
        return *contention;
    if (auto buffer = bufferVerdict(snap))
        return *buffer;
    // A stage mostly idle is not what holds the pipeline back, whatever its rank; except a
    // source reading from storage, whose busy share understates the reads it keeps in flight.
    const bool readsStorage = busiest->storage && readsFromStorage(*busiest->storage);
    if (busiestVerdict.kind == BottleneckKind::Compute && busiest->utilisation < kBottleneckBusyShare && !readsStorage)
        return {"", BottleneckKind::NoStage,
                formatText("no stage was busy %.0f%% of the time or more (the busiest, %s, %.0f%%): none holds the pipeline back "
                           "alone, and more threads or num_parallel_calls will not help; the time goes to handing elements between "
                           "stages and to the consumer, where larger elements (a larger batch) help",
                           100 * kBottleneckBusyShare, busiest->id.c_str(), 100 * busiest->utilisation)};
    return busiestVerdict;
}

} // namespace

BottleneckVerdict judgeBottleneck(const PipelineSnapshot &snap)
{
    BottleneckVerdict verdict = judge(snap);
    verdict.lowConfidence = verdict.kind != BottleneckKind::None &&
                            (snap.elapsedSeconds < kConfidentSeconds || snap.elements < kConfidentElements);
    return verdict;
}

} // namespace sluice::pipeline
