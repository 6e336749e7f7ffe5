// libFuzzer target: any bytes read as a cache file (io/writers/cache_file.h) give a layout and records
// or a refusal, never a crash and never more memory than the input holds; every record's data
// lies inside the records' range, and each record moves the reader forward.
#include "io/writers/cache_file.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte *>(data), size);
    const auto layout = sluice::readCacheLayout("fuzz.cache", bytes);
    if (!layout.ok())
        return 0;
    if (layout->payloadBegin > layout->payloadEnd || layout->payloadEnd > size)
        std::abort();
    // The seed's elements (tests/data/cache: id int64, name and tag strings, x0…x2 float32, all
    // scalars), and rows of numbers and strings.
    const sluice::CacheFeatureSpec seed[] = {{0, false, 8}, {0, true, 1}, {0, true, 1}, {0, false, 4}, {0, false, 4}, {0, false, 4}};
    const sluice::CacheFeatureSpec rows[] = {{1, false, 4}, {2, true, 1}};
    for (const auto features : {std::span<const sluice::CacheFeatureSpec>(seed), std::span<const sluice::CacheFeatureSpec>(rows)}) {
        std::size_t offset = layout->payloadBegin;
        while (offset < layout->payloadEnd) {
            const std::size_t before = offset;
            const auto record = sluice::readCacheRecord(bytes, offset, layout->payloadEnd, features);
            if (!record)
                break;
            if (offset <= before || offset > layout->payloadEnd)
                std::abort();
            for (const auto &t : *record)
                if (!t.data.empty() && (t.data.data() < bytes.data() + layout->payloadBegin || t.data.data() + t.data.size() > bytes.data() + offset))
                    std::abort();
        }
    }
    return 0;
}
