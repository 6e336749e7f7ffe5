#pragma once
// Sources that produce their rows in chunks of columns (from_csv parsing in parallel,
// from_tfrecord decoding blocks of records, interleave over either): each chunk is an Element
// whose tensors are the features as columns, their leading dimension the chunk's rows. A chunk
// whose rows end at an error (a bad row) carries one more tensor after the columns: the error,
// so that the rows before it are still delivered, as one thread would. batch over such a
// source cuts its batches straight from the chunks (no element per row); other consumers get
// one element per row (RowsOfChunks).

#include "pipeline/engine/dataset.h"

#include <optional>

namespace sluice::pipeline {

class ChunkedRows
{
public:
    virtual ~ChunkedRows() = default;
    // A fresh pass over the chunks; their work is measured into the source's stats, their rows
    // are credited by whoever takes them (batch, interleave).
    virtual std::unique_ptr<Iterator> makeChunkIterator(const IteratorContext &context) const = 0;
};

// Appends `error` to a chunk of `features` columns.
void attachChunkError(Element &chunk, const Error &error);
// The error a chunk of `features` columns ends with, if any.
std::optional<Error> chunkError(const Element &chunk, std::size_t features);
// The rows of a chunk (0 for a chunk with no columns).
std::uint64_t chunkRows(const Element &chunk);
// Copies rows [begin, end) of column `feature` of `chunk` into `out`, which holds
// (end - begin) rows of the column's row bytes; strings are appended to `strings`.
void copyChunkRows(const Element &chunk, std::size_t feature, std::uint64_t begin, std::uint64_t end, std::byte *out,
                   std::vector<std::string> *strings);

// Rows of chunks per a fixed-shape row spec. Rows are written in place (numeric columns are
// allocated once at full capacity) and take() hands them over without another copy.
class ChunkBuilder
{
public:
    ChunkBuilder(const ElementSpec &rowSpec, std::uint64_t capacityRows);

    std::uint64_t rows() const { return m_rows; }
    std::uint64_t capacity() const { return m_capacity; }
    bool full() const { return m_rows >= m_capacity; }
    // Where row `row` of numeric column `feature` goes (row < capacity).
    std::byte *rowData(std::size_t feature, std::uint64_t row);
    std::vector<std::string> &strings(std::size_t feature) { return m_strings[feature]; }
    // Counts `n` more rows as written.
    void commit(std::uint64_t n) { m_rows += n; }
    // Appends rows [begin, end) of `chunk`, which has the same columns (end - begin fits).
    void append(const Element &chunk, std::uint64_t begin, std::uint64_t end);
    // The rows so far as a chunk; the builder starts over, empty.
    Element take();

private:
    const ElementSpec &m_spec;
    std::uint64_t m_capacity, m_rows = 0;
    std::vector<Tensor> m_columns; // numeric columns at full capacity, allocated when first written
    std::vector<std::vector<std::string>> m_strings;
    std::vector<std::size_t> m_rowBytes;
};

// Rows for a chunk of about 256 KiB of `rowSpec`'s rows (at least 1, at most 8192).
std::uint64_t rowsPerChunk(const ElementSpec &rowSpec);

// One element per row of `chunks` (rows of `rowSpec`); a chunk's error after its rows.
std::unique_ptr<Iterator> rowsOfChunks(std::unique_ptr<Iterator> chunks, const ElementSpec &rowSpec);

// Adds the time spent in `chunks` to `stats`' inclusive time (rows are credited by the taker).
std::unique_ptr<Iterator> measureChunks(std::unique_ptr<Iterator> chunks, StageStats *stats);

} // namespace sluice::pipeline
