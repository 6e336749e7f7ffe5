#pragma once
// The one asynchronous engine behind prefetch, parallel map, the fused batch gather and
// parallel interleave slots: a pump task pulls items from the input iterator (only one pump runs
// at a time, since iterators are single-consumer), optionally hands each to a function run as
// its own task (up to `parallelism` at once), and keeps results in a bounded buffer that the
// consumer reads in input order (deterministic) or in completion order.
//
// Backpressure: the pump stops when the buffer holds `capacity` results (counting those still
// being computed) and is spawned again when the consumer takes one. Nothing ever blocks: an
// input that is Pending ends the pump task; the input's waker spawns it again.
//
// Lifetime: the state is shared by the iterator and by every task in flight, so destroying the
// iterator mid-stream (take, cancellation) only marks it stopped; the last task frees it.

#include "pipeline/engine/dataset.h"
#include "util/mutex.h"

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace sluice::pipeline {

struct AsyncOptions
{
    int parallelism = 0; // tasks running the function at once; 0: the function runs in the pump
    int capacity = 1;    // results buffered, those in flight included
    bool deterministic = true;
    // The pump, stopped by a full buffer, starts again once this many results are left (-1: as
    // soon as one is taken). Below the capacity, each pump task produces a run of results instead
    // of one per element taken: what per-element sub-pipelines (interleave's slots) need.
    int refillAt = -1;
};

class AsyncStage : public std::enable_shared_from_this<AsyncStage>
{
public:
    using Function = std::function<Result<Element>(Element &&item, std::uint64_t sequence)>;

    // `makeInput` builds the input iterator with the waker this stage gives it.
    static std::unique_ptr<Iterator> start(const IteratorContext &context,
                                           const std::function<std::unique_ptr<Iterator>(const IteratorContext &)> &makeInput,
                                           Function function, AsyncOptions options, StageStats *stats);

    AsyncStage(Runtime *runtime, Waker consumerWaker, Function function, AsyncOptions options, StageStats *stats);
    ~AsyncStage();

    Result<Poll> take(Element &out);
    void stop();
    // Starts the pump unless it runs; `runHere` runs it on the calling (arena) thread.
    void schedulePump(bool runHere = false);

private:
    void pump();
    void runFunction(Element &&item, std::uint64_t sequence);
    // `fromTask`: the result comes from a function task, whose in-flight count it releases.
    void deliver(std::uint64_t sequence, Result<Element> result, bool fromTask = false);
    // Wakes the consumer if it asked and found nothing; call with m_mutex held, then wake outside.
    bool takeConsumerWaiting() REQUIRES(m_mutex);
    void noteFill() REQUIRES(m_mutex);
    int capacity() const;

    Runtime *m_runtime;
    Waker m_consumerWaker;
    Function m_function;
    AsyncOptions m_options;
    StageStats m_ownStats;  // used when the caller passes no stats (interleave slots)
    StageStats *m_stats;    // parallelism and capacity are read from here: the tuner changes them
    std::unique_ptr<Iterator> m_input; // touched only by the pump (one at a time)

    Mutex m_mutex;
    std::map<std::uint64_t, Result<Element>> m_done GUARDED_BY(m_mutex); // by input sequence
    std::deque<Result<Element>> m_doneUnordered GUARDED_BY(m_mutex);     // deterministic=false
    std::uint64_t m_nextIn GUARDED_BY(m_mutex) = 0, m_nextOut GUARDED_BY(m_mutex) = 0;
    int m_inFlight GUARDED_BY(m_mutex) = 0;
    bool m_inputEnded GUARDED_BY(m_mutex) = false;
    std::optional<Error> m_inputError GUARDED_BY(m_mutex);
    bool m_pumpScheduled GUARDED_BY(m_mutex) = false, m_pumpRerun GUARDED_BY(m_mutex) = false;
    bool m_consumerWaiting GUARDED_BY(m_mutex) = false;
    bool m_pumpBlocked GUARDED_BY(m_mutex) = false;                       // stopped by a full buffer
    bool m_stopped GUARDED_BY(m_mutex) = false;
    std::int64_t m_emptySince GUARDED_BY(m_mutex) = 0, m_fullSince GUARDED_BY(m_mutex) = 0;   // for wait times

    friend class AsyncIterator;
};

} // namespace sluice::pipeline
