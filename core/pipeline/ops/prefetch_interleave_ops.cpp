// prefetch: a bounded buffer filled ahead of the consumer on the arena; interleave: elements of
// per-file sub-pipelines taken block_length at a time from cycle_length of them in turn, the
// open ones running ahead on the arena when num_parallel_calls is set (as tf.data interleave).
#include "pipeline/engine/async_stage.h"
#include "pipeline/engine/build_context.h"
#include "pipeline/ops/interleave_chunks.h"
#include "pipeline/engine/op_registry.h"

namespace sluice::pipeline {
namespace {

class PrefetchDataset final : public Dataset
{
public:
    PrefetchDataset(StageStats *stats, DatasetPtr input, int bufferSize)
        : Dataset(input->spec(), stats), m_input(std::move(input)), m_bufferSize(bufferSize)
    {
    }
    std::int64_t cardinality() const override { return m_input->cardinality(); }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        DatasetPtr input = m_input;
        return AsyncStage::start(
            context, [input](const IteratorContext &c) { return input->makeIterator(c); }, {}, AsyncOptions{0, m_bufferSize, true},
            stats());
    }

private:
    DatasetPtr m_input;
    int m_bufferSize;
};

std::shared_ptr<Dataset> buildPrefetch(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::int64_t size = params.autotunable("buffer_size", std::nullopt, 1);
    StageStats *stats = context.statsFor(params.node());
    stats->async = true;
    stats->tunesBuffer = size == kAutotune;
    // AUTOTUNE starts small; the tuner grows it while the consumer finds it empty.
    return std::make_shared<PrefetchDataset>(stats, inputs.at(0), size == kAutotune ? 2 : int(std::min<std::int64_t>(size, 1 << 20)));
}

class InterleaveIterator final : public Iterator
{
    static constexpr int kSlotElements = 32; // buffered per open slot (parallel interleave)

public:
    // `parallelSlots`: how many open slots at most run ahead on the arena (num_parallel_calls);
    // the others are read when their turn comes. 0: none.
    InterleaveIterator(const std::vector<DatasetPtr> &files, IteratorContext context, int cycleLength, int blockLength, int parallelSlots)
        : m_files(files), m_context(std::move(context)), m_slots(std::size_t(cycleLength)), m_slotAhead(std::size_t(cycleLength), false),
          m_blockLength(blockLength), m_parallelSlots(parallelSlots)
    {
    }

    Result<Poll> next(Element &out) override
    {
        // tf.data's InterleaveDatasetOp loop: take from the current slot until its block is done,
        // replace exhausted slots with the next input, skip empty slots once inputs run out.
        for (;;) {
            if (m_nextFile >= m_files.size() && m_open == 0)
                return Poll::End;
            auto &slot = m_slots[m_cycle];
            if (slot) {
                auto r = slot->next(out);
                if (!r.ok() || *r == Poll::Pending)
                    return r;
                if (*r == Poll::Ready) {
                    if (++m_block == m_blockLength)
                        advance();
                    return r;
                }
                slot.reset();
                --m_open;
                if (m_slotAhead[m_cycle]) {
                    m_slotAhead[m_cycle] = false;
                    --m_ahead;
                }
                advance();
            } else if (m_nextFile < m_files.size()) {
                slot = open(m_files[m_nextFile++]);
                ++m_open;
            } else {
                advance();
            }
        }
    }

private:
    void advance()
    {
        m_block = 0;
        m_cycle = (m_cycle + 1) % m_slots.size();
    }
    std::unique_ptr<Iterator> open(const DatasetPtr &file)
    {
        if (m_ahead >= m_parallelSlots)
            return file->makeIterator(m_context);
        ++m_ahead;
        m_slotAhead[m_cycle] = true;
        // Each open slot fills a buffer on the arena while the others are read, a run of elements
        // per task: refilling after every element taken would cost a task, a lock and a wake-up per
        // element, more than reading a small record.
        const int capacity = std::max(kSlotElements, 2 * m_blockLength);
        return AsyncStage::start(
            m_context, [file](const IteratorContext &c) { return file->makeIterator(c); }, {},
            AsyncOptions{0, capacity, true, capacity / 2}, nullptr);
    }

    const std::vector<DatasetPtr> &m_files;
    IteratorContext m_context;
    std::vector<std::unique_ptr<Iterator>> m_slots;
    std::vector<bool> m_slotAhead; // the slot runs ahead on the arena
    int m_blockLength;
    int m_parallelSlots;
    std::size_t m_nextFile = 0, m_cycle = 0;
    int m_block = 0, m_open = 0, m_ahead = 0;
};

class InterleaveDataset final : public Dataset, public ChunkedRows
{
public:
    InterleaveDataset(StageStats *stats, std::vector<DatasetPtr> files, int cycleLength, int blockLength, int parallelSlots)
        : Dataset(files.front()->spec(), stats), m_files(std::move(files)), m_cycleLength(cycleLength), m_blockLength(blockLength),
          m_parallelSlots(parallelSlots), m_chunked(m_files.front()->chunkedRows() != nullptr)
    {
    }

    // Over sources that decode chunks of rows, the interleave hands chunks on too.
    const ChunkedRows *chunkedRows() const override { return m_chunked ? this : nullptr; }
    std::unique_ptr<Iterator> makeChunkIterator(const IteratorContext &context) const override
    {
        return measureChunks(chunks(context), stats());
    }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        if (m_chunked)
            return rowsOfChunks(chunks(context), spec());
        return std::make_unique<InterleaveIterator>(m_files, context, m_cycleLength, m_blockLength, m_parallelSlots);
    }

private:
    std::unique_ptr<Iterator> chunks(const IteratorContext &context) const
    {
        return interleaveChunks(m_files, context, spec(), ChunkInterleaveOptions{m_cycleLength, m_blockLength, m_parallelSlots},
                                m_files.front()->stats());
    }

    std::vector<DatasetPtr> m_files;
    int m_cycleLength, m_blockLength, m_parallelSlots;
    bool m_chunked;
};

std::shared_ptr<Dataset> buildInterleave(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::int64_t cycle = params.autotunable("cycle_length", kAutotune);
    const std::int64_t block = params.integer("block_length", 1, 1, 1 << 20);
    const std::int64_t parallel = params.has("num_parallel_calls") ? params.autotunable("num_parallel_calls", std::nullopt) : 0;
    const bool deterministic = params.boolean("deterministic", true);
    std::vector<DatasetPtr> files = inputs.perFile(0);
    if (files.empty())
        params.fail("", "its input has no files to interleave");
    StageStats *stats = context.statsFor(params.node());
    stats->async = parallel != 0;
    const int cycleLength = cycle == kAutotune ? std::max(1, context.threads()) : int(std::min<std::int64_t>(cycle, 1 << 16));
    // As tf.data: at most one reader per open file.
    if (parallel > 0 && cycle != kAutotune && parallel > cycle)
        params.fail("num_parallel_calls", "must be at most cycle_length (" + std::to_string(cycle) + "): each open file has one reader");
    const int parallelSlots = parallel == 0 ? 0 : parallel == kAutotune ? cycleLength : int(std::min<std::int64_t>(parallel, cycleLength));
    if (params.has("deterministic") && parallel == 0)
        context.addNote("interleave '" + params.node().id + "': deterministic has no effect without num_parallel_calls (as in tf.data)");
    else if (!deterministic)
        context.addNote("interleave '" + params.node().id + "': deterministic false is accepted but the order is kept: "
                                                             "the open files are read ahead in parallel and taken in turn");
    if (stats->async) {
        stats->parallelism.store(parallelSlots);
        // The per-file chain below runs in the open slots that read ahead, as many at once as
        // the arena allows (this node's own inputs are linked only once it is built: start from
        // the chain's top).
        const int slotsAtOnce = std::min(parallelSlots, std::max(1, context.threads()));
        if (StageStats *top = files.front()->stats()) {
            top->concurrency = slotsAtOnce;
            top->interleaveId = params.node().id;
            for (StageStats *below : chainBelow(top)) {
                below->concurrency = slotsAtOnce;
                below->interleaveId = params.node().id;
            }
        }
    }
    return std::make_shared<InterleaveDataset>(stats, std::move(files), cycleLength, int(block), parallelSlots);
}

} // namespace

void registerPerformanceOps(std::vector<OpInfo> &ops)
{
    ops.push_back({"prefetch", "performance",
                   "Prepares up to buffer_size elements ahead of the consumer on the arena, as tf.data prefetch (AUTOTUNE: the "
                   "buffer grows while the consumer waits, within the RAM budget).",
                   {{"buffer_size", "int|AUTOTUNE", "", "elements to prepare ahead", true}}, 1, 1, buildPrefetch});
    ops.push_back({"interleave", "performance",
                   "Reads the files of its input chain's source as one sub-pipeline each (the chain up to here, per file), "
                   "taking block_length elements from cycle_length of them in turn, as tf.data interleave over "
                   "Dataset.list_files. With num_parallel_calls the open sub-pipelines run ahead in parallel; the order is the same.",
                   {{"cycle_length", "int|AUTOTUNE", "AUTOTUNE", "sub-pipelines open at once (AUTOTUNE: the CPU budget)"},
                    {"block_length", "int", "1", "consecutive elements taken from each"},
                    {"num_parallel_calls", "int|AUTOTUNE", "", "how many open sub-pipelines run ahead in parallel, at most cycle_length (absent: each runs only when its turn comes)"},
                    {"deterministic", "bool", "true", "accepted for compatibility; the order is always deterministic"}},
                   1, 1, buildInterleave});
    registerCacheOp(ops);
}

} // namespace sluice::pipeline
