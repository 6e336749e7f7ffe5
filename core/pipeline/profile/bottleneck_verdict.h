#pragma once
// The profiler's verdict: which stage limits a pipeline, the kind of cause, and advice of that
// kind. Judged from a snapshot's figures alone, so the rules are tested on figures of known
// cause as well as on running pipelines with an injected cause (tst_bottleneck_verdicts); the
// table of causes and verdicts is in docs/profiling.md.
//
// Threading: pure functions of plain values.

#include "pipeline/profile/pipeline_stats.h"

#include <string>

namespace sluice::pipeline {

enum class BottleneckKind {
    None,        // nothing ran yet
    Compute,     // a stage's own work on the CPU: more num_parallel_calls / threads
    Storage,     // a mapped source waiting for pages: cache, prefetch, interleave, faster storage
    Gil,         // a Python function waiting for the GIL: vectorise
    Buffer,      // a buffer too small to even out its producer's and consumer's speeds, or still filling
    Contention,  // the pipeline's work waits for a core: too many threads, or another process
    Consumer,    // not input-bound: the consumer (the training step) is the limit
    NoStage,     // no stage busy enough to be the limit: the time goes between stages
};
// "compute", "storage", "gil", "buffer", "cpu_contention", "consumer", "no_stage"; "" for None.
const char *bottleneckKindName(BottleneckKind kind);

// A stage is named the bottleneck for its own work (compute) only when it was busy at least this
// share of the time on its threads; below it no stage is tagged (NoStage).
constexpr double kBottleneckBusyShare = 0.5;
// Below this much of a run, or this many elements, the verdict is given with low confidence:
// the tuner, the page cache and the buffers have not settled yet.
constexpr double kConfidentSeconds = 2.0;
constexpr std::uint64_t kConfidentElements = 20;

struct BottleneckVerdict
{
    std::string node;   // a node id; "consumer"; "pipeline" (contention); empty for None and NoStage
    BottleneckKind kind = BottleneckKind::None;
    std::string reason; // the figures that show it, then the advice
    bool lowConfidence = false; // judged on fewer seconds or elements than kConfident*
};

BottleneckVerdict judgeBottleneck(const PipelineSnapshot &snapshot);

} // namespace sluice::pipeline
