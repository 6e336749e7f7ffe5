// batch: stacks batch_size consecutive elements. Over a random-access input (mapped arrays,
// possibly shuffled / sharded / sliced by position) batches are gathered straight from the
// mapping into the batch buffer on parallel tasks, in order: no per-element work at all.
// Over any other input the elements are collected and stacked.
#include "pipeline/engine/async_stage.h"
#include "pipeline/engine/build_context.h"
#include "pipeline/engine/op_registry.h"
#include "pipeline/storage/pass_storage.h"
#include "pipeline/engine/random_access.h"
#include "pipeline/sources/row_chunks.h"

#include <deque>
#include <optional>

#include <cstring>

namespace sluice::pipeline {
namespace {

// Work items of the fused gather: positions [begin, end) of the pass, as two int64 scalars.
class BatchPlanIterator final : public Iterator
{
public:
    BatchPlanIterator(std::uint64_t size, std::uint64_t batchSize, bool dropRemainder)
        : m_size(dropRemainder ? size - size % batchSize : size), m_batchSize(batchSize)
    {
    }
    Result<Poll> next(Element &out) override
    {
        if (m_position >= m_size)
            return Poll::End;
        const std::uint64_t end = std::min(m_size, m_position + m_batchSize);
        out.tensors.clear();
        out.tensors.push_back(Tensor::scalar<std::int64_t>(std::int64_t(m_position)));
        out.tensors.push_back(Tensor::scalar<std::int64_t>(std::int64_t(end)));
        m_position = end;
        return Poll::Ready;
    }

private:
    std::uint64_t m_size, m_batchSize, m_position = 0;
};

class GatherBatchDataset final : public Dataset
{
public:
    GatherBatchDataset(ElementSpec spec, StageStats *stats, DatasetPtr input, std::uint64_t batchSize, bool dropRemainder, int parallelism,
                       bool deterministic)
        : Dataset(std::move(spec), stats), m_input(std::move(input)), m_batchSize(batchSize), m_dropRemainder(dropRemainder),
          m_parallelism(parallelism), m_deterministic(deterministic)
    {
    }
    std::int64_t cardinality() const override
    {
        const auto n = std::int64_t(m_input->randomAccess()->openPass(false)->size()), b = std::int64_t(m_batchSize);
        return m_dropRemainder ? n / b : (n + b - 1) / b;
    }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        const RandomAccess *access = m_input->randomAccess();
        std::shared_ptr<const IndexMap> pass = access->openPass();
        const RowSource *rows = &access->rows();
        const std::uint64_t size = pass->size();
        auto spec = std::make_shared<const ElementSpec>(this->spec());
        DatasetPtr keepAlive = m_input;
        // The rows the gather reads count as elements of the random-access chain it replaces
        // (source, global_shuffle, shard…), so the table shows them. Copying rows out of the
        // mappings is the source's work (and where it waits for storage): that time is charged to
        // the chain, the rest of the gather to batch.
        std::vector<StageStats *> chain = chainBelow(m_input->stats());
        chain.insert(chain.begin(), m_input->stats());
        StageStats *own = stats();
        std::shared_ptr<PassStorage> storage;
        if (StageStats *source = chain.back(); source && source->readsMappedRows) {
            storage = PassStorage::open(*rows, pass, source->storage, m_batchSize);
            source->storage.readers.store(m_parallelism);
        }
        auto gather = [pass, rows, spec, keepAlive, chain, own, storage](Element &&item, std::uint64_t) -> Result<Element> {
            const auto begin = std::uint64_t(*item.tensors[0].as<std::int64_t>());
            const auto end = std::uint64_t(*item.tensors[1].as<std::int64_t>());
            thread_local std::vector<std::uint64_t> rowIndex;
            rowIndex.resize(end - begin);
            for (std::uint64_t p = begin; p < end; ++p)
                rowIndex[p - begin] = pass->row(p);
            Element batch;
            batch.tensors.reserve(spec->features.size());
            for (std::size_t f = 0; f < spec->features.size(); ++f) {
                Shape shape = spec->features[f].shape;
                shape[0] = std::int64_t(end - begin);
                batch.tensors.push_back(Tensor::allocate(spec->features[f].type.dtype, std::move(shape)));
            }
            // Requesting rows ahead is part of reading them: a full device queue makes it wait too.
            const bool measure = storage && storage->measureNext();
            const ThreadClock before = storage ? ThreadClock::now(measure) : ThreadClock{};
            if (storage)
                storage->beforeRead(begin, end);
            for (std::size_t f = 0; f < spec->features.size(); ++f)
                rows->gather(f, rowIndex, batch.tensors[f].mutableData());
            if (storage) {
                const ThreadClock after = ThreadClock::now(measure);
                storage->afterRead(begin, end, &before, &after);
                const std::int64_t readNs = after.wallNs - before.wallNs;
                for (StageStats *s : chain)
                    s->add(s->inclusiveNs, readNs);
                own->add(own->busyNs, -readNs);
                own->add(own->offloadedNs, readNs);
            }
            const std::uint64_t bytes = batch.nbytes();
            for (StageStats *s : chain) {
                s->elements.fetch_add(end - begin, std::memory_order_relaxed);
                s->bytes.fetch_add(bytes, std::memory_order_relaxed);
            }
            return batch;
        };
        const std::uint64_t batchSize = m_batchSize;
        const bool drop = m_dropRemainder;
        return AsyncStage::start(
            context, [size, batchSize, drop](const IteratorContext &) { return std::make_unique<BatchPlanIterator>(size, batchSize, drop); },
            gather, AsyncOptions{m_parallelism, m_parallelism, m_deterministic}, stats());
    }

private:
    DatasetPtr m_input;
    std::uint64_t m_batchSize;
    bool m_dropRemainder;
    int m_parallelism;
    bool m_deterministic;
};

// Batches cut straight from a chunked source's column chunks (row_chunks.h): rows are copied
// column by column from as many chunks as a batch spans, never one element per row.
class RebatchIterator final : public Iterator
{
public:
    RebatchIterator(std::unique_ptr<Iterator> chunks, const ElementSpec &spec, std::uint64_t batchSize, bool dropRemainder,
                    StageStats *source)
        : m_chunks(std::move(chunks)), m_spec(spec), m_batchSize(batchSize), m_dropRemainder(dropRemainder), m_source(source)
    {
    }
    Result<Poll> next(Element &out) override
    {
        const std::size_t features = m_spec.features.size();
        // Gather (chunk, rows) pieces until a batch is full; chunks already taken stay queued
        // across a Pending, so nothing is read twice.
        while (!m_ended && m_queuedRows < m_batchSize) {
            if (m_error)
                break;
            Element chunk;
            auto r = m_chunks->next(chunk);
            if (!r.ok() || *r == Poll::Pending)
                return r;
            if (*r == Poll::End) {
                m_ended = true;
                break;
            }
            m_error = chunkError(chunk, features);
            const std::uint64_t rows = chunkRows(chunk);
            if (rows > 0) {
                m_queuedRows += rows;
                m_queue.push_back(std::move(chunk));
            }
        }
        if (m_queuedRows == 0 || (m_queuedRows < m_batchSize && m_ended && m_dropRemainder)) {
            if (m_error) {
                Error e = *m_error;
                m_error.reset();
                m_ended = true;
                return e;
            }
            return Poll::End;
        }
        if (m_queuedRows < m_batchSize && m_error) { // as collecting would: the error, not a short batch
            Error e = *m_error;
            m_error.reset();
            m_ended = true;
            m_queue.clear();
            m_queuedRows = 0;
            return e;
        }
        const std::uint64_t n = std::min(m_batchSize, m_queuedRows);
        out.tensors.clear();
        for (std::size_t f = 0; f < features; ++f) {
            const FeatureSpec &feature = m_spec.features[f];
            Shape shape = feature.shape;
            shape.insert(shape.begin(), std::int64_t(n));
            std::vector<std::string> strings;
            Tensor t = feature.type.isString ? Tensor{} : Tensor::allocate(feature.type.dtype, shape);
            std::byte *dst = feature.type.isString ? nullptr : t.mutableData();
            std::uint64_t need = n, offset = m_offset;
            for (std::size_t c = 0; need > 0; ++c) {
                const std::uint64_t take = std::min(need, chunkRows(m_queue[c]) - offset);
                copyChunkRows(m_queue[c], f, offset, offset + take, dst, &strings);
                if (dst)
                    dst += take * (t.nbytes() / n);
                need -= take;
                offset = 0;
            }
            out.tensors.push_back(feature.type.isString ? Tensor::strings(std::move(shape), std::move(strings)) : std::move(t));
        }
        // Drop what this batch used up.
        std::uint64_t used = n;
        while (used > 0) {
            const std::uint64_t left = chunkRows(m_queue.front()) - m_offset;
            if (used >= left) {
                used -= left;
                m_queue.pop_front();
                m_offset = 0;
            } else {
                m_offset += used;
                used = 0;
            }
        }
        m_queuedRows -= n;
        if (m_source) {
            m_source->elements.fetch_add(n, std::memory_order_relaxed);
            m_source->bytes.fetch_add(out.nbytes(), std::memory_order_relaxed);
        }
        return Poll::Ready;
    }

private:
    std::unique_ptr<Iterator> m_chunks;
    const ElementSpec &m_spec;
    std::uint64_t m_batchSize;
    bool m_dropRemainder;
    StageStats *m_source;
    std::deque<Element> m_queue;
    std::uint64_t m_offset = 0, m_queuedRows = 0; // rows of m_queue.front() already used; rows left in all
    bool m_ended = false;
    std::optional<Error> m_error;
};

class RebatchDataset final : public Dataset
{
public:
    RebatchDataset(ElementSpec spec, StageStats *stats, DatasetPtr input, std::uint64_t batchSize, bool dropRemainder)
        : Dataset(std::move(spec), stats), m_input(std::move(input)), m_batchSize(batchSize), m_dropRemainder(dropRemainder)
    {
    }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        return std::make_unique<RebatchIterator>(m_input->chunkedRows()->makeChunkIterator(context), m_input->spec(), m_batchSize,
                                                 m_dropRemainder, m_input->stats());
    }

private:
    DatasetPtr m_input;
    std::uint64_t m_batchSize;
    bool m_dropRemainder;
};

// Stacks collected elements into one batch; fails when they differ in shape, as tf.data does.
Result<Element> stack(const std::vector<Element> &elements, const ElementSpec &spec)
{
    Element batch;
    const auto n = std::int64_t(elements.size());
    for (std::size_t f = 0; f < spec.features.size(); ++f) {
        const Tensor &first = elements[0].tensors[f];
        Shape shape = first.shape();
        shape.insert(shape.begin(), n);
        for (std::size_t i = 1; i < elements.size(); ++i)
            if (elements[i].tensors[f].shape() != first.shape())
                return Error::invalid("batch", "cannot batch elements of different shapes: feature \"" + spec.features[f].name +
                                                   "\" is " + shapeText(first.shape()) + " in the first element and " +
                                                   shapeText(elements[i].tensors[f].shape()) + " in element " + std::to_string(i) +
                                                   " of the batch");
        if (first.isString()) {
            std::vector<std::string> values;
            for (const auto &e : elements)
                values.insert(values.end(), e.tensors[f].stringValues().begin(), e.tensors[f].stringValues().end());
            batch.tensors.push_back(Tensor::strings(std::move(shape), std::move(values)));
            continue;
        }
        Tensor t = Tensor::allocate(first.dtype(), std::move(shape));
        const std::size_t bytes = first.nbytes();
        for (std::size_t i = 0; i < elements.size(); ++i)
            std::memcpy(t.mutableData() + i * bytes, elements[i].tensors[f].data(), bytes);
        batch.tensors.push_back(std::move(t));
    }
    return batch;
}

class CollectBatchIterator final : public Iterator
{
public:
    CollectBatchIterator(std::unique_ptr<Iterator> input, const ElementSpec &spec, std::uint64_t batchSize, bool dropRemainder)
        : m_input(std::move(input)), m_spec(spec), m_batchSize(batchSize), m_dropRemainder(dropRemainder)
    {
    }
    Result<Poll> next(Element &out) override
    {
        while (!m_ended && m_pending.size() < m_batchSize) {
            Element e;
            auto r = m_input->next(e);
            if (!r.ok() || *r == Poll::Pending)
                return r; // collected elements are kept for the next call
            if (*r == Poll::End)
                m_ended = true;
            else
                m_pending.push_back(std::move(e));
        }
        if (m_pending.empty() || (m_pending.size() < m_batchSize && m_dropRemainder))
            return Poll::End;
        auto batch = stack(m_pending, m_spec);
        m_pending.clear();
        if (!batch.ok())
            return batch.error();
        out = std::move(batch).value();
        return Poll::Ready;
    }

private:
    std::unique_ptr<Iterator> m_input;
    const ElementSpec &m_spec;
    std::uint64_t m_batchSize;
    bool m_dropRemainder;
    bool m_ended = false;
    std::vector<Element> m_pending;
};

class CollectBatchDataset final : public Dataset
{
public:
    CollectBatchDataset(ElementSpec spec, StageStats *stats, DatasetPtr input, std::uint64_t batchSize, bool dropRemainder)
        : Dataset(std::move(spec), stats), m_input(std::move(input)), m_batchSize(batchSize), m_dropRemainder(dropRemainder)
    {
    }
    std::int64_t cardinality() const override
    {
        const std::int64_t n = m_input->cardinality(), b = std::int64_t(m_batchSize);
        return n < 0 ? n : (m_dropRemainder ? n / b : (n + b - 1) / b);
    }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        return std::make_unique<CollectBatchIterator>(m_input->makeIterator(context), m_input->spec(), m_batchSize, m_dropRemainder);
    }

private:
    DatasetPtr m_input;
    std::uint64_t m_batchSize;
    bool m_dropRemainder;
};

std::shared_ptr<Dataset> buildBatch(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::int64_t batchSize = params.integer("batch_size", std::nullopt, 1);
    const bool drop = params.boolean("drop_remainder", false);
    const std::int64_t parallel = params.autotunable("num_parallel_calls", kAutotune);
    const bool deterministic = params.boolean("deterministic", true);
    DatasetPtr input = inputs.at(0);
    ElementSpec spec = input->spec();
    for (auto &f : spec.features)
        f.shape.insert(f.shape.begin(), drop ? batchSize : -1); // tf.data: None unless drop_remainder
    StageStats *stats = context.statsFor(params.node());
    const bool fused = input->randomAccess() && std::none_of(input->spec().features.begin(), input->spec().features.end(),
                                                             [](const FeatureSpec &f) { return f.type.isString; });
    if (fused) {
        stats->async = true;
        stats->tunesParallelism = parallel == kAutotune;
        const int p = parallel == kAutotune ? context.threads() : int(parallel);
        return std::make_shared<GatherBatchDataset>(std::move(spec), stats, input, std::uint64_t(batchSize), drop, p, deterministic);
    }
    // Over any other input the rows are stacked one batch at a time, in order: said once
    // rather than ignored (tf.data treats both as hints too).
    std::vector<std::string> unused;
    for (const char *name : {"num_parallel_calls", "deterministic"})
        if (params.has(name))
            unused.push_back(name);
    if (!unused.empty()) {
        const std::string names = unused.size() == 2 ? unused[0] + " and " + unused[1] : unused[0];
        stats->note = names + (unused.size() == 2 ? " act" : " acts") +
                      " only when a batch gathers rows of mapped arrays without string features; here the rows are stacked one "
                      "batch at a time, in order";
        context.addNote("batch '" + params.node().id + "': " + stats->note);
    }
    if (input->chunkedRows())
        return std::make_shared<RebatchDataset>(std::move(spec), stats, input, std::uint64_t(batchSize), drop);
    return std::make_shared<CollectBatchDataset>(std::move(spec), stats, input, std::uint64_t(batchSize), drop);
}

} // namespace

void registerBatchOps(std::vector<OpInfo> &ops)
{
    ops.push_back({"batch", "transformations",
                   "Stacks batch_size consecutive elements (the last batch may be smaller unless drop_remainder), as tf.data "
                   "batch. Over mapped arrays the rows of each batch are gathered straight into the batch buffer, "
                   "num_parallel_calls batches at a time.",
                   {{"batch_size", "int", "", "elements per batch", true},
                    {"drop_remainder", "bool", "false", "drop a last batch smaller than batch_size"},
                    {"num_parallel_calls", "int|AUTOTUNE", "AUTOTUNE", "batches gathered at once (mapped inputs)"},
                    {"deterministic", "bool", "true", "keep input order when gathering in parallel"}},
                   1, 1, buildBatch});
}

} // namespace sluice::pipeline
