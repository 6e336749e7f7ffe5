#include "io/formats/zip_reader.h"

#include <zlib.h>

#include <algorithm>
#include <limits>

namespace sluice {
namespace {

constexpr std::uint32_t kEndOfCentralDir = 0x06054b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kZip64EndOfCentralDir = 0x06064b50;
constexpr std::uint32_t kCentralHeader = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::size_t kEndSize = 22;
constexpr std::size_t kLocatorSize = 20;
constexpr std::size_t kZip64EndSize = 56;
constexpr std::size_t kCentralSize = 46;
constexpr std::size_t kLocalSize = 30;
// Deflate cannot compress better than about 1032:1; a header claiming more is corrupt
// (and would make us allocate whatever a damaged file says).
constexpr std::uint64_t kMaxDeflateRatio = 1032;

// Little-endian reads with bounds checked by the caller's `fits`.
std::uint64_t le(std::span<const std::byte> b, std::size_t at, int n)
{
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = (v << 8) | std::to_integer<std::uint64_t>(b[at + std::size_t(i)]);
    return v;
}

bool fits(std::span<const std::byte> b, std::uint64_t at, std::uint64_t n) { return at <= b.size() && n <= b.size() - at; }

} // namespace

Result<std::vector<ZipEntry>> readZipDirectory(std::span<const std::byte> zip, const std::string &archiveName)
{
    auto corrupt = [&](const std::string &why) { return Error::corrupt(archiveName, why); };
    if (zip.empty())
        return corrupt("file is empty");
    if (zip.size() < kEndSize)
        return corrupt("truncated zip: too short to hold an end-of-central-directory record");

    // The end record sits in the last 22 + 65535 (comment) bytes; search backwards.
    std::size_t end = std::string::npos;
    const std::size_t lowest = zip.size() > kEndSize + 0xffff ? zip.size() - kEndSize - 0xffff : 0;
    for (std::size_t at = zip.size() - kEndSize + 1; at-- > lowest;) {
        if (le(zip, at, 4) == kEndOfCentralDir && at + kEndSize + le(zip, at + 20, 2) == zip.size()) {
            end = at;
            break;
        }
    }
    if (end == std::string::npos)
        return corrupt("not a zip archive or truncated (no end-of-central-directory record)");

    std::uint64_t entries = le(zip, end + 10, 2);
    std::uint64_t dirSize = le(zip, end + 12, 4);
    std::uint64_t dirOffset = le(zip, end + 16, 4);
    if (le(zip, end + 4, 2) != 0 || le(zip, end + 6, 2) != 0)
        return Error::unsupported(archiveName, "multi-volume zip archives are not supported");

    // ZIP64: the locator precedes the end record and points at the ZIP64 end record.
    if (end >= kLocatorSize && le(zip, end - kLocatorSize, 4) == kZip64Locator) {
        const std::uint64_t at = le(zip, end - kLocatorSize + 8, 8);
        if (!fits(zip, at, kZip64EndSize) || le(zip, at, 4) != kZip64EndOfCentralDir)
            return corrupt("ZIP64 end-of-central-directory record is missing or out of range");
        entries = le(zip, at + 32, 8);
        dirSize = le(zip, at + 40, 8);
        dirOffset = le(zip, at + 48, 8);
    }
    if (!fits(zip, dirOffset, dirSize))
        return corrupt("central directory lies outside the file (truncated zip?)");
    if (entries > dirSize / kCentralSize)
        return corrupt("central directory claims " + std::to_string(entries) + " entries but is only " +
                       std::to_string(dirSize) + " bytes");

    std::vector<ZipEntry> out;
    out.reserve(std::size_t(entries));
    std::uint64_t at = dirOffset;
    const std::uint64_t dirEnd = dirOffset + dirSize;
    for (std::uint64_t i = 0; i < entries; ++i) {
        if (at + kCentralSize > dirEnd || le(zip, at, 4) != kCentralHeader)
            return corrupt("central directory entry " + std::to_string(i) + " is damaged");
        const std::uint64_t flags = le(zip, at + 8, 2);
        const std::uint64_t method = le(zip, at + 10, 2);
        ZipEntry e;
        e.crc32 = std::uint32_t(le(zip, at + 16, 4));
        e.compressedSize = le(zip, at + 20, 4);
        e.uncompressedSize = le(zip, at + 24, 4);
        const std::uint64_t nameLength = le(zip, at + 28, 2);
        const std::uint64_t extraLength = le(zip, at + 30, 2);
        const std::uint64_t commentLength = le(zip, at + 32, 2);
        std::uint64_t localOffset = le(zip, at + 42, 4);
        const std::uint64_t entryEnd = at + kCentralSize + nameLength + extraLength + commentLength;
        if (entryEnd > dirEnd)
            return corrupt("central directory entry " + std::to_string(i) + " runs past the directory");
        e.name.assign(reinterpret_cast<const char *>(zip.data() + at + kCentralSize), std::size_t(nameLength));

        // ZIP64 extended information: 64-bit values for the fields saturated at 0xffffffff, in this order.
        std::uint64_t x = at + kCentralSize + nameLength;
        const std::uint64_t extraEnd = x + extraLength;
        while (x + 4 <= extraEnd) {
            const std::uint64_t id = le(zip, x, 2), size = le(zip, x + 2, 2);
            std::uint64_t field = x + 4;
            const std::uint64_t fieldEnd = field + size;
            if (fieldEnd > extraEnd)
                return corrupt("member '" + e.name + "' has a damaged extra field");
            if (id == 0x0001) {
                for (std::uint64_t *value : {&e.uncompressedSize, &e.compressedSize, &localOffset}) {
                    if (*value != 0xffffffffu)
                        continue;
                    if (field + 8 > fieldEnd)
                        return corrupt("member '" + e.name + "' has a short ZIP64 extra field");
                    *value = le(zip, field, 8);
                    field += 8;
                }
            }
            x = fieldEnd;
        }

        if (flags & 0x1)
            return Error::unsupported(archiveName, "member '" + e.name + "' is encrypted");
        if (method == 0)
            e.method = ZipEntry::Method::Stored;
        else if (method == 8)
            e.method = ZipEntry::Method::Deflated;
        else
            return Error::unsupported(archiveName, "member '" + e.name + "' uses compression method " +
                                                       std::to_string(method) + " (only stored and deflated are read)");
        if (e.method == ZipEntry::Method::Stored && e.compressedSize != e.uncompressedSize)
            return corrupt("member '" + e.name + "' is stored but its sizes differ");

        if (!fits(zip, localOffset, kLocalSize) || le(zip, localOffset, 4) != kLocalHeader)
            return corrupt("member '" + e.name + "' has no local header at its recorded offset");
        e.dataOffset = localOffset + kLocalSize + le(zip, localOffset + 26, 2) + le(zip, localOffset + 28, 2);
        if (!fits(zip, e.dataOffset, e.compressedSize))
            return corrupt("member '" + e.name + "' runs past the end of the archive (truncated zip?)");
        out.push_back(std::move(e));
        at = entryEnd;
    }
    return out;
}

Result<std::vector<std::byte>> inflateZipEntry(std::span<const std::byte> zip, const ZipEntry &entry, const std::string &what)
{
    if (!fits(zip, entry.dataOffset, entry.compressedSize))
        return Error::corrupt(what, "compressed data lies outside the archive");
    if (entry.uncompressedSize > (entry.compressedSize + 64) * kMaxDeflateRatio)
        return Error::corrupt(what, "declared size " + std::to_string(entry.uncompressedSize) +
                                        " is impossible for " + std::to_string(entry.compressedSize) + " compressed bytes");
    if (entry.uncompressedSize > std::numeric_limits<std::size_t>::max() / 2)
        return Error::unsupported(what, "member is too large to inflate into memory");

    // The buffer grows with what really inflates, so a damaged or hostile directory entry
    // that declares a huge size costs nothing until the data backs it up.
    constexpr std::uint64_t kInitialBytes = 16u << 20;
    std::vector<std::byte> out(std::size_t(std::min(entry.uncompressedSize, kInitialBytes)));
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) // raw deflate, as zip stores it
        return Error::io(what, "zlib could not start inflating");
    // zlib counts in uInt (32 bits): feed and drain in chunks so members over 4 GiB work.
    const std::byte *in = zip.data() + entry.dataOffset;
    std::uint64_t inLeft = entry.compressedSize, outDone = 0;
    int rc = Z_OK;
    constexpr std::uint64_t kChunk = 1u << 30;
    while (rc == Z_OK) {
        if (zs.avail_in == 0 && inLeft > 0) {
            const std::uint64_t n = std::min(inLeft, kChunk);
            zs.next_in = const_cast<Bytef *>(reinterpret_cast<const Bytef *>(in));
            zs.avail_in = uInt(n);
            in += n;
            inLeft -= n;
        }
        if (zs.avail_out == 0) {
            if (outDone == out.size() && outDone < entry.uncompressedSize)
                out.resize(std::size_t(std::min(entry.uncompressedSize, std::max<std::uint64_t>(2 * outDone, kInitialBytes))));
            const std::uint64_t n = std::min<std::uint64_t>(out.size() - outDone, kChunk);
            zs.next_out = reinterpret_cast<Bytef *>(out.data() + outDone);
            zs.avail_out = uInt(n);
            outDone += n;
            if (n == 0) { // output is full: the stream must end now
                Bytef probe;
                zs.next_out = &probe;
                zs.avail_out = 1;
                rc = inflate(&zs, Z_NO_FLUSH);
                if (rc != Z_STREAM_END)
                    rc = Z_DATA_ERROR;
                break;
            }
        }
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc == Z_BUF_ERROR && zs.avail_in == 0 && inLeft == 0)
            break; // input exhausted before the end of the stream
        if (rc == Z_BUF_ERROR)
            rc = Z_OK;
    }
    const bool ended = rc == Z_STREAM_END;
    const std::uint64_t produced = zs.total_out;
    inflateEnd(&zs);
    if (!ended)
        return Error::corrupt(what, "deflate stream is damaged or truncated");
    if (produced != entry.uncompressedSize)
        return Error::corrupt(what, "inflated to " + std::to_string(produced) + " bytes, directory says " +
                                        std::to_string(entry.uncompressedSize));
    if (zipCrc32(out) != entry.crc32)
        return Error::corrupt(what, "CRC-32 mismatch: the member's data is corrupt");
    return out;
}

std::uint32_t zipCrc32(std::span<const std::byte> bytes)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    const auto *p = reinterpret_cast<const Bytef *>(bytes.data());
    std::size_t left = bytes.size();
    while (left > 0) {
        const uInt n = uInt(std::min<std::size_t>(left, 1u << 30));
        crc = crc32(crc, p, n);
        p += n;
        left -= n;
    }
    return std::uint32_t(crc);
}

} // namespace sluice
