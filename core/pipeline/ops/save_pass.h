#pragma once
// The writing half of the pipeline's `save` (save_op.cpp): one pass's rows dealt out to the
// shards of a ShardedDatasetWriter and written on the runtime's tasks.
//
// Rows go to the shards round-robin: row r of the pass (elements' rows counted in order, a
// batch contributing each of its rows) to shard r mod num_shards, so that the shards differ by
// at most one row whatever the pass's length, which need not be known in advance, and the
// order is the same on every run. `load` reads the shards back in the same rotation, which
// restores the pass's order.
//
// The consumer (the save iterator) copies each row into its shard's staging block; a full
// block is queued to the shard, whose queue is drained by one task at a time (so each shard's
// rows stay in order and the shards are encoded, compressed and written in parallel). At the
// end of the input every shard is closed by its own task, then the consumer commits the
// manifest and publishes the dataset (dataset_publish.h). When the queued blocks reach a
// bound, the consumer is told to wait (Pending) and is woken once the writers caught up: memory
// stays bounded whatever the dataset's size, and no thread ever blocks.
//
// Threading: add(), mustWait(), finishInput() and complete() are called by the consumer, one
// call at a time; stop() from any thread; the shard tasks run on the runtime's arena. The pass
// is shared by the consumer and the tasks in flight, and the last of them to let it go removes
// what an unfinished pass wrote.

#include "io/writers/shard_writer.h"
#include "pipeline/engine/dataset.h"
#include "util/mutex.h"

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sluice::pipeline {

// What a save node writes, fixed when the pipeline is built.
struct SaveConfig
{
    std::string nodeId;
    std::string folder;                   // destination, resolved against the project
    bool overwrite = true;                // replace a dataset already saved in `folder`
    ShardedDatasetOptions options;        // format, shards, compression, pattern (its folder is the staging one)
    std::vector<DatasetFeature> features; // the columns saved, in manifest order
    std::vector<std::size_t> indices;     // each saved feature's index in the element
    bool batched = false;                 // elements are batches: each of their rows is saved
};

class SavePass : public std::enable_shared_from_this<SavePass>
{
public:
    // Creates the staging folder and the shard writers; the error names the folder.
    static Result<std::shared_ptr<SavePass>> start(std::shared_ptr<const SaveConfig> config, const IteratorContext &context);
    ~SavePass();
    SavePass(const SavePass &) = delete;
    SavePass &operator=(const SavePass &) = delete;

    // Deals the element's rows to the shards (checked against the saved features first).
    Status add(const Element &element);
    // True when the writers are this far behind: the consumer returns Pending and its waker is
    // called once they caught up (or failed); the error a shard failed with, if one did.
    Result<bool> mustWait();
    // The input ended: hands the staged rows to the writers and has every shard closed.
    void finishInput();
    // After finishInput(): Pending while shards are still written (the waker is called when they
    // are done), the error a shard failed with, or Ready once the dataset is committed and
    // published in its folder.
    Result<Poll> complete();
    // The pass will not complete (its iterator is gone): tasks drop what they have not written.
    void stop();

    std::uint64_t rowsAdded() const { return m_rowsAdded; }

private:
    // Rows of one shard not yet written: a column per saved feature.
    struct RowBlock
    {
        std::uint64_t rows = 0;
        std::uint64_t bytes = 0;
        std::vector<std::vector<std::byte>> data;         // numeric features
        std::vector<std::vector<std::string>> strings;    // string features
        std::vector<std::vector<std::uint64_t>> lengths;  // variable-length features: elements per row
    };
    struct ShardQueue
    {
        // Guarded by SavePass::m_mutex, as m_queues is (the analysis cannot name an enclosing
        // object's lock on a nested struct's fields).
        std::deque<RowBlock> blocks;
        bool running = false; // a task drains it
        bool closeRequested = false;
        bool closed = false;
    };

    SavePass(std::shared_ptr<const SaveConfig> config, const IteratorContext &context, std::string staging, ShardedDatasetWriter writer);
    RowBlock emptyBlock() const;
    void appendRow(RowBlock &block, const Element &element, std::uint64_t row, const std::vector<std::uint64_t> &rowElements) const;
    // Queues shard `shard`'s staged block and makes sure a task drains the queue.
    void hand(std::size_t shard);
    void schedule(std::size_t shard) REQUIRES(m_mutex); // spawns a draining task unless one runs
    void drain(std::size_t shard);    // a task: writes the shard's queued blocks, closes it when asked
    // The consumer, if it waits, to be woken now; call with m_mutex held, wake outside it.
    bool takeWaitingConsumer() REQUIRES(m_mutex);

    std::shared_ptr<const SaveConfig> m_config;
    Runtime *m_runtime;
    Waker m_waker;
    std::string m_staging;
    std::optional<ShardedDatasetWriter> m_writer; // each shard's writer used by its draining task only
    std::uint64_t m_blockBytes;                   // a staging block is handed over at this size
    std::uint64_t m_backlogBytes;                 // the consumer waits while this much is queued

    // The consumer's own.
    std::vector<RowBlock> m_staged; // per shard
    std::uint64_t m_rowsAdded = 0;
    bool m_published = false;

    Mutex m_mutex;
    std::vector<ShardQueue> m_queues GUARDED_BY(m_mutex);
    std::uint64_t m_queuedBytes GUARDED_BY(m_mutex) = 0;
    int m_closedShards GUARDED_BY(m_mutex) = 0;
    std::optional<Error> m_error GUARDED_BY(m_mutex);       // the first write that failed
    bool m_consumerWaiting GUARDED_BY(m_mutex) = false;
    bool m_stopped GUARDED_BY(m_mutex) = false;
};

} // namespace sluice::pipeline
