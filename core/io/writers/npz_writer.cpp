#include "io/writers/npz_writer.h"

#include "io/formats/npy_header.h"
#include "io/formats/zip_reader.h"

#include <zlib.h>

#include <cstring>
#include <limits>

namespace sluice {
namespace {

constexpr std::uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1; // 1980-01-01: reproducible archives
constexpr std::uint64_t kSaturated32 = 0xffffffffu;              // "see the ZIP64 extra field"
constexpr std::size_t kZlibChunk = std::size_t(1) << 30;         // zlib counts in 32-bit units

void put(std::string &out, std::uint64_t value, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out.push_back(char((value >> (8 * i)) & 0xff));
}

std::uint32_t crcOf(std::span<const std::byte> bytes, std::uint32_t crc)
{
    for (std::size_t at = 0; at < bytes.size(); at += kZlibChunk) {
        const std::size_t n = std::min(kZlibChunk, bytes.size() - at);
        crc = std::uint32_t(crc32(crc, reinterpret_cast<const Bytef *>(bytes.data() + at), uInt(n)));
    }
    return crc;
}

// Raw deflate of `parts` one after another, any size (zlib is fed 1 GiB at a time).
Result<std::vector<std::byte>> deflateRaw(std::initializer_list<std::span<const std::byte>> parts, const std::string &what)
{
    z_stream zs{};
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return Error::io(what, "zlib could not start deflating");
    std::uint64_t total = 0;
    for (auto part : parts)
        total += part.size();
    std::vector<std::byte> out(deflateBound(&zs, uLong(total)) + 64);
    auto step = [&](int flush) {
        zs.next_out = reinterpret_cast<Bytef *>(out.data() + zs.total_out);
        zs.avail_out = uInt(std::min<std::size_t>(kZlibChunk, out.size() - zs.total_out));
        return deflate(&zs, flush);
    };
    int rc = Z_OK;
    for (auto part : parts)
        for (std::size_t at = 0; at < part.size() && rc == Z_OK; at += kZlibChunk) {
            zs.next_in = const_cast<Bytef *>(reinterpret_cast<const Bytef *>(part.data() + at));
            zs.avail_in = uInt(std::min(kZlibChunk, part.size() - at));
            while (zs.avail_in > 0 && rc == Z_OK)
                rc = step(Z_NO_FLUSH);
        }
    while (rc == Z_OK)
        rc = step(Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    if (rc != Z_STREAM_END)
        return Error::io(what, "zlib failed to deflate");
    return out;
}

} // namespace

Result<NpzWriter> NpzWriter::create(const std::string &path, Compression compression, std::uint64_t zip64From)
{
    auto file = AtomicFile::create(path);
    if (!file)
        return file.error();
    NpzWriter w(std::move(file).value());
    w.m_compression = compression;
    w.m_zip64From = zip64From;
    return w;
}

Status NpzWriter::add(const std::string &name, TypeDescr descr, std::span<const std::uint64_t> shape, std::span<const std::byte> data)
{
    const std::string what = m_file.path() + ": " + name;
    if (name.empty() || name.size() + 4 > 0xffff)
        return Error::invalid(what, "member names must be 1 to 65531 bytes");
    std::uint64_t expected = itemSize(descr.type);
    for (std::uint64_t d : shape) {
        if (d != 0 && expected > std::numeric_limits<std::uint64_t>::max() / d)
            return Error::invalid(what, "shape overflows 64 bits");
        expected *= d;
    }
    if (expected != data.size())
        return Error::invalid(what, "shape needs " + std::to_string(expected) + " bytes, got " + std::to_string(data.size()));
    return addMember(name + ".npy", formatNpyHeader(descr, false, shape), data);
}

Status NpzWriter::addFile(const std::string &memberName, std::span<const std::byte> bytes)
{
    if (memberName.empty() || memberName.size() > 0xffff)
        return Error::invalid(m_file.path() + ": " + memberName, "member names must be 1 to 65535 bytes");
    return addMember(memberName, std::string(), bytes);
}

Status NpzWriter::addStrings(const std::string &name, std::span<const std::uint64_t> shape, const std::vector<std::string> &values)
{
    std::size_t width = 1;
    for (const auto &v : values)
        width = std::max(width, v.size());
    std::vector<std::byte> data(values.size() * width, std::byte{0});
    for (std::size_t i = 0; i < values.size(); ++i)
        std::memcpy(data.data() + i * width, values[i].data(), values[i].size());
    return addMember(name + ".npy", formatNpyHeaderText("|S" + std::to_string(width), false, shape), data);
}

Status NpzWriter::addMember(const std::string &name, const std::string &header, std::span<const std::byte> data)
{
    const std::string what = m_file.path() + ": " + name;
    for (const auto &e : m_entries)
        if (e.name == name)
            return Error::invalid(what, "duplicate member name");
    const auto headerBytes = std::as_bytes(std::span(header.data(), header.size()));

    Central c;
    c.name = name;
    c.crc = crcOf(data, crcOf(headerBytes, 0));
    c.size = header.size() + data.size();
    c.offset = m_file.size();
    std::vector<std::byte> deflated;
    if (m_compression == Compression::Deflated) {
        auto d = deflateRaw({headerBytes, data}, what);
        if (!d)
            return d.error();
        deflated = std::move(d).value();
        c.method = 8;
        c.compressedSize = deflated.size();
    } else {
        c.compressedSize = c.size;
    }

    // Past the limit, both sizes go into a ZIP64 extra field and the header says 0xffffffff.
    const bool zip64 = c.size >= m_zip64From || c.compressedSize >= m_zip64From;
    std::string local;
    put(local, 0x04034b50, 4);
    put(local, zip64 ? 45 : 20, 2); // version needed: 4.5 for ZIP64, else 2.0
    put(local, 0, 2);               // flags
    put(local, c.method, 2);
    put(local, 0, 2); // time
    put(local, kDosDate1980, 2);
    put(local, c.crc, 4);
    put(local, zip64 ? kSaturated32 : c.compressedSize, 4);
    put(local, zip64 ? kSaturated32 : c.size, 4);
    put(local, c.name.size(), 2);
    put(local, zip64 ? 20 : 0, 2); // extra length
    local += c.name;
    if (zip64) {
        put(local, 0x0001, 2);
        put(local, 16, 2);
        put(local, c.size, 8);
        put(local, c.compressedSize, 8);
    }
    if (auto s = m_file.write(local); !s)
        return s;
    if (c.method == 8) {
        if (auto s = m_file.write(deflated); !s)
            return s;
    } else {
        if (auto s = m_file.write(header); !s)
            return s;
        if (auto s = m_file.write(data); !s)
            return s;
    }
    m_entries.push_back(std::move(c));
    return Status::success();
}

Status NpzWriter::finish()
{
    const std::uint64_t dirOffset = m_file.size();
    std::string dir;
    for (const auto &c : m_entries) {
        // Each field past the limit is saturated here and given in the extra field, in the
        // order the format fixes: size, compressed size, offset.
        std::string extra;
        const bool bigSize = c.size >= m_zip64From, bigCompressed = c.compressedSize >= m_zip64From, bigOffset = c.offset >= m_zip64From;
        if (bigSize)
            put(extra, c.size, 8);
        if (bigCompressed)
            put(extra, c.compressedSize, 8);
        if (bigOffset)
            put(extra, c.offset, 8);
        if (!extra.empty()) {
            std::string field;
            put(field, 0x0001, 2);
            put(field, extra.size(), 2);
            extra = field + extra;
        }
        put(dir, 0x02014b50, 4);
        put(dir, extra.empty() ? 20 : 45, 2); // version made by
        put(dir, extra.empty() ? 20 : 45, 2); // version needed
        put(dir, 0, 2);
        put(dir, c.method, 2);
        put(dir, 0, 2);
        put(dir, kDosDate1980, 2);
        put(dir, c.crc, 4);
        put(dir, bigCompressed ? kSaturated32 : c.compressedSize, 4);
        put(dir, bigSize ? kSaturated32 : c.size, 4);
        put(dir, c.name.size(), 2);
        put(dir, extra.size(), 2);
        put(dir, 0, 2); // comment
        put(dir, 0, 2); // disk
        put(dir, 0, 2); // internal attributes
        put(dir, std::uint64_t(0644) << 16, 4); // external: a regular file, rw-r--r--
        put(dir, bigOffset ? kSaturated32 : c.offset, 4);
        dir += c.name;
        dir += extra;
    }
    std::string end;
    const bool zip64 = m_entries.size() > 0xfffe || dir.size() >= m_zip64From || dirOffset >= m_zip64From;
    if (zip64) {
        // The ZIP64 end record and its locator, then the classic end record saturated.
        const std::uint64_t zip64End = dirOffset + dir.size();
        put(end, 0x06064b50, 4);
        put(end, 44, 8); // the record's size after this field
        put(end, 45, 2);
        put(end, 45, 2);
        put(end, 0, 4);
        put(end, 0, 4);
        put(end, m_entries.size(), 8);
        put(end, m_entries.size(), 8);
        put(end, dir.size(), 8);
        put(end, dirOffset, 8);
        put(end, 0x07064b50, 4);
        put(end, 0, 4);
        put(end, zip64End, 8);
        put(end, 1, 4);
    }
    put(end, 0x06054b50, 4);
    put(end, 0, 2);
    put(end, 0, 2);
    put(end, zip64 ? 0xffff : m_entries.size(), 2);
    put(end, zip64 ? 0xffff : m_entries.size(), 2);
    put(end, zip64 ? kSaturated32 : dir.size(), 4);
    put(end, zip64 ? kSaturated32 : dirOffset, 4);
    put(end, 0, 2);
    if (auto s = m_file.write(dir + end); !s)
        return s;
    return m_file.commit();
}

} // namespace sluice
