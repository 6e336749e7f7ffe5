#include "io/formats/tfrecord_reader.h"

#include "io/crc32c.h"

#include <zlib.h>

#include <cstdio>
#include <cstring>

namespace sluice {
namespace {

constexpr std::size_t kHeaderBytes = 12; // length + its CRC
constexpr std::size_t kFooterBytes = 4;  // data CRC
constexpr std::size_t kInflateChunk = 1u << 20;
constexpr std::size_t kReleaseWindow = 32u << 20; // pages behind the read position are released in steps of this
// A record longer than this is taken as damage, not data: TensorFlow itself cannot write
// a single protobuf over 2 GiB.
constexpr std::uint64_t kMaxRecordBytes = std::uint64_t(1) << 31;

std::uint64_t le(const std::byte *p, int n)
{
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
    return v;
}

} // namespace

struct TfRecordReader::Inflater
{
    z_stream zs{};
    bool ended = false;
    ~Inflater() { inflateEnd(&zs); }
};

TfRecordReader::TfRecordReader(TfRecordReader &&) noexcept = default;
TfRecordReader &TfRecordReader::operator=(TfRecordReader &&) noexcept = default;
TfRecordReader::~TfRecordReader() = default;

Result<TfRecordReader::Compression> TfRecordReader::parseCompression(const std::string &name)
{
    if (name.empty() || name == "NONE")
        return Compression::None;
    if (name == "GZIP")
        return Compression::Gzip;
    if (name == "ZLIB")
        return Error::unsupported("compression_type", "ZLIB TFRecord files are not supported yet (use \"\" or \"GZIP\")");
    return Error::invalid("compression_type", "'" + name + "' is not \"\" or \"GZIP\"");
}

std::optional<TfRecordReader::Compression> TfRecordReader::sniff(const std::string &path)
{
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f)
        return std::nullopt;
    unsigned char head[kHeaderBytes] = {};
    const std::size_t n = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
        return Compression::Gzip;
    if (n == kHeaderBytes) {
        const auto *p = reinterpret_cast<const std::byte *>(head);
        if (maskCrc32c(crc32c({p, 8})) == std::uint32_t(le(p + 8, 4)))
            return Compression::None;
    }
    return std::nullopt;
}

Result<TfRecordReader> TfRecordReader::open(const std::string &path, Compression compression, bool verifyCrc)
{
    auto mapped = MappedFile::open(path);
    if (!mapped)
        return mapped.error();
    TfRecordReader r;
    r.m_path = path;
    r.m_verify = verifyCrc;
    r.m_file = std::move(mapped).value();
    r.m_file->adviseAccess(MappedFile::Access::Sequential);
    if (compression == Compression::Gzip) {
        r.m_inflater = std::make_unique<Inflater>();
        if (inflateInit2(&r.m_inflater->zs, 16 + MAX_WBITS) != Z_OK) // 16: expect a gzip wrapper
            return Error::io(path, "zlib could not start inflating");
        const auto bytes = r.m_file->bytes();
        r.m_inflater->zs.next_in = const_cast<Bytef *>(reinterpret_cast<const Bytef *>(bytes.data()));
        r.m_inflater->zs.avail_in = 0;
        r.m_offset = 0; // bytes of the file handed to zlib so far
    }
    return r;
}

Result<bool> TfRecordReader::fill(std::size_t n)
{
    while (m_end - m_begin < n) {
        if (m_inflater->ended)
            return false;
        // Compact, then grow so that `n` bytes fit.
        if (m_begin > 0) {
            std::memmove(m_buffer.data(), m_buffer.data() + m_begin, m_end - m_begin);
            m_end -= m_begin;
            m_begin = 0;
        }
        if (m_buffer.size() < std::max(n, m_end + kInflateChunk))
            m_buffer.resize(std::max(n, m_end + kInflateChunk));
        z_stream &zs = m_inflater->zs;
        const auto file = m_file->bytes();
        if (zs.avail_in == 0 && m_offset < file.size()) {
            const std::size_t chunk = std::min<std::size_t>(file.size() - m_offset, 1u << 30);
            zs.next_in = const_cast<Bytef *>(reinterpret_cast<const Bytef *>(file.data() + m_offset));
            zs.avail_in = uInt(chunk);
            m_offset += chunk;
        }
        zs.next_out = reinterpret_cast<Bytef *>(m_buffer.data() + m_end);
        zs.avail_out = uInt(std::min<std::size_t>(m_buffer.size() - m_end, 1u << 30));
        const uInt before = zs.avail_out;
        const int rc = inflate(&zs, Z_NO_FLUSH);
        m_end += before - zs.avail_out;
        if (rc == Z_STREAM_END) {
            // Concatenated gzip members are one stream, as gzip(1) and TensorFlow read them.
            if (zs.avail_in > 0 || m_offset < file.size()) {
                if (inflateReset(&zs) != Z_OK)
                    return Error::corrupt(m_path, "GZIP stream cannot be continued");
            } else {
                m_inflater->ended = true;
            }
        } else if (rc == Z_BUF_ERROR && zs.avail_in == 0 && m_offset >= file.size()) {
            return Error::corrupt(m_path, "GZIP stream is truncated");
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            return Error::corrupt(m_path, std::string("GZIP stream is damaged (") + (zs.msg ? zs.msg : "zlib error") + ")");
        }
    }
    return true;
}

Result<std::optional<std::span<const std::byte>>> TfRecordReader::next()
{
    using Out = std::optional<std::span<const std::byte>>;
    const std::string where = "record " + std::to_string(m_records);
    auto corrupt = [&](const std::string &why) { return Error::corrupt(m_path, where + ": " + why); };

    const std::byte *header = nullptr;
    if (!m_inflater) {
        const auto file = m_file->bytes();
        if (m_offset == file.size())
            return Out{};
        if (file.size() - m_offset < kHeaderBytes)
            return corrupt("file ends inside the record header (truncated)");
        header = file.data() + m_offset;
    } else {
        auto more = fill(kHeaderBytes);
        if (!more)
            return more.error();
        if (!*more) {
            if (m_end == m_begin)
                return Out{};
            return corrupt("stream ends inside the record header (truncated)");
        }
        header = m_buffer.data() + m_begin;
    }
    const std::uint64_t length = le(header, 8);
    if (maskCrc32c(crc32c({header, 8})) != std::uint32_t(le(header + 8, 4)))
        return corrupt("length CRC mismatch (damaged, or not a TFRecord file)");
    if (length > kMaxRecordBytes)
        return corrupt("record length " + std::to_string(length) + " is impossible");

    const std::size_t total = kHeaderBytes + std::size_t(length) + kFooterBytes;
    const std::byte *record = nullptr;
    if (!m_inflater) {
        const auto file = m_file->bytes();
        if (file.size() - m_offset < total)
            return corrupt("file ends inside the record (truncated)");
        record = file.data() + m_offset + kHeaderBytes;
        m_offset += total;
    } else {
        auto more = fill(total);
        if (!more)
            return more.error();
        if (!*more)
            return corrupt("stream ends inside the record (truncated)");
        record = m_buffer.data() + m_begin + kHeaderBytes;
        m_begin += total;
    }
    if (m_verify && maskCrc32c(crc32c({record, std::size_t(length)})) != std::uint32_t(le(record + length, 4)))
        return corrupt("data CRC mismatch (the record is damaged)");
    ++m_records;
    // Bounded resident memory on huge files: pages of the file behind the read position (for
    // GZIP, behind what zlib has consumed) are released in windows, one window kept.
    const std::size_t consumed = m_inflater ? m_offset - m_inflater->zs.avail_in : m_offset;
    if (consumed >= m_released + 2 * kReleaseWindow) {
        m_file->release(m_released, kReleaseWindow);
        m_released += kReleaseWindow;
    }
    return Out{std::span<const std::byte>(record, std::size_t(length))};
}

} // namespace sluice
