#include "io/writers/cache_file.h"

#include <cstring>
#include <string_view>

namespace sluice {
namespace {

constexpr char kMagic[] = "SLUICE-CACHE 2\n";
constexpr char kTrailerMagic[8] = {'S', 'L', 'C', 'E', 'N', 'D', '0', '2'};

// Reads fixed-size fields from [offset, end), never past it.
struct Cursor
{
    std::span<const std::byte> bytes;
    std::size_t offset, end;

    std::size_t left() const { return end - offset; }
    bool read(void *dst, std::size_t n)
    {
        if (n > left())
            return false;
        if (n)
            std::memcpy(dst, bytes.data() + offset, n);
        offset += n;
        return true;
    }
};

} // namespace

std::string cacheHeader(const std::vector<std::string> &facts)
{
    std::string header = kMagic;
    for (const auto &f : facts)
        header += f + "\n";
    return header + "\n";
}

std::array<std::byte, kCacheTrailerSize> cacheTrailer(std::uint64_t elements, std::uint64_t headerSize)
{
    std::array<std::byte, kCacheTrailerSize> trailer;
    std::memcpy(trailer.data(), kTrailerMagic, 8);
    std::memcpy(trailer.data() + 8, &elements, 8);
    std::memcpy(trailer.data() + 16, &headerSize, 8);
    return trailer;
}

Result<CacheFileLayout> readCacheLayout(const std::string &path, std::span<const std::byte> bytes)
{
    const std::string_view text(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    if (!text.starts_with(kMagic))
        return Error::invalid(path, text.starts_with("SLUICE-CACHE") ? "it was written by another version of Sluice" : "it is not a Sluice cache file");
    const std::size_t factsBegin = sizeof(kMagic) - 1;
    // The facts end at the first empty line; a file with no facts has it right after the magic.
    const std::size_t end = text.substr(factsBegin).starts_with("\n") ? factsBegin - 1 : text.find("\n\n", factsBegin);
    if (end == std::string_view::npos)
        return Error::invalid(path, "it is incomplete (cut short in its header)");
    CacheFileLayout layout;
    layout.payloadBegin = end + 2;
    std::string_view lines = text.substr(factsBegin, layout.payloadBegin - 1 - factsBegin);
    while (!lines.empty()) {
        const auto nl = lines.find('\n');
        layout.facts.emplace_back(lines.substr(0, nl));
        lines.remove_prefix(nl == std::string_view::npos ? lines.size() : nl + 1);
    }
    if (bytes.size() < layout.payloadBegin + kCacheTrailerSize ||
        std::memcmp(bytes.data() + bytes.size() - kCacheTrailerSize, kTrailerMagic, sizeof kTrailerMagic) != 0)
        return Error::invalid(path, "it is incomplete (no end mark: cut short or still being written)");
    std::uint64_t headerSize = 0;
    std::memcpy(&headerSize, bytes.data() + bytes.size() - 8, 8);
    if (headerSize != layout.payloadBegin)
        return Error::invalid(path, "it is damaged (its end mark does not match its header)");
    layout.payloadEnd = bytes.size() - kCacheTrailerSize;
    return layout;
}

std::optional<std::vector<CacheTensorRecord>> readCacheRecord(std::span<const std::byte> bytes, std::size_t &offset, std::size_t end,
                                                              std::span<const CacheFeatureSpec> spec)
{
    if (end > bytes.size() || offset > end)
        return std::nullopt;
    Cursor c{bytes, offset, end};
    std::vector<CacheTensorRecord> record(spec.size());
    for (std::size_t i = 0; i < spec.size(); ++i) {
        CacheTensorRecord &t = record[i];
        std::uint32_t ndim = 0;
        if (!c.read(&ndim, 4) || ndim != spec[i].ndim || std::uint64_t(ndim) * 8 > c.left())
            return std::nullopt;
        t.shape.resize(ndim);
        std::uint64_t count = 1;
        for (auto &d : t.shape) {
            c.read(&d, 8);
            // Dims are sizes; their product must stay below what any file can hold.
            if (d < 0 || (d > 0 && count > (std::uint64_t(1) << 62) / std::uint64_t(d)))
                return std::nullopt;
            count *= std::uint64_t(d);
        }
        if (spec[i].isString) {
            std::uint64_t n = 0;
            // Each string takes at least its 8-byte length: a count larger than that is damage.
            if (!c.read(&n, 8) || n != count || n > c.left() / 8)
                return std::nullopt;
            t.strings.resize(n);
            for (auto &s : t.strings) {
                std::uint64_t len = 0;
                if (!c.read(&len, 8) || len > c.left())
                    return std::nullopt;
                s.assign(reinterpret_cast<const char *>(bytes.data() + c.offset), len);
                c.offset += len;
            }
            continue;
        }
        if (spec[i].itemSize == 0 || count > c.left() / spec[i].itemSize)
            return std::nullopt;
        const std::size_t n = std::size_t(count) * spec[i].itemSize;
        t.data = bytes.subspan(c.offset, n);
        c.offset += n;
    }
    offset = c.offset;
    return record;
}

} // namespace sluice
