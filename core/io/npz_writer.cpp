#include "io/npz_writer.h"

#include "io/npy_header.h"
#include "io/zip_reader.h"

#include <zlib.h>

#include <cstring>
#include <limits>

namespace sluice {
namespace {

constexpr std::uint64_t kZip32Limit = 0xfffffffeu;
constexpr std::uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1; // 1980-01-01: reproducible archives

void put(std::string &out, std::uint64_t value, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out.push_back(char((value >> (8 * i)) & 0xff));
}

Result<std::vector<std::byte>> deflateRaw(std::span<const std::byte> in, const std::string &what)
{
    z_stream zs{};
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return Error::io(what, "zlib could not start deflating");
    std::vector<std::byte> out(deflateBound(&zs, uLong(in.size())));
    zs.next_in = const_cast<Bytef *>(reinterpret_cast<const Bytef *>(in.data()));
    zs.avail_in = uInt(in.size());
    zs.next_out = reinterpret_cast<Bytef *>(out.data());
    zs.avail_out = uInt(out.size());
    const int rc = deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    if (rc != Z_STREAM_END)
        return Error::io(what, "zlib failed to deflate");
    return out;
}

} // namespace

Result<NpzWriter> NpzWriter::create(const std::string &path, Compression compression)
{
    auto file = AtomicFile::create(path);
    if (!file)
        return file.error();
    NpzWriter w(std::move(file).value());
    w.m_compression = compression;
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
    for (const auto &e : m_entries)
        if (e.name == name + ".npy")
            return Error::invalid(what, "duplicate member name");

    return addMember(name, formatNpyHeader(descr, false, shape), data);
}

Status NpzWriter::addStrings(const std::string &name, std::span<const std::uint64_t> shape, const std::vector<std::string> &values)
{
    std::size_t width = 1;
    for (const auto &v : values)
        width = std::max(width, v.size());
    std::vector<std::byte> data(values.size() * width, std::byte{0});
    for (std::size_t i = 0; i < values.size(); ++i)
        std::memcpy(data.data() + i * width, values[i].data(), values[i].size());
    return addMember(name, formatNpyHeaderText("|S" + std::to_string(width), false, shape), data);
}

Status NpzWriter::addMember(const std::string &name, const std::string &header, std::span<const std::byte> data)
{
    const std::string what = m_file.path() + ": " + name;
    for (const auto &e : m_entries)
        if (e.name == name + ".npy")
            return Error::invalid(what, "duplicate member name");
    std::vector<std::byte> npy(header.size() + data.size());
    std::memcpy(npy.data(), header.data(), header.size());
    if (!data.empty())
        std::memcpy(npy.data() + header.size(), data.data(), data.size());
    if (npy.size() > kZip32Limit || m_file.size() > kZip32Limit)
        return Error::unsupported(what, "member or archive over 4 GiB (the npz writer does not write ZIP64)");

    Central c;
    c.name = name + ".npy";
    c.crc = zipCrc32(npy);
    c.size = std::uint32_t(npy.size());
    c.offset = std::uint32_t(m_file.size());
    std::vector<std::byte> payload;
    if (m_compression == Compression::Deflated) {
        auto deflated = deflateRaw(npy, what);
        if (!deflated)
            return deflated.error();
        payload = std::move(deflated).value();
        c.method = 8;
    } else {
        payload = std::move(npy);
    }
    c.compressedSize = std::uint32_t(payload.size());

    std::string local;
    put(local, 0x04034b50, 4);
    put(local, 20, 2); // version needed: 2.0
    put(local, 0, 2);  // flags
    put(local, c.method, 2);
    put(local, 0, 2); // time
    put(local, kDosDate1980, 2);
    put(local, c.crc, 4);
    put(local, c.compressedSize, 4);
    put(local, c.size, 4);
    put(local, c.name.size(), 2);
    put(local, 0, 2); // extra length
    local += c.name;
    if (auto s = m_file.write(local); !s)
        return s;
    if (auto s = m_file.write(payload); !s)
        return s;
    m_entries.push_back(std::move(c));
    return Status::success();
}

Status NpzWriter::finish()
{
    const std::uint64_t dirOffset = m_file.size();
    std::string dir;
    for (const auto &c : m_entries) {
        put(dir, 0x02014b50, 4);
        put(dir, 20, 2); // version made by
        put(dir, 20, 2); // version needed
        put(dir, 0, 2);
        put(dir, c.method, 2);
        put(dir, 0, 2);
        put(dir, kDosDate1980, 2);
        put(dir, c.crc, 4);
        put(dir, c.compressedSize, 4);
        put(dir, c.size, 4);
        put(dir, c.name.size(), 2);
        put(dir, 0, 2); // extra
        put(dir, 0, 2); // comment
        put(dir, 0, 2); // disk
        put(dir, 0, 2); // internal attributes
        put(dir, std::uint64_t(0644) << 16, 4); // external: a regular file, rw-r--r--
        put(dir, c.offset, 4);
        dir += c.name;
    }
    if (dirOffset + dir.size() > kZip32Limit || m_entries.size() > 0xfffe)
        return Error::unsupported(m_file.path(), "archive over 4 GiB or 65534 members (the npz writer does not write ZIP64)");
    std::string end;
    put(end, 0x06054b50, 4);
    put(end, 0, 2);
    put(end, 0, 2);
    put(end, m_entries.size(), 2);
    put(end, m_entries.size(), 2);
    put(end, dir.size(), 4);
    put(end, dirOffset, 4);
    put(end, 0, 2);
    if (auto s = m_file.write(dir + end); !s)
        return s;
    return m_file.commit();
}

} // namespace sluice
