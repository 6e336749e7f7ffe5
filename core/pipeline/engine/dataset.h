#pragma once
// Datasets and their iterators, as in tf.data: a Dataset is a built node (its parameters and
// element spec, immutable); each pass over its elements is an Iterator made from it.
//
// Iterators never block. next() answers Ready (an element), End, or Pending: nothing yet, and
// the waker given when the iterator was made will be called (from any thread) once it may have
// progress. Pending travels up through synchronous stages to the nearest asynchronous one,
// whose task simply returns and is spawned again by the waker, so no arena thread ever waits on
// another and any arena size, even one thread, makes progress.
//
// Threading: a Dataset may make iterators from any thread; one Iterator is used by one thread at
// a time (its consumer).

#include "io/error.h"
#include "pipeline/engine/element.h"
#include "pipeline/profile/stage_stats.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::pipeline {

class Runtime;
class RandomAccess;
class ChunkedRows;

enum class Poll { Ready, End, Pending };
using Waker = std::function<void()>;

struct IteratorContext
{
    Runtime *runtime = nullptr;
    Waker waker; // never null
};

class Iterator
{
public:
    virtual ~Iterator() = default;
    virtual Result<Poll> next(Element &out) = 0;
};

// Element counts as tf.data's cardinality() reports them.
constexpr std::int64_t kInfinite = -1;
constexpr std::int64_t kUnknown = -2;

class Dataset
{
public:
    Dataset(ElementSpec spec, StageStats *stats) : m_spec(std::move(spec)), m_stats(stats) {}
    virtual ~Dataset() = default;

    const ElementSpec &spec() const { return m_spec; }
    StageStats *stats() const { return m_stats; }
    // A fresh pass over the elements, measured into stats().
    std::unique_ptr<Iterator> makeIterator(const IteratorContext &context) const;

    virtual std::int64_t cardinality() const { return kUnknown; }
    // Non-null when elements can be read by position (mapped arrays, range, and shard / skip /
    // take / global_shuffle over them): batch then gathers rows straight into its buffers.
    virtual const RandomAccess *randomAccess() const { return nullptr; }
    // Non-null when the rows come in chunks of columns (row_chunks.h): batch then cuts its
    // batches from the chunks.
    virtual const ChunkedRows *chunkedRows() const { return nullptr; }

protected:
    virtual std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const = 0;

private:
    ElementSpec m_spec;
    StageStats *m_stats = nullptr;
};

using DatasetPtr = std::shared_ptr<const Dataset>;

// The error a stage returns when it notices cancellation in a long loop of its own.
inline Error cancelledError() { return Error::cancelled("pipeline"); }

// A pass that could not start (a cache or save file that cannot be created): every next()
// returns `error`.
std::unique_ptr<Iterator> failingIterator(Error error);

// The counters of the random-access chain below `stats` (its inputs, their first inputs, …), which
// the fused gather and row iterators credit with the rows they read on the chain's behalf.
std::vector<StageStats *> chainBelow(const StageStats *stats);

// Iterates `dataset` to its end on the calling thread (never a task), handing each element to
// `consume` (return false to stop). For adapting statistics at build time and for tests.
Status drain(const Dataset &dataset, Runtime &runtime, const std::function<bool(Element &&)> &consume);

} // namespace sluice::pipeline
