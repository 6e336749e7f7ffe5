#include "pipeline/ops/save_pass.h"

#include "io/writers/dataset_publish.h"
#include "pipeline/engine/runtime.h"

#include <algorithm>
#include <utility>

namespace sluice::pipeline {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t(1) << 20;

std::string rowShapeText(const std::vector<std::uint64_t> &shape)
{
    Shape s(shape.begin(), shape.end());
    return shapeText(s);
}

} // namespace

Result<std::shared_ptr<SavePass>> SavePass::start(std::shared_ptr<const SaveConfig> config, const IteratorContext &context)
{
    if (!context.runtime)
        return Error::invalid("save", "needs the pipeline's runtime to write its shards").at(config->nodeId);
    auto staging = createStagingFolder(config->folder);
    if (!staging)
        return staging.error().at(config->nodeId, "path");
    ShardedDatasetOptions options = config->options;
    options.folder = *staging;
    options.overwrite = false; // a fresh folder: nothing to replace there
    auto writer = ShardedDatasetWriter::create(options, config->features);
    if (!writer) {
        removeStagingFolder(*staging);
        return writer.error().at(config->nodeId, writer.error().what == "pattern" ? "shard_pattern" : "path");
    }
    return std::shared_ptr<SavePass>(new SavePass(std::move(config), context, std::move(*staging), std::move(*writer)));
}

SavePass::SavePass(std::shared_ptr<const SaveConfig> config, const IteratorContext &context, std::string staging, ShardedDatasetWriter writer)
    : m_config(std::move(config)), m_runtime(context.runtime), m_waker(context.waker), m_staging(std::move(staging)),
      m_writer(std::move(writer))
{
    const std::size_t shards = std::size_t(m_config->options.shards);
    // About 64 MiB staged and 64 MiB queued in all, whatever the shard count: blocks of 1 MiB
    // for a few shards (large writes), smaller ones for many.
    m_blockBytes = std::clamp<std::uint64_t>(64 * kMiB / shards, 64 * 1024, kMiB);
    m_backlogBytes = std::max<std::uint64_t>(64 * kMiB, 2 * m_blockBytes * shards);
    m_queues = std::vector<ShardQueue>(shards);
    for (std::size_t i = 0; i < shards; ++i)
        m_staged.push_back(emptyBlock());
}

SavePass::~SavePass()
{
    // An uncommitted writer removes what its shards published; the staging folder goes with
    // the rest (temporaries of shards never closed). Published: both are gone already.
    m_writer.reset();
    if (!m_published)
        removeStagingFolder(m_staging);
}

SavePass::RowBlock SavePass::emptyBlock() const
{
    RowBlock block;
    const std::size_t n = m_config->features.size();
    block.data.resize(n);
    block.strings.resize(n);
    block.lengths.resize(n);
    return block;
}

void SavePass::appendRow(RowBlock &block, const Element &element, std::uint64_t row, const std::vector<std::uint64_t> &rowElements) const
{
    for (std::size_t k = 0; k < m_config->features.size(); ++k) {
        const DatasetFeature &f = m_config->features[k];
        const Tensor &t = element.tensors[m_config->indices[k]];
        const std::uint64_t n = rowElements[k];
        if (f.isString) {
            const auto &values = t.stringValues();
            for (std::uint64_t i = row * n; i < (row + 1) * n; ++i) {
                block.strings[k].push_back(values[std::size_t(i)]);
                block.bytes += values[std::size_t(i)].size();
            }
        } else {
            const std::size_t bytes = std::size_t(n * itemSize(f.dtype));
            const std::byte *p = t.data() + row * bytes;
            block.data[k].insert(block.data[k].end(), p, p + bytes);
            block.bytes += bytes;
        }
        if (f.variableLength)
            block.lengths[k].push_back(n);
    }
    ++block.rows;
}

Status SavePass::add(const Element &element)
{
    const auto &features = m_config->features;
    const std::string &node = m_config->nodeId;
    // Every saved feature's rows checked before any is staged: a shard never gets half a row.
    std::uint64_t rows = 1;
    std::vector<std::uint64_t> rowElements(features.size());
    for (std::size_t k = 0; k < features.size(); ++k) {
        const DatasetFeature &f = features[k];
        const Tensor &t = element.tensors.at(m_config->indices[k]);
        const std::string what = "feature '" + f.name + "'";
        if (t.isString() != f.isString || (!f.isString && t.dtype() != f.dtype))
            return Error::invalid(what, "is " + t.type().name() + " in an element, " + f.typeName() + " in the element spec").at(node);
        Shape rowShape = t.shape();
        if (m_config->batched) {
            if (rowShape.empty())
                return Error::invalid(what, "is a scalar in a batched element (no rows to save)").at(node);
            const auto batchRows = std::uint64_t(rowShape.front());
            if (k > 0 && batchRows != rows)
                return Error::invalid(what, "has " + std::to_string(batchRows) + " rows where '" + features.front().name + "' has " +
                                                std::to_string(rows) + " in the same batch")
                    .at(node);
            rows = batchRows;
            rowShape.erase(rowShape.begin());
        }
        if (!f.variableLength && std::vector<std::uint64_t>(rowShape.begin(), rowShape.end()) != f.rowShape)
            return Error::invalid(what, "has rows of shape " + shapeText(rowShape) + " where the saved dataset's rows are " +
                                            rowShapeText(f.rowShape))
                .at(node);
        rowElements[k] = elementCount(rowShape);
        const std::uint64_t total = f.isString ? t.stringValues().size() : t.count();
        if (total != rows * rowElements[k])
            return Error::invalid(what, "holds " + std::to_string(total) + " values, not " + std::to_string(rows) + " rows of " +
                                            std::to_string(rowElements[k]))
                .at(node);
    }
    const std::uint64_t shards = m_staged.size();
    for (std::uint64_t r = 0; r < rows; ++r) {
        const std::size_t shard = std::size_t(m_rowsAdded++ % shards);
        appendRow(m_staged[shard], element, r, rowElements);
        if (m_staged[shard].bytes >= m_blockBytes)
            hand(shard);
    }
    return Status::success();
}

void SavePass::hand(std::size_t shard)
{
    RowBlock block = std::exchange(m_staged[shard], emptyBlock());
    MutexLock lock(m_mutex);
    m_queuedBytes += block.bytes;
    m_queues[shard].blocks.push_back(std::move(block));
    schedule(shard);
}

void SavePass::schedule(std::size_t shard)
{
    ShardQueue &q = m_queues[shard];
    if (q.running || m_stopped)
        return;
    q.running = true;
    m_runtime->spawn([self = shared_from_this(), shard] { self->drain(shard); });
}

Result<bool> SavePass::mustWait()
{
    MutexLock lock(m_mutex);
    if (m_error)
        return *m_error; // a shard failed: the pass ends now rather than reading on for nothing
    if (m_queuedBytes <= m_backlogBytes)
        return false;
    m_consumerWaiting = true;
    return true;
}

void SavePass::finishInput()
{
    for (std::size_t shard = 0; shard < m_staged.size(); ++shard)
        if (m_staged[shard].rows > 0)
            hand(shard);
    MutexLock lock(m_mutex);
    for (std::size_t shard = 0; shard < m_queues.size(); ++shard) {
        m_queues[shard].closeRequested = true;
        schedule(shard);
    }
}

Result<Poll> SavePass::complete()
{
    {
        MutexLock lock(m_mutex);
        if (m_error)
            return *m_error;
        if (m_closedShards < int(m_queues.size())) {
            m_consumerWaiting = true;
            return Poll::Pending;
        }
    }
    // Every shard closed: no task touches the writer any more.
    if (Status s = m_writer->commit(); !s)
        return s.error().at(m_config->nodeId, "path");
    if (Status s = publishDataset(m_staging, m_config->folder, m_config->overwrite); !s)
        return s.error().at(m_config->nodeId, m_config->overwrite ? "path" : "overwrite");
    m_published = true;
    return Poll::Ready;
}

void SavePass::stop()
{
    MutexLock lock(m_mutex);
    m_stopped = true;
    m_consumerWaiting = false;
}

bool SavePass::takeWaitingConsumer()
{
    if (!m_consumerWaiting || m_stopped)
        return false;
    const bool caughtUp = m_queuedBytes <= m_backlogBytes / 2;
    const bool done = m_closedShards == int(m_queues.size());
    if (!(m_error || caughtUp || done))
        return false;
    m_consumerWaiting = false;
    return true;
}

void SavePass::drain(std::size_t shard)
{
    ShardWriter &writer = m_writer->shard(int(shard));
    for (;;) {
        enum class Step { Write, Close, Leave } step = Step::Leave;
        RowBlock block;
        bool wake = false;
        {
            MutexLock lock(m_mutex);
            ShardQueue &q = m_queues[shard];
            const bool cancelled = m_runtime->cancelled();
            if (!m_stopped && !m_error && !cancelled && !q.blocks.empty()) {
                step = Step::Write;
                block = std::move(q.blocks.front());
                q.blocks.pop_front();
            } else if (!m_stopped && !m_error && !cancelled && q.closeRequested && !q.closed) {
                step = Step::Close;
            } else {
                // Nothing (more) to do: the next hand() or finishInput() schedules a new task.
                q.running = false;
                wake = takeWaitingConsumer();
            }
        }
        if (step == Step::Leave) {
            if (wake)
                m_waker(); // outside the lock: a waker may run the consumer's task at once
            return;
        }
        Status status = Status::success();
        if (step == Step::Close) {
            status = writer.close();
        } else {
            std::vector<ColumnRows> columns(block.data.size());
            for (std::size_t k = 0; k < columns.size(); ++k)
                columns[k] = {block.data[k], block.strings[k], block.lengths[k]};
            status = writer.append(block.rows, columns);
        }
        {
            MutexLock lock(m_mutex);
            if (step == Step::Write) {
                m_queuedBytes -= block.bytes;
            } else if (status) {
                m_queues[shard].closed = true;
                ++m_closedShards;
            }
            if (!status && !m_error) {
                // Writing failed (the folder): `path`; a value no shard can hold (a uint64 over
                // int64's range in an Int64List) concerns the node's input, no parameter.
                const Error &e = status.error();
                const bool io = e.kind == Error::Kind::IoError || e.kind == Error::Kind::NotFound;
                m_error = e.at(m_config->nodeId, io ? "path" : "");
            }
            wake = takeWaitingConsumer();
        }
        if (wake)
            m_waker();
    }
}

} // namespace sluice::pipeline
