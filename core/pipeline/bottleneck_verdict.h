#pragma once
// The profiler's verdict: which stage limits a pipeline, the kind of cause, and advice of that
// kind. Judged from a snapshot's figures alone, so the rules are tested on figures of known
// cause as well as on running pipelines with an injected cause (tst_bottleneck_verdicts); the
// table of causes and verdicts is in docs/profiling.md.
//
// Threading: pure functions of plain values.

#include "pipeline/pipeline_stats.h"

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
};
// "compute", "storage", "gil", "buffer", "cpu_contention", "consumer"; "" for None.
const char *bottleneckKindName(BottleneckKind kind);

struct BottleneckVerdict
{
    std::string node;   // a node id; "consumer"; "pipeline" (contention); empty for None
    BottleneckKind kind = BottleneckKind::None;
    std::string reason; // the figures that show it, then the advice
};

BottleneckVerdict judgeBottleneck(const PipelineSnapshot &snapshot);

} // namespace sluice::pipeline
