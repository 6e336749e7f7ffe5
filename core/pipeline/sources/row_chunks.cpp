#include "pipeline/sources/row_chunks.h"

#include <algorithm>
#include <cstring>

namespace sluice::pipeline {

void attachChunkError(Element &chunk, const Error &error)
{
    chunk.tensors.push_back(Tensor::strings({3}, {std::to_string(int(error.kind)), error.what, error.reason}));
}

std::optional<Error> chunkError(const Element &chunk, std::size_t features)
{
    if (chunk.tensors.size() <= features)
        return std::nullopt;
    const auto &e = chunk.tensors.back().stringValues();
    return Error::make(Error::Kind(std::stoi(e.at(0))), e.at(1), e.at(2));
}

std::uint64_t chunkRows(const Element &chunk)
{
    return chunk.tensors.empty() || chunk.tensors[0].shape().empty() ? 0 : std::uint64_t(chunk.tensors[0].shape()[0]);
}

void copyChunkRows(const Element &chunk, std::size_t feature, std::uint64_t begin, std::uint64_t end, std::byte *out,
                   std::vector<std::string> *strings)
{
    const Tensor &column = chunk.tensors.at(feature);
    const std::uint64_t rows = std::max<std::uint64_t>(1, chunkRows(chunk));
    if (column.isString()) {
        const auto &values = column.stringValues();
        const std::size_t perRow = values.size() / rows; // a string feature of shape (k,) holds k per row
        strings->insert(strings->end(), values.begin() + std::ptrdiff_t(begin * perRow), values.begin() + std::ptrdiff_t(end * perRow));
        return;
    }
    const std::size_t rowBytes = column.nbytes() / rows;
    if (end > begin)
        std::memcpy(out, column.data() + begin * rowBytes, (end - begin) * rowBytes);
}

ChunkBuilder::ChunkBuilder(const ElementSpec &rowSpec, std::uint64_t capacityRows)
    : m_spec(rowSpec), m_capacity(std::max<std::uint64_t>(1, capacityRows)), m_columns(rowSpec.features.size()),
      m_strings(rowSpec.features.size())
{
    for (const FeatureSpec &f : rowSpec.features)
        m_rowBytes.push_back(f.type.isString ? 0 : std::size_t(elementCount(f.shape) * itemSize(f.type.dtype)));
}

std::byte *ChunkBuilder::rowData(std::size_t feature, std::uint64_t row)
{
    Tensor &column = m_columns[feature];
    if (!column.data()) {
        Shape shape = m_spec.features[feature].shape;
        shape.insert(shape.begin(), std::int64_t(m_capacity));
        column = Tensor::allocate(m_spec.features[feature].type.dtype, std::move(shape));
    }
    return column.mutableData() + row * m_rowBytes[feature];
}

void ChunkBuilder::append(const Element &chunk, std::uint64_t begin, std::uint64_t end)
{
    // Called per row by an interleave with block_length 1: the row sizes are known, no division.
    for (std::size_t f = 0; f < m_spec.features.size(); ++f) {
        if (m_spec.features[f].type.isString)
            copyChunkRows(chunk, f, begin, end, nullptr, &m_strings[f]);
        else
            std::memcpy(rowData(f, m_rows), chunk.tensors[f].data() + begin * m_rowBytes[f], std::size_t((end - begin) * m_rowBytes[f]));
    }
    m_rows += end - begin;
}

Element ChunkBuilder::take()
{
    Element chunk;
    for (std::size_t f = 0; f < m_spec.features.size(); ++f) {
        const FeatureSpec &spec = m_spec.features[f];
        Shape shape = spec.shape;
        shape.insert(shape.begin(), std::int64_t(m_rows));
        if (spec.type.isString) {
            chunk.tensors.push_back(Tensor::strings(std::move(shape), std::move(m_strings[f])));
            m_strings[f] = {};
            continue;
        }
        Tensor &column = m_columns[f];
        if (!column.data()) {
            chunk.tensors.push_back(Tensor::allocate(spec.type.dtype, std::move(shape)));
        } else if (m_rows == m_capacity) {
            chunk.tensors.push_back(std::move(column));
        } else if (m_rows < m_capacity / 4) { // a short chunk (a Pending input, the end): copied, not to pin a full one
            Tensor t = Tensor::allocate(spec.type.dtype, std::move(shape));
            if (m_rows > 0)
                std::memcpy(t.mutableData(), column.data(), std::size_t(m_rows * m_rowBytes[f]));
            chunk.tensors.push_back(std::move(t));
        } else { // most of a chunk: its rows, viewed
            auto owner = std::make_shared<Tensor>(std::move(column));
            const std::span<const std::byte> bytes{owner->data(), std::size_t(m_rows * m_rowBytes[f])};
            chunk.tensors.push_back(Tensor::view(spec.type.dtype, std::move(shape), SharedBytes{owner, bytes}));
        }
        column = Tensor{};
    }
    m_rows = 0;
    return chunk;
}

std::uint64_t rowsPerChunk(const ElementSpec &rowSpec)
{
    std::uint64_t rowBytes = 0;
    for (const FeatureSpec &f : rowSpec.features) // strings: counted at 32 bytes each
        rowBytes += elementCount(f.shape) * (f.type.isString ? 32 : itemSize(f.type.dtype));
    return std::clamp<std::uint64_t>((256u << 10) / std::max<std::uint64_t>(1, rowBytes), 1, 8192);
}

namespace {

class RowsOfChunks final : public Iterator
{
public:
    RowsOfChunks(std::unique_ptr<Iterator> chunks, const ElementSpec &rowSpec) : m_chunks(std::move(chunks)), m_spec(rowSpec) {}
    Result<Poll> next(Element &out) override
    {
        while (m_row >= m_rows) {
            if (auto error = chunkError(m_chunk, m_spec.features.size())) {
                m_chunk = {}; // the error is returned once; the pass ends with it
                m_ended = true;
                return *error;
            }
            if (m_ended)
                return Poll::End;
            auto r = m_chunks->next(m_chunk);
            if (!r.ok() || *r != Poll::Ready)
                return r;
            m_row = 0;
            m_rows = chunkRows(m_chunk);
        }
        out.tensors.clear();
        for (std::size_t f = 0; f < m_spec.features.size(); ++f) {
            const FeatureSpec &spec = m_spec.features[f];
            const Tensor &column = m_chunk.tensors[f];
            if (column.isString()) {
                const auto &values = column.stringValues();
                const std::size_t perRow = values.size() / m_rows;
                out.tensors.push_back(Tensor::strings(spec.shape, {values.begin() + std::ptrdiff_t(m_row * perRow),
                                                                   values.begin() + std::ptrdiff_t((m_row + 1) * perRow)}));
                continue;
            }
            Tensor t = Tensor::allocate(column.dtype(), spec.shape);
            const std::size_t rowBytes = std::size_t(t.nbytes());
            std::memcpy(t.mutableData(), column.data() + m_row * rowBytes, rowBytes);
            out.tensors.push_back(std::move(t));
        }
        ++m_row;
        return Poll::Ready;
    }

private:
    std::unique_ptr<Iterator> m_chunks;
    const ElementSpec &m_spec;
    Element m_chunk;
    std::uint64_t m_row = 0, m_rows = 0;
    bool m_ended = false;
};

class MeasuredChunks final : public Iterator
{
public:
    MeasuredChunks(std::unique_ptr<Iterator> chunks, StageStats *stats) : m_chunks(std::move(chunks)), m_stats(stats) {}
    Result<Poll> next(Element &out) override
    {
        const std::int64_t t0 = nowNs();
        auto r = m_chunks->next(out);
        m_stats->add(m_stats->inclusiveNs, nowNs() - t0);
        return r;
    }

private:
    std::unique_ptr<Iterator> m_chunks;
    StageStats *m_stats;
};

} // namespace

std::unique_ptr<Iterator> rowsOfChunks(std::unique_ptr<Iterator> chunks, const ElementSpec &rowSpec)
{
    return std::make_unique<RowsOfChunks>(std::move(chunks), rowSpec);
}

std::unique_ptr<Iterator> measureChunks(std::unique_ptr<Iterator> chunks, StageStats *stats)
{
    if (!stats)
        return chunks;
    return std::make_unique<MeasuredChunks>(std::move(chunks), stats);
}

} // namespace sluice::pipeline
