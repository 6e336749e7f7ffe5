// Rows in chunks of columns (pipeline/sources/row_chunks.h), as from_csv and from_tfrecord hand
// them over: a builder's chunk holds exactly the rows written into it whichever way take()
// hands the columns over (whole, copied, viewed); rows copy out of a chunk by range; a chunk
// carries the error its rows ended at; and one element per row comes out of chunks in order,
// the error after the rows before it.
#include "pipeline/sources/row_chunks.h"

#include <QtTest>

#include <cstring>
#include <deque>

using namespace sluice;
using namespace sluice::pipeline;

namespace {

ElementSpec rowSpec()
{
    return ElementSpec{{{"x", ValueType{DType::Float32, false}, {3}}, {"name", ValueType::string(), {}}}};
}

float valueOf(std::uint64_t row, int k) { return float(row) * 10.0f + float(k); }

// Writes rows [first, first + n) into the builder: x = (10 r, 10 r + 1, 10 r + 2), name "row r".
void writeRows(ChunkBuilder &builder, std::uint64_t first, std::uint64_t n)
{
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t r = first + i;
        float x[3] = {valueOf(r, 0), valueOf(r, 1), valueOf(r, 2)};
        std::memcpy(builder.rowData(0, builder.rows()), x, sizeof x);
        builder.strings(1).push_back("row " + std::to_string(r));
        builder.commit(1);
    }
}

void checkChunk(const Element &chunk, std::uint64_t first, std::uint64_t n)
{
    QCOMPARE(chunkRows(chunk), n);
    QCOMPARE(chunk.tensors.size(), std::size_t(2));
    QCOMPARE(chunk.tensors[0].shape(), (Shape{std::int64_t(n), 3}));
    const float *x = chunk.tensors[0].as<float>();
    for (std::uint64_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k)
            QCOMPARE(x[i * 3 + std::uint64_t(k)], valueOf(first + i, k));
    QCOMPARE(chunk.tensors[1].stringValues().size(), std::size_t(n));
    for (std::uint64_t i = 0; i < n; ++i)
        QCOMPARE(chunk.tensors[1].stringValues()[i], "row " + std::to_string(first + i));
    QVERIFY(!chunkError(chunk, 2));
}

// Hands out the chunks it was given, then the end.
class ChunkList final : public Iterator
{
public:
    explicit ChunkList(std::deque<Element> chunks) : m_chunks(std::move(chunks)) {}
    Result<Poll> next(Element &out) override
    {
        if (m_chunks.empty())
            return Poll::End;
        out = std::move(m_chunks.front());
        m_chunks.pop_front();
        return Poll::Ready;
    }

private:
    std::deque<Element> m_chunks;
};

} // namespace

class TestRowChunks : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // take() hands a full chunk's columns over whole, copies a short one, views most of one:
    // the rows read the same every way, and the builder starts over empty.
    void takeHandsOverExactlyTheRowsWritten_data()
    {
        QTest::addColumn<int>("rows");
        QTest::newRow("full") << 8;
        QTest::newRow("short (copied)") << 1;
        QTest::newRow("most (viewed)") << 5;
        QTest::newRow("none") << 0;
    }
    void takeHandsOverExactlyTheRowsWritten()
    {
        QFETCH(int, rows);
        const ElementSpec spec = rowSpec();
        ChunkBuilder builder(spec, 8);
        writeRows(builder, 0, std::uint64_t(rows));
        QCOMPARE(builder.full(), rows == 8);
        const Element chunk = builder.take();
        checkChunk(chunk, 0, std::uint64_t(rows));
        QCOMPARE(builder.rows(), std::uint64_t(0));
        writeRows(builder, 100, 2); // reused after take()
        checkChunk(builder.take(), 100, 2);
        checkChunk(chunk, 0, std::uint64_t(rows)); // the first chunk is not touched by the reuse
    }

    void rowsCopyOutAndAppendByRange()
    {
        const ElementSpec spec = rowSpec();
        ChunkBuilder builder(spec, 8);
        writeRows(builder, 0, 6);
        const Element chunk = builder.take();
        float out[9];
        std::vector<std::string> names;
        copyChunkRows(chunk, 0, 2, 5, reinterpret_cast<std::byte *>(out), nullptr);
        copyChunkRows(chunk, 1, 2, 5, nullptr, &names);
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 3; ++k)
                QCOMPARE(out[i * 3 + k], valueOf(std::uint64_t(2 + i), k));
        QCOMPARE(names, (std::vector<std::string>{"row 2", "row 3", "row 4"}));
        ChunkBuilder joined(spec, 8);
        joined.append(chunk, 0, 2);
        joined.append(chunk, 2, 6);
        checkChunk(joined.take(), 0, 6);
    }

    void aChunkCarriesItsError()
    {
        const ElementSpec spec = rowSpec();
        ChunkBuilder builder(spec, 4);
        writeRows(builder, 0, 2);
        Element chunk = builder.take();
        attachChunkError(chunk, Error::corrupt("part-1.csv", "line 3: 2 fields, the header has 3"));
        QCOMPARE(chunkRows(chunk), std::uint64_t(2)); // the rows before the error still count
        const auto error = chunkError(chunk, 2);
        QVERIFY(error);
        QCOMPARE(error->kind, Error::Kind::Corrupt);
        QVERIFY(error->message().find("part-1.csv") != std::string::npos);
    }

    void oneElementPerRowThenTheError()
    {
        const ElementSpec spec = rowSpec();
        ChunkBuilder builder(spec, 4);
        std::deque<Element> chunks;
        writeRows(builder, 0, 4);
        chunks.push_back(builder.take());
        writeRows(builder, 4, 3);
        chunks.push_back(builder.take());
        attachChunkError(chunks.back(), Error::corrupt("part-2.csv", "line 9: not a number"));
        auto rows = rowsOfChunks(std::make_unique<ChunkList>(std::move(chunks)), spec);
        for (std::uint64_t r = 0; r < 7; ++r) {
            Element e;
            auto poll = rows->next(e);
            QVERIFY2(poll.ok(), poll.ok() ? "" : poll.error().message().c_str());
            QCOMPARE(*poll, Poll::Ready);
            QCOMPARE(e.tensors[0].shape(), (Shape{3}));
            QCOMPARE(e.tensors[0].as<float>()[2], valueOf(r, 2));
            QCOMPARE(e.tensors[1].stringValues().front(), "row " + std::to_string(r));
        }
        Element e;
        auto poll = rows->next(e);
        QVERIFY(!poll.ok());
        QVERIFY(poll.error().message().find("part-2.csv") != std::string::npos);
    }

    void aChunkIsAbout256KiB()
    {
        QCOMPARE(rowsPerChunk(rowSpec()), std::uint64_t(5957)); // 44-byte rows (a string counts 32 bytes)
        const ElementSpec narrow{{{"flag", ValueType{DType::UInt8, false}, {}}}};
        QCOMPARE(rowsPerChunk(narrow), std::uint64_t(8192)); // 1-byte rows: the ceiling
        const ElementSpec wide{{{"image", ValueType{DType::Float32, false}, {256, 256}}}};
        QCOMPARE(rowsPerChunk(wide), std::uint64_t(1)); // 256 KiB rows: one a chunk
        const ElementSpec mid{{{"v", ValueType{DType::Float64, false}, {64}}}};
        QCOMPARE(rowsPerChunk(mid), std::uint64_t(512)); // 512-byte rows
    }
};

QTEST_MAIN(TestRowChunks)
#include "tst_row_chunks.moc"
