// The .npy header parser and formatter, including every malformed header a user may hand us.
#include "io/formats/npy_header.h"

#include <QtTest>

#include <cstring>

using namespace sluice;

namespace {

// Builds a .npy image: magic, version, header length, dict (padded), then `dataBytes` zeros.
std::string npyImage(const std::string &dict, int major = 1, std::size_t dataBytes = 0, int minor = 0)
{
    std::string out("\x93NUMPY", 6);
    out.push_back(char(major));
    out.push_back(char(minor));
    const std::string padded = dict + "\n";
    const std::uint32_t length = std::uint32_t(padded.size());
    for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
        out.push_back(char((length >> (8 * i)) & 0xff));
    out += padded;
    out.append(dataBytes, '\0');
    return out;
}

Result<NpyHeader> parse(const std::string &image) { return parseNpyHeader(std::as_bytes(std::span(image.data(), image.size())), "f.npy"); }

} // namespace

class TestNpyHeader : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void parsesVersions_data()
    {
        QTest::addColumn<int>("major");
        QTest::newRow("1.0") << 1;
        QTest::newRow("2.0") << 2;
        QTest::newRow("3.0") << 3;
    }
    void parsesVersions()
    {
        QFETCH(int, major);
        const auto h = parse(npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", major, 48));
        QVERIFY2(h.ok(), h.ok() ? "" : h.error().message().c_str());
        QCOMPARE(h->versionMajor, major);
        QCOMPARE(h->shape, (std::vector<std::uint64_t>{3, 4}));
        QCOMPARE(h->count, std::uint64_t(12));
        QCOMPARE(h->nbytes, std::uint64_t(48));
        QCOMPARE(h->descr.type, DType::Float32);
        QVERIFY(!h->fortranOrder);
    }

    void parsesPythonSpellings()
    {
        // Double quotes, no trailing comma, Python 2 long suffixes, key order, 1-d and 0-d shapes.
        auto h = parse(npyImage("{\"shape\": (2L, 3L), \"fortran_order\": True, \"descr\": \">i8\"}", 1, 48));
        QVERIFY(h.ok());
        QVERIFY(h->fortranOrder);
        QCOMPARE(h->descr.order, ByteOrder::Big);
        h = parse(npyImage("{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }", 1, 5));
        QVERIFY(h.ok());
        QCOMPARE(h->shape, std::vector<std::uint64_t>{5});
        h = parse(npyImage("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 1, 8));
        QVERIFY(h.ok());
        QCOMPARE(h->count, std::uint64_t(1));
        h = parse(npyImage("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 7), }", 1, 0));
        QVERIFY(h.ok());
        QCOMPARE(h->nbytes, std::uint64_t(0));
    }

    void formatterRoundTripsAndAligns()
    {
        for (bool reserve : {false, true}) {
            const std::vector<std::uint64_t> shape{7, 3, 2};
            std::string image = formatNpyHeader({DType::Int16, ByteOrder::Big}, true, shape, reserve);
            QCOMPARE(image.size() % 64, std::size_t(0));
            QCOMPARE(image.back(), '\n');
            image.append(7 * 3 * 2 * 2, '\0');
            const auto h = parse(image);
            QVERIFY(h.ok());
            QCOMPARE(h->shape, shape);
            QVERIFY(h->fortranOrder);
            QCOMPARE(h->descr, (TypeDescr{DType::Int16, ByteOrder::Big}));
        }
        // A reserved header keeps its length whatever the row count becomes.
        const std::vector<std::uint64_t> small{0, 4}, huge{~0ull, 4};
        QCOMPARE(formatNpyHeader({}, false, small, true).size(), formatNpyHeader({}, false, huge, true).size());
        const std::vector<std::uint64_t> scalar{}, one{9};
        QVERIFY(formatNpyHeader({}, false, scalar).find("'shape': ()") != std::string::npos);
        QVERIFY(formatNpyHeader({}, false, one).find("'shape': (9,)") != std::string::npos);
    }

    void headerLengthFromPrefix()
    {
        const std::string v1 = npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 1, 4);
        QCOMPARE(npyHeaderLength(std::as_bytes(std::span(v1.data(), v1.size()))), std::uint64_t(v1.size() - 4));
        const std::string junk = "not a npy at all";
        QCOMPARE(npyHeaderLength(std::as_bytes(std::span(junk.data(), junk.size()))), std::uint64_t(0));
    }

    void rejectsBadHeaders_data()
    {
        QTest::addColumn<QByteArray>("image");
        QTest::addColumn<QString>("reason");
        const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
        auto row = [](const char *name, const std::string &image, const char *reason) {
            QTest::newRow(name) << QByteArray(image.data(), qsizetype(image.size())) << QString(reason);
        };
        row("empty file", "", "file is empty");
        row("wrong magic", "\x93NUMPZ\x01\x00", "wrong magic");
        row("text file", "hello world, this is not numpy", "wrong magic");
        row("magic only", std::string("\x93NUMPY", 6), "truncated header");
        row("unknown version", npyImage(good, 4, 8), "unknown .npy format version 4.0");
        row("unknown minor", npyImage(good, 1, 8, 1), "unknown .npy format version 1.1");
        row("truncated length", std::string("\x93NUMPY\x02\x00\x10", 9), "truncated header");
        row("length past end", npyImage(good, 1, 8).substr(0, 40), "runs past the end of the file");
        row("not a dict", npyImage("['descr', '<f4']", 1, 8), "unparseable header");
        row("unclosed dict", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 1, 8), "unparseable header");
        row("garbage value", npyImage("{'descr': <f4, 'fortran_order': False, 'shape': (2,), }", 1, 8), "unparseable header");
        row("missing shape", npyImage("{'descr': '<f4', 'fortran_order': False, }", 1, 8), "missing 'shape'");
        row("missing two", npyImage("{'shape': (2,), }", 1, 8), "missing 'descr', 'fortran_order'");
        row("negative shape", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", 1, 8), "negative dimension");
        row("overflowing dim", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 1, 8), "overflows 64 bits");
        row("overflowing product", npyImage("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 1, 8), "shape overflows");
        row("overflowing bytes", npyImage("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }", 1, 8), "byte size does not fit");
        row("float in shape", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", 1, 8), "unparseable header");
        row("shape not tuple", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': 2, }", 1, 8), "not a tuple");
        row("string in shape", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': ('a',), }", 1, 8), "other than integers");
        row("fortran not bool", npyImage("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", 1, 8), "not True or False");
        row("object dtype", npyImage("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 1, 16), "object dtype");
        row("structured dtype", npyImage("{'descr': [('x', '<f4'), ('y', '<i4')], 'fortran_order': False, 'shape': (2,), }", 1, 16), "structured dtype");
        row("string dtype", npyImage("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", 1, 24), "string dtype");
        row("complex dtype", npyImage("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 1, 16), "complex dtype");
        row("data too short", npyImage(good, 1, 7), "data is shorter than the shape needs: 8 bytes expected, 7 present");
        row("deeply nested", npyImage("{'descr': " + std::string(200, '[') + std::string(200, ']') + ", }", 1, 0), "unparseable header");
    }
    void rejectsBadHeaders()
    {
        QFETCH(QByteArray, image);
        QFETCH(QString, reason);
        const auto h = parseNpyHeader(std::as_bytes(std::span(image.constData(), std::size_t(image.size()))), "bad.npy");
        QVERIFY(!h.ok());
        QCOMPARE(QString::fromStdString(h.error().what), QString("bad.npy"));
        const QString message = QString::fromStdString(h.error().message());
        QVERIFY2(message.contains(reason), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestNpyHeader)
#include "tst_npy_header.moc"
