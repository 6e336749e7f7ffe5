#pragma once
// Sources that produce their rows in chunks of columns (from_csv parsing in parallel): each
// chunk is an Element whose tensors are the features as columns, their leading dimension the
// chunk's rows. A chunk whose rows end at an error (a bad row) carries one more tensor after the
// columns: the error, so that the rows before it are still delivered, as one thread would.
// batch over such a source cuts its batches straight from the chunks (no element per row).

#include "pipeline/dataset.h"

#include <optional>

namespace sluice::pipeline {

class ChunkedRows
{
public:
    virtual ~ChunkedRows() = default;
    // A fresh pass over the chunks; their work is measured into the source's stats.
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

} // namespace sluice::pipeline
