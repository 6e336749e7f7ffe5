#include "pipeline/ops/interleave_chunks.h"

#include "pipeline/engine/async_stage.h"

namespace sluice::pipeline {
namespace {

class ChunkInterleaveIterator final : public Iterator
{
    struct Slot
    {
        std::unique_ptr<Iterator> chunks;
        bool ahead = false; // decodes ahead on the arena
        Element chunk;
        std::uint64_t row = 0, rows = 0; // rows of `chunk` taken, rows it holds
    };

public:
    ChunkInterleaveIterator(const std::vector<DatasetPtr> &files, IteratorContext context, const ElementSpec &rowSpec,
                            ChunkInterleaveOptions options, StageStats *sourceStats)
        : m_files(files), m_context(std::move(context)), m_spec(rowSpec), m_options(options), m_sourceStats(sourceStats),
          m_slots(std::size_t(std::max(1, options.cycleLength))), m_out(rowSpec, rowsPerChunk(rowSpec))
    {
    }

    Result<Poll> next(Element &out) override
    {
        // tf.data's InterleaveDatasetOp loop, a run of rows at a time: take from the current slot
        // until its block is done, replace exhausted slots with the next file, skip empty slots
        // once the files run out.
        const std::size_t features = m_spec.features.size();
        for (;;) {
            if (m_ended)
                return Poll::End;
            if (m_out.full())
                return emit(out);
            if (m_nextFile >= m_files.size() && m_open == 0) {
                m_ended = true;
                if (m_out.rows() == 0)
                    return Poll::End;
                return emit(out);
            }
            Slot &slot = m_slots[m_cycle];
            if (!slot.chunks) {
                if (m_nextFile < m_files.size()) {
                    slot.ahead = m_ahead < m_options.parallelSlots;
                    m_ahead += slot.ahead ? 1 : 0;
                    slot.chunks = open(m_files[m_nextFile++], slot.ahead);
                    slot.row = slot.rows = 0;
                    slot.chunk = {};
                    ++m_open;
                } else {
                    advance();
                }
                continue;
            }
            if (slot.row == slot.rows) {
                if (auto error = chunkError(slot.chunk, features))
                    return endWith(*error, out);
                auto r = slot.chunks->next(slot.chunk);
                if (!r.ok())
                    return endWith(r.error(), out);
                if (*r == Poll::Pending) // hand over what is ready; the order stays as it is
                    return m_out.rows() > 0 ? emit(out) : Result<Poll>(Poll::Pending);
                if (*r == Poll::End) {
                    m_ahead -= slot.ahead ? 1 : 0;
                    slot = Slot{};
                    --m_open;
                    advance();
                    continue;
                }
                slot.row = 0;
                slot.rows = chunkRows(slot.chunk);
                continue;
            }
            const std::uint64_t take = std::min({std::uint64_t(m_options.blockLength - m_block), slot.rows - slot.row,
                                                 m_out.capacity() - m_out.rows()});
            m_out.append(slot.chunk, slot.row, slot.row + take);
            slot.row += take;
            m_taken += take;
            m_block += int(take);
            if (m_block == m_options.blockLength)
                advance();
        }
    }

private:
    void advance()
    {
        m_block = 0;
        m_cycle = (m_cycle + 1) % m_slots.size();
    }

    std::unique_ptr<Iterator> open(const DatasetPtr &file, bool ahead)
    {
        const ChunkedRows *rows = file->chunkedRows();
        if (!ahead)
            return rows->makeChunkIterator(m_context);
        // Each open slot decodes a few chunks ahead on the arena while the others are read.
        const int capacity = std::max(2, m_options.chunksPerSlot);
        return AsyncStage::start(
            m_context, [rows](const IteratorContext &c) { return rows->makeChunkIterator(c); }, {},
            AsyncOptions{0, capacity, true, capacity / 2}, nullptr);
    }

    Result<Poll> emit(Element &out)
    {
        out = m_out.take();
        credit(out);
        return Poll::Ready;
    }

    // The rows taken so far, then the error: the pass ends there, as the element-wise one does.
    Result<Poll> endWith(const Error &error, Element &out)
    {
        out = m_out.take();
        credit(out);
        attachChunkError(out, error);
        m_ended = true;
        m_slots.clear();
        return Poll::Ready;
    }

    void credit(const Element &chunk)
    {
        if (!m_sourceStats)
            return;
        m_sourceStats->elements.fetch_add(m_taken, std::memory_order_relaxed);
        m_sourceStats->bytes.fetch_add(chunk.nbytes(), std::memory_order_relaxed);
        m_taken = 0;
    }

    const std::vector<DatasetPtr> &m_files;
    IteratorContext m_context;
    const ElementSpec &m_spec;
    ChunkInterleaveOptions m_options;
    StageStats *m_sourceStats;
    std::vector<Slot> m_slots;
    ChunkBuilder m_out;
    std::size_t m_nextFile = 0, m_cycle = 0;
    int m_block = 0, m_open = 0, m_ahead = 0;
    std::uint64_t m_taken = 0; // rows taken since the last credit
    bool m_ended = false;
};

} // namespace

std::unique_ptr<Iterator> interleaveChunks(const std::vector<DatasetPtr> &files, const IteratorContext &context,
                                           const ElementSpec &rowSpec, ChunkInterleaveOptions options, StageStats *sourceStats)
{
    return std::make_unique<ChunkInterleaveIterator>(files, context, rowSpec, options, sourceStats);
}

} // namespace sluice::pipeline
