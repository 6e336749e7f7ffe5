#pragma once
// A project's pipeline, built and ready to run: the face that the CLI, the trainer, the tests
// and (later) the workbench use. Building validates everything (ops, parameters, files, shapes
// and dtypes downstream) and reports the first problem naming the node and parameter.
//
// Threading: one consumer thread calls next() / restart(); cancel(), snapshot() and sink() may
// be called from any thread.

#include "io/error.h"
#include "pipeline/engine/element.h"
#include "pipeline/profile/pipeline_stats.h"
#include "project/project.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace sluice::pipeline {

struct PipelineOptions
{
    std::optional<std::string> outputNode; // run up to this node (default: the project's output)
    int threads = 0;                       // CPU budget: arena size (<= 0: all cores)
    std::uint64_t ramBudgetBytes = 0;      // for AUTOTUNE'd buffers (0: half of physical memory)
    // Resident memory mapped sources may hold before a shuffled pass releases its pages, and the
    // size above which data counts as larger than RAM (0: a quarter of physical memory).
    std::uint64_t residentBudgetBytes = 0;
    std::optional<std::uint64_t> seed;     // the pipeline seed random ops derive theirs from
    bool autotune = true;
    std::chrono::milliseconds statsInterval{500}; // how often snapshots go to the sink
};

class Pipeline
{
public:
    static Result<std::unique_ptr<Pipeline>> build(const Project &project, PipelineOptions options = {});
    ~Pipeline();

    const ElementSpec &elementSpec() const;
    const std::string &outputNode() const;
    std::int64_t cardinality() const; // elements per pass; -1 infinite, -2 unknown

    // The next element of the current pass, waiting for it; nothing at the end of the pass; an
    // error naming the stage when the pipeline fails, or "cancelled".
    Result<std::optional<Element>> next();
    // The same, asking `stopRequested` about every 20 ms while it waits: when it says so, the
    // pipeline is cancelled and the wait ends with "cancelled" (Ctrl-C in a Python caller).
    Result<std::optional<Element>> next(const std::function<bool()> &stopRequested);
    // Starts a new pass (an epoch): shuffles draw their next order.
    void restart();

    // The position of every random op (the passes each has started), for checkpoints: record it
    // before the first next() of a pass; setPassCounters() on a freshly built (or restarted)
    // pipeline of the same project makes its next pass draw the same orders. False when the
    // count does not match (another project).
    std::vector<std::uint64_t> passCounters() const;
    bool setPassCounters(const std::vector<std::uint64_t> &counters);
    // Stops the pipeline; a waiting next() returns within ~20 ms. Any thread.
    void cancel();
    bool cancelled() const;

    // Marks that a consumer (the trainer) does work between next() calls, so the snapshot
    // reports the input-bound share of its step time.
    void setConsumerAttached(bool attached);
    PipelineSnapshot snapshot() const;
    StatsSink &sink();
    // What the build has to tell the user once, as "note:" lines ("cache 'c': rebuilding
    // cache.bin: source file x.npy changed …"); callers print them or emit them as notices.
    const std::vector<std::string> &notes() const;

private:
    Pipeline();
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace sluice::pipeline
