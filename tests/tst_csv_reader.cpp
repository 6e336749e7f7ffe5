// CSV reading: RFC 4180 quoting, line ends, header handling, errors that name the line,
// numbers checked against numpy's own writer and parser, and bounded memory on a big file.
#include "io/formats/csv_reader.h"
#include "support/test_support.h"
#include "telemetry/process_memory.h"
#include "support/reference.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>

using namespace sluice;

namespace {

struct Csv
{
    QTemporaryDir dir;
    std::string path;
    explicit Csv(const std::string &text) : path(dir.filePath("t.csv").toStdString()) { test::writeFile(path, text); }
};

// All rows as strings, or the error message as the only row.
std::vector<std::vector<std::string>> rows(const std::string &path, CsvOptions o = {})
{
    auto r = CsvReader::open(path, o);
    if (!r)
        return {{"ERROR " + r.error().message()}};
    std::vector<std::vector<std::string>> out;
    for (;;) {
        auto row = r->next();
        if (!row)
            return {{"ERROR " + row.error().message()}};
        if (!*row)
            return out;
        out.emplace_back((*row)->begin(), (*row)->end());
    }
}

using Rows = std::vector<std::vector<std::string>>;

} // namespace

class TestCsvReader : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void quotingAndLineEnds()
    {
        Csv csv("\xef\xbb\xbfid,text,value\r\n1,\"a, b\",2.5\r\n\r\n2,\"say \"\"hi\"\"\",\n3,\"two\nlines\",-1\n4,,7");
        auto r = CsvReader::open(csv.path);
        QVERIFY(r.ok());
        QCOMPARE(r->columns(), (std::vector<std::string>{"id", "text", "value"})); // BOM dropped
        QCOMPARE(rows(csv.path), (Rows{{"1", "a, b", "2.5"}, {"2", "say \"hi\"", ""}, {"3", "two\nlines", "-1"}, {"4", "", "7"}}));
    }

    // Parallel parsing cuts files into chunks at line ends outside quotes: for every chunk size,
    // the chunks' rows one after another are the file's rows, and errors name the same lines.
    void chunksSplitAtLineEndsOutsideQuotes()
    {
        Csv csv("id,text\r\n1,\"a\nb\"\r\n2,\"\"\"q\"\"\n\"\n\n3,plain\n4,\"x,\ny\nz\"\n5,last");
        const Rows whole = rows(csv.path);
        QCOMPARE(whole.size(), std::size_t(5));
        auto r = CsvReader::open(csv.path);
        QVERIFY(r.ok());
        auto file = MappedFile::open(csv.path);
        QVERIFY(file.ok());
        for (std::size_t bytes = 1; bytes <= (*file)->size(); ++bytes) {
            Rows joined;
            std::size_t pos = r->dataBegin();
            std::uint64_t line = r->dataBeginLine();
            while (pos < (*file)->size()) {
                const CsvChunkEnd chunk = nextCsvChunk((*file)->bytes(), pos, bytes);
                QVERIFY(chunk.end > pos);
                auto part = CsvReader::open(csv.path);
                QVERIFY(part.ok());
                part->restrict(pos, chunk.end, line);
                for (;;) {
                    auto row = part->next();
                    QVERIFY2(row.ok(), row.ok() ? "" : row.error().message().c_str());
                    if (!*row)
                        break;
                    joined.emplace_back((*row)->begin(), (*row)->end());
                }
                pos = chunk.end;
                line += chunk.lines;
            }
            QVERIFY2(joined == whole, ("chunks of " + std::to_string(bytes) + " bytes").c_str());
        }
        // The line of an error inside a later chunk.
        Csv bad("a,b\n1,\"x\ny\"\n2,3\n4\n");
        auto b = CsvReader::open(bad.path);
        auto bf = MappedFile::open(bad.path);
        QVERIFY(b.ok() && bf.ok());
        const CsvChunkEnd first = nextCsvChunk((*bf)->bytes(), b->dataBegin(), 1);
        auto second = CsvReader::open(bad.path);
        QVERIFY(second.ok());
        second->restrict(first.end, (*bf)->size(), b->dataBeginLine() + first.lines);
        std::string error;
        for (;;) {
            auto row = second->next();
            if (!row.ok()) {
                error = row.error().message();
                break;
            }
            if (!*row)
                break;
        }
        QVERIFY2(QString::fromStdString(error).contains("line 5: 1 fields"), error.c_str());
    }

    void lineNumbersCountQuotedNewlines()
    {
        Csv csv("a,b\n1,\"x\ny\"\n2\n");
        const auto got = rows(csv.path);
        QCOMPARE(got.size(), std::size_t(1));
        QVERIFY2(QString::fromStdString(got[0][0]).contains("line 4: 1 fields, the header has 2"), got[0][0].c_str());
    }

    void errorsNameTheLine_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("reason");
        QTest::newRow("too many fields") << "a,b\n1,2\n3,4,5\n" << "line 3: 3 fields, the header has 2";
        QTest::newRow("unclosed quote") << "a,b\n1,\"2\n3,4\n" << "line 2: quoted field is not closed";
        QTest::newRow("text after quote") << "a,b\n1,\"2\"x\n" << "line 2: text after a closing quote";
        QTest::newRow("duplicate column") << "a,b,a\n1,2,3\n" << "line 1: column name 'a' appears twice";
        QTest::newRow("empty file") << "" << "file is empty (no header row)";
    }
    void errorsNameTheLine()
    {
        QFETCH(QString, text);
        QFETCH(QString, reason);
        Csv csv(text.toStdString());
        const auto got = rows(csv.path);
        QCOMPARE(got.size(), std::size_t(1));
        const QString message = QString::fromStdString(got[0][0]);
        QVERIFY2(message.startsWith("ERROR " + QString::fromStdString(csv.path)), qPrintable(message));
        QVERIFY2(message.contains(reason), qPrintable(message));
    }

    void withoutHeaderAndOtherDelimiters()
    {
        Csv csv("1\t2\n3\t4\n");
        CsvOptions o;
        o.header = false;
        o.delimiter = '\t';
        auto r = CsvReader::open(csv.path, o);
        QVERIFY(r.ok());
        QCOMPARE(r->columns(), (std::vector<std::string>{"0", "1"}));
        QCOMPARE(rows(csv.path, o), (Rows{{"1", "2"}, {"3", "4"}}));
        QCOMPARE(*r->columnIndex("1"), std::size_t(1));
        const auto missing = r->columnIndex("price");
        QVERIFY(!missing.ok());
        QVERIFY(QString::fromStdString(missing.error().reason).contains("columns: 0, 1"));
    }

    void numbers()
    {
        QCOMPARE(parseCsvDouble(" 2.5 "), std::optional(2.5));
        QCOMPARE(parseCsvDouble("+1e3"), std::optional(1000.0));
        QCOMPARE(parseCsvDouble("-INF"), std::optional(-HUGE_VAL));
        QVERIFY(std::isnan(*parseCsvDouble("NaN")));
        QVERIFY(!parseCsvDouble("").has_value());
        QVERIFY(!parseCsvDouble("1.5x").has_value());
        QVERIFY(!parseCsvDouble("abc").has_value());
        QCOMPARE(parseCsvInt("-9223372036854775808"), std::optional(std::numeric_limits<std::int64_t>::min()));
        QVERIFY(!parseCsvInt("9223372036854775808").has_value()); // overflow
        QVERIFY(!parseCsvInt("1.0").has_value());
        QCOMPARE(parseCsvInt(" +42"), std::optional<std::int64_t>(42));
    }

    void matchesNumpysWriterAndParser()
    {
        if (!test::numpyPython())
            SLUICE_REFERENCE_MISSING("numpy is not installed: the cross-check with numpy is skipped");
        QTemporaryDir dir;
        const QString path = dir.filePath("np.csv");
        // numpy writes the file (repr-exact floats) and says what it parses back.
        const auto out = test::runPython(
            "import sys, numpy as np\n"
            "a = np.random.default_rng(3).standard_normal((200, 3)) * 1e3\n"
            "np.savetxt(sys.argv[1], a, delimiter=',', header='x,y,z', comments='', fmt='%.17g')\n"
            "b = np.loadtxt(sys.argv[1], delimiter=',', skiprows=1)\n"
            "print(repr(float(b[:, 0].sum())), repr(float(b[199, 2])))\n",
            {path});
        QVERIFY(out.has_value());
        const QStringList expected = out->trimmed().split(' ');
        auto r = CsvReader::open(path.toStdString());
        QVERIFY(r.ok());
        QCOMPARE(r->columns(), (std::vector<std::string>{"x", "y", "z"}));
        std::vector<double> x;
        double last = 0;
        for (;;) {
            auto row = r->next();
            QVERIFY(row.ok());
            if (!*row)
                break;
            x.push_back(*parseCsvDouble((**row)[0]));
            last = *parseCsvDouble((**row)[2]);
        }
        QCOMPARE(x.size(), std::size_t(200));
        double sum = 0; // numpy sums pairwise; compare to float64 rounding
        for (double v : x)
            sum += v;
        QVERIFY(std::abs(sum - expected[0].toDouble()) <= 1e-9 * std::abs(expected[0].toDouble()) + 1e-9);
        QCOMPARE(last, expected[1].toDouble()); // exact: both parse the same 17 digits
    }

    void bigFileKeepsResidentMemoryBounded()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("big.csv").toStdString();
        {
            std::ofstream f(path);
            f << "a,b,c,d\n";
            const std::string line = "12345.678,-0.000123,987654321,\"quoted, text\"\n"; // 46 bytes
            std::string block;
            for (int i = 0; i < 4096; ++i)
                block += line;
            for (int i = 0; i < 1400; ++i) // ~264 MB
                f << block;
        }
        auto r = CsvReader::open(path);
        QVERIFY(r.ok());
        const std::uint64_t baseline = currentRssBytes();
        std::uint64_t peak = baseline, n = 0;
        for (;;) {
            auto row = r->next();
            QVERIFY(row.ok());
            if (!*row)
                break;
            if (++n % 100000 == 0)
                peak = std::max(peak, currentRssBytes());
        }
        QCOMPARE(n, std::uint64_t(4096) * 1400);
        qInfo("file %llu MiB, resident growth %llu MiB", static_cast<unsigned long long>(r->fileSize() >> 20),
              static_cast<unsigned long long>((peak - baseline) >> 20));
        QVERIFY2(peak - baseline < (160u << 20), "the CSV scan kept too much of the file resident");
    }
};

QTEST_GUILESS_MAIN(TestCsvReader)
#include "tst_csv_reader.moc"
