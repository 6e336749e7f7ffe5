#pragma once
// Writes a .npy as a stream of rows, never holding the array in memory: the header is
// written with room for any row count and rewritten in place by finish(). The file appears
// under its name only when finish() succeeds (atomic, through AtomicFile).
//
// Threading: one thread at a time.

#include "io/writers/atomic_file.h"
#include "io/dtype.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sluice {

class NpyWriter
{
public:
    // rowShape: the shape of one row, i.e. the array's shape without its first dimension.
    static Result<NpyWriter> create(const std::string &path, TypeDescr descr, std::vector<std::uint64_t> rowShape);

    // Appends whole rows; `bytes` must hold a multiple of rowBytes() in the file's byte order.
    Status appendRows(std::span<const std::byte> bytes);
    template <typename T> Status appendRows(std::span<const T> values) { return appendRows(std::as_bytes(values)); }

    // Rewrites the header and syncs the data, without publishing the file yet: lets a
    // caller writing several files make them all durable before renaming any.
    Status prepare();
    // prepare() if not done, then renames the file into place.
    Status finish();

    std::uint64_t rows() const { return m_rows; }
    std::uint64_t rowBytes() const { return m_rowBytes; }
    const std::string &path() const { return m_file.path(); }

private:
    NpyWriter(AtomicFile file) : m_file(std::move(file)) {}
    std::string header() const;

    AtomicFile m_file;
    TypeDescr m_descr;
    std::vector<std::uint64_t> m_rowShape;
    std::uint64_t m_rowBytes = 0;
    std::uint64_t m_rows = 0;
    std::uint64_t m_headerSize = 0;
    bool m_prepared = false;
};

} // namespace sluice
