// The cache file format read back: the facts and the records' range from a header and end mark
// written here; a missing end mark, another version and a header cut short refused with the
// reason; records read to the byte, and damaged ones (dims whose product overflows, a string
// count larger than the bytes left, a rank other than the spec's) refused before anything is
// allocated for them.
#include "io/writers/cache_file.h"

#include <QtTest>

#include <cstring>

using namespace sluice;

namespace {

template <typename T>
void put(std::string &out, T value)
{
    out.append(reinterpret_cast<const char *>(&value), sizeof value);
}

std::span<const std::byte> asBytes(const std::string &s) { return std::as_bytes(std::span(s.data(), s.size())); }

} // namespace

class TestCacheFile : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void layoutReadsBackWhatWasWritten()
    {
        const std::vector<std::string> facts{"spec\t{value: int64 ()}", "stage s\tshuffle {}"};
        const std::string header = cacheHeader(facts);
        std::string file = header;
        put<std::int64_t>(file, 7); // not a record format check here: just payload bytes
        const auto trailer = cacheTrailer(1, header.size());
        file.append(reinterpret_cast<const char *>(trailer.data()), trailer.size());
        auto layout = readCacheLayout("c.cache", asBytes(file));
        QVERIFY2(layout.ok(), layout.ok() ? "" : layout.error().message().c_str());
        QCOMPARE(layout->facts, facts);
        QCOMPARE(layout->payloadBegin, header.size());
        QCOMPARE(layout->payloadEnd, header.size() + 8);
        // No facts at all still reads.
        const std::string bare = cacheHeader({});
        std::string bareFile = bare;
        const auto bareTrailer = cacheTrailer(0, bare.size());
        bareFile.append(reinterpret_cast<const char *>(bareTrailer.data()), bareTrailer.size());
        auto empty = readCacheLayout("c.cache", asBytes(bareFile));
        QVERIFY(empty.ok() && empty->facts.empty() && empty->payloadBegin == empty->payloadEnd);

        auto reason = [](const std::string &bytes) {
            auto r = readCacheLayout("c.cache", asBytes(bytes));
            return r.ok() ? std::string("ok") : r.error().reason;
        };
        QCOMPARE(reason(file.substr(0, file.size() - 1)), std::string("it is incomplete (no end mark: cut short or still being written)"));
        QCOMPARE(reason(header.substr(0, 20)), std::string("it is incomplete (cut short in its header)"));
        QCOMPARE(reason("SLUICE-CACHE 1\n{value: int64 ()}\n"), std::string("it was written by another version of Sluice"));
        QCOMPARE(reason("PK\x03\x04"), std::string("it is not a Sluice cache file"));
    }

    void recordsAreReadToTheByte()
    {
        // One element: an int64 scalar 42, float32 [2] {1.5, -2}, strings [2] {"a", "bc"}.
        std::string bytes;
        put<std::uint32_t>(bytes, 0);
        put<std::int64_t>(bytes, 42);
        put<std::uint32_t>(bytes, 1);
        put<std::int64_t>(bytes, 2);
        put<float>(bytes, 1.5f);
        put<float>(bytes, -2.0f);
        put<std::uint32_t>(bytes, 1);
        put<std::int64_t>(bytes, 2);
        put<std::uint64_t>(bytes, 2);
        put<std::uint64_t>(bytes, 1);
        bytes += "a";
        put<std::uint64_t>(bytes, 2);
        bytes += "bc";
        const CacheFeatureSpec spec[] = {{0, false, 8}, {1, false, 4}, {1, true, 1}};
        std::size_t offset = 0;
        auto record = readCacheRecord(asBytes(bytes), offset, bytes.size(), spec);
        QVERIFY(record);
        QCOMPARE(offset, bytes.size());
        std::int64_t value = 0;
        std::memcpy(&value, (*record)[0].data.data(), 8);
        QCOMPARE(value, std::int64_t(42));
        QCOMPARE((*record)[1].shape, (std::vector<std::int64_t>{2}));
        QCOMPARE((*record)[1].data.size(), std::size_t(8));
        QCOMPARE((*record)[2].strings, (std::vector<std::string>{"a", "bc"}));
        // Cut anywhere, it is refused and the offset stays.
        for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
            std::size_t at = 0;
            QVERIFY(!readCacheRecord(asBytes(bytes), at, cut, spec));
            QCOMPARE(at, std::size_t(0));
        }
    }

    void damagedRecordsAllocateNothing()
    {
        const CacheFeatureSpec strings[] = {{1, true, 1}}, numbers[] = {{2, false, 4}};
        std::string count; // a string count of 2^60 with a matching dim: more than the bytes left
        put<std::uint32_t>(count, 1);
        put<std::int64_t>(count, std::int64_t(1) << 60);
        put<std::uint64_t>(count, std::uint64_t(1) << 60);
        std::size_t at = 0;
        QVERIFY(!readCacheRecord(asBytes(count), at, count.size(), strings));
        std::string overflow; // dims whose product overflows 64 bits
        put<std::uint32_t>(overflow, 2);
        put<std::int64_t>(overflow, std::int64_t(1) << 40);
        put<std::int64_t>(overflow, std::int64_t(1) << 40);
        at = 0;
        QVERIFY(!readCacheRecord(asBytes(overflow), at, overflow.size(), numbers));
        std::string negative;
        put<std::uint32_t>(negative, 2);
        put<std::int64_t>(negative, -1);
        put<std::int64_t>(negative, 4);
        at = 0;
        QVERIFY(!readCacheRecord(asBytes(negative), at, negative.size(), numbers));
        std::string rank; // rank 3 where the spec says 2
        put<std::uint32_t>(rank, 3);
        at = 0;
        QVERIFY(!readCacheRecord(asBytes(rank), at, rank.size(), numbers));
    }
};

QTEST_MAIN(TestCacheFile)
#include "tst_cache_file.moc"
