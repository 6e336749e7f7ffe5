#include "io/writers/npy_writer.h"

#include "io/formats/npy_header.h"

#include <limits>

namespace sluice {

Result<NpyWriter> NpyWriter::create(const std::string &path, TypeDescr descr, std::vector<std::uint64_t> rowShape)
{
    std::uint64_t rowBytes = itemSize(descr.type);
    for (std::uint64_t d : rowShape) {
        if (d != 0 && rowBytes > std::numeric_limits<std::uint64_t>::max() / d)
            return Error::invalid(path, "row shape overflows 64 bits");
        rowBytes *= d;
    }
    auto file = AtomicFile::create(path);
    if (!file)
        return file.error();
    NpyWriter w(std::move(file).value());
    w.m_descr = descr;
    w.m_rowShape = std::move(rowShape);
    w.m_rowBytes = rowBytes;
    const std::string h = w.header();
    w.m_headerSize = h.size();
    if (auto s = w.m_file.write(h); !s)
        return s.error();
    return w;
}

std::string NpyWriter::header() const
{
    std::vector<std::uint64_t> shape{m_rows};
    shape.insert(shape.end(), m_rowShape.begin(), m_rowShape.end());
    return formatNpyHeader(m_descr, false, shape, /*reserveRows=*/true);
}

Status NpyWriter::appendRows(std::span<const std::byte> bytes)
{
    if (m_rowBytes == 0) {
        if (!bytes.empty())
            return Error::invalid(path(), "rows of zero bytes cannot carry data");
        return Status::success();
    }
    if (bytes.size() % m_rowBytes != 0)
        return Error::invalid(path(), "appended " + std::to_string(bytes.size()) + " bytes, not a whole number of " +
                                          std::to_string(m_rowBytes) + "-byte rows");
    if (m_prepared)
        return Error::invalid(path(), "rows appended after prepare()");
    if (auto s = m_file.write(bytes); !s)
        return s;
    m_rows += bytes.size() / m_rowBytes;
    return Status::success();
}

Status NpyWriter::prepare()
{
    const std::string h = header();
    if (h.size() != m_headerSize) // cannot happen: the header reserves room for any row count
        return Error::invalid(path(), "header grew while writing");
    if (auto s = m_file.writeAt(0, std::as_bytes(std::span(h.data(), h.size()))); !s)
        return s;
    if (auto s = m_file.sync(); !s)
        return s;
    m_prepared = true;
    return Status::success();
}

Status NpyWriter::finish()
{
    if (!m_prepared)
        if (auto s = prepare(); !s)
            return s;
    return m_file.commit();
}

} // namespace sluice
