// Writing TFRecord files of tf.train.Example: byte for byte what TensorFlow writes
// (tests/data/tfrecord_writer, make_reference.py), GZIP equal once inflated, read back by
// Sluice's reader and decoder, and atomic: nothing under the final name before commit().
#include "io/formats/tf_example.h"
#include "io/writers/tf_example_writer.h"
#include "io/formats/tfrecord_reader.h"
#include "io/writers/tfrecord_writer.h"
#include "support/test_support.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <zlib.h>

#include <limits>

using namespace sluice;

namespace {

std::string reference(const char *name) { return test::dataFile(std::string("tfrecord_writer/") + name); }

// A feature of examples.json, holding its values.
struct OwnedFeature
{
    std::string name, kind;
    std::vector<float> floats;
    std::vector<std::int64_t> ints;
    std::vector<std::string> strings;
};

std::string fromHex(const std::string &hex)
{
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(char(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return out;
}

// The records TensorFlow wrote, features in the (unsorted) order the script gave them.
std::vector<std::vector<OwnedFeature>> referenceRecords()
{
    const auto j = nlohmann::json::parse(test::readFile(reference("examples.json")));
    std::vector<std::vector<OwnedFeature>> records;
    for (const auto &r : j["records"]) {
        std::vector<OwnedFeature> features;
        for (const auto &f : r) {
            OwnedFeature o{f["name"].get<std::string>(), f["kind"].get<std::string>(), {}, {}, {}};
            for (const auto &v : f["values"]) {
                if (o.kind == "float32")
                    o.floats.push_back(float(v.get<double>()));
                else if (o.kind == "int64")
                    o.ints.push_back(v.get<std::int64_t>());
                else
                    o.strings.push_back(fromHex(v.get<std::string>()));
            }
            features.push_back(std::move(o));
        }
        records.push_back(std::move(features));
    }
    return records;
}

std::vector<ExampleFeatureValues> valuesOf(const std::vector<OwnedFeature> &features)
{
    std::vector<ExampleFeatureValues> out;
    for (const OwnedFeature &f : features) {
        if (f.kind == "float32")
            out.push_back(ExampleFeatureValues::floats(f.name, f.floats));
        else if (f.kind == "int64")
            out.push_back(ExampleFeatureValues::ints(f.name, f.ints));
        else
            out.push_back(ExampleFeatureValues::bytes(f.name, f.strings));
    }
    return out;
}

// Writes the reference records with Sluice; returns the error, or "".
std::string writeReference(const std::string &path, TfRecordWriter::Compression compression)
{
    auto w = TfRecordWriter::create(path, compression);
    if (!w)
        return w.error().message();
    std::string record;
    for (const auto &features : referenceRecords()) {
        if (auto s = encodeExample(valuesOf(features), record); !s)
            return s.error().message();
        if (auto s = w->write(record); !s)
            return s.error().message();
    }
    auto s = w->commit();
    return s ? "" : s.error().message();
}

// Inflates a whole gzip file (every member).
std::string gunzip(const std::string &bytes)
{
    z_stream zs{};
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        return "<inflateInit2 failed>";
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
    zs.avail_in = uInt(bytes.size());
    std::string out;
    char buffer[16384];
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        zs.next_out = reinterpret_cast<Bytef *>(buffer);
        zs.avail_out = sizeof buffer;
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            inflateEnd(&zs);
            return "<damaged gzip stream>";
        }
        out.append(buffer, sizeof buffer - zs.avail_out);
    }
    const bool trailing = zs.avail_in != 0;
    inflateEnd(&zs);
    return trailing ? "<bytes after the gzip stream>" : out;
}

// Every record of a file, read by Sluice's reader; the error message, or "" with `out` filled.
std::string readAll(const std::string &path, TfRecordReader::Compression c, std::vector<std::string> &out)
{
    auto r = TfRecordReader::open(path, c);
    if (!r)
        return r.error().message();
    for (;;) {
        auto rec = r->next();
        if (!rec)
            return rec.error().message();
        if (!*rec)
            return "";
        out.emplace_back(reinterpret_cast<const char *>((*rec)->data()), (*rec)->size());
    }
}

Example decode(const std::string &record)
{
    auto e = parseExample(std::as_bytes(std::span(record.data(), record.size())), "record");
    return e ? std::move(e).value() : Example{};
}

std::string text(std::span<const std::byte> b) { return {reinterpret_cast<const char *>(b.data()), b.size()}; }

QStringList filesIn(const QTemporaryDir &dir) { return QDir(dir.path()).entryList(QDir::Files | QDir::Hidden); }

} // namespace

class TestTfRecordWriter : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void matchesTensorFlowByteForByte()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("plain.tfrecord").toStdString();
        QCOMPARE(QString::fromStdString(writeReference(path, TfRecordWriter::Compression::None)), QString());
        const std::string ours = test::readFile(path), theirs = test::readFile(reference("plain.tfrecord"));
        QCOMPARE(ours.size(), theirs.size());
        QVERIFY2(ours == theirs, "the file differs from TensorFlow's");
        QCOMPARE(TfRecordReader::sniff(path), std::optional(TfRecordReader::Compression::None));
    }

    void examplesMatchTensorFlowOneByOne()
    {
        // The same check record by record, so that a failure says which record differs.
        std::vector<std::string> theirs;
        QCOMPARE(QString::fromStdString(readAll(reference("plain.tfrecord"), TfRecordReader::Compression::None, theirs)), QString());
        const auto records = referenceRecords();
        QCOMPARE(theirs.size(), records.size());
        for (std::size_t i = 0; i < records.size(); ++i) {
            auto ours = encodeExample(valuesOf(records[i]));
            QVERIFY(ours.ok());
            QVERIFY2(*ours == theirs[i], qPrintable(QString("record %1 differs").arg(i)));
        }
    }

    void gzipMatchesTensorFlowOnceInflated()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("gzip.tfrecord").toStdString();
        QCOMPARE(QString::fromStdString(writeReference(path, TfRecordWriter::Compression::Gzip)), QString());
        const std::string plain = test::readFile(reference("plain.tfrecord"));
        QCOMPARE(gunzip(test::readFile(reference("gzip.tfrecord"))).size(), plain.size()); // TensorFlow's, as the script checked
        const std::string ours = gunzip(test::readFile(path));
        QCOMPARE(ours.size(), plain.size());
        QVERIFY2(ours == plain, "inflated, the file differs from TensorFlow's");
        // Sluice's reader takes it, and tells it from a plain file.
        QCOMPARE(TfRecordReader::sniff(path), std::optional(TfRecordReader::Compression::Gzip));
        std::vector<std::string> records;
        QCOMPARE(QString::fromStdString(readAll(path, TfRecordReader::Compression::Gzip, records)), QString());
        QCOMPARE(records.size(), referenceRecords().size());
    }

    void roundTripsThroughReaderAndDecoder_data()
    {
        QTest::addColumn<bool>("gzip");
        QTest::newRow("plain") << false;
        QTest::newRow("GZIP") << true;
    }
    void roundTripsThroughReaderAndDecoder()
    {
        QFETCH(bool, gzip);
        const auto compression = gzip ? TfRecordWriter::Compression::Gzip : TfRecordWriter::Compression::None;
        QTemporaryDir dir;
        const std::string path = dir.filePath("rows.tfrecord").toStdString();
        auto w = TfRecordWriter::create(path, compression);
        QVERIFY(w.ok());
        QCOMPARE(w->compression(), compression);
        // Numeric columns of other dtypes, converted as tf.train.Feature stores them.
        const std::vector<std::int32_t> i32{-7, 0, 2147483647};
        const std::vector<double> f64{0.5, -1e10, 3.25};
        const std::vector<std::uint8_t> flags{1, 0, 1}; // bool
        const std::vector<Float16> halves{Float16::fromFloat(1.5f), Float16::fromFloat(-0.25f)};
        const std::vector<std::uint64_t> u64{0, std::uint64_t(std::numeric_limits<std::int64_t>::max())};
        const std::vector<std::string> strings{"", std::string("\0\xff", 2), "text"};
        std::string record;
        for (int r = 0; r < 100; ++r) {
            const std::vector<std::int64_t> id{r};
            const std::vector<ExampleFeatureValues> row{
                ExampleFeatureValues::ints("id", id),
                ExampleFeatureValues::numeric("i32", DType::Int32, std::as_bytes(std::span(i32))),
                ExampleFeatureValues::numeric("f64", DType::Float64, std::as_bytes(std::span(f64))),
                ExampleFeatureValues::numeric("flags", DType::Bool, std::as_bytes(std::span(flags))),
                ExampleFeatureValues::numeric("halves", DType::Float16, std::as_bytes(std::span(halves))),
                ExampleFeatureValues::numeric("u64", DType::UInt64, std::as_bytes(std::span(u64))),
                ExampleFeatureValues::bytes("strings", strings),
                ExampleFeatureValues{"empty", ExampleFeature::Kind::Empty, DType::Float32, {}, {}},
            };
            QVERIFY(encodeExample(row, record).ok());
            QVERIFY(w->write(record).ok());
        }
        QCOMPARE(w->records(), std::uint64_t(100));
        QVERIFY(w->commit().ok());

        std::vector<std::string> records;
        QCOMPARE(QString::fromStdString(readAll(path, compression, records)), QString());
        QCOMPARE(records.size(), std::size_t(100));
        for (int r = 0; r < 100; r += 33) {
            Example e = decode(records[std::size_t(r)]);
            QCOMPARE(e.size(), std::size_t(8));
            QCOMPARE(e["id"].ints, std::vector<std::int64_t>{r});
            QCOMPARE(e["i32"].ints, (std::vector<std::int64_t>{-7, 0, 2147483647}));
            QCOMPARE(e["f64"].kind, ExampleFeature::Kind::Float);
            QCOMPARE(e["f64"].floats, (std::vector<float>{0.5f, -1e10f, 3.25f}));
            QCOMPARE(e["flags"].ints, (std::vector<std::int64_t>{1, 0, 1}));
            QCOMPARE(e["halves"].floats, (std::vector<float>{1.5f, -0.25f}));
            QCOMPARE(e["u64"].ints, (std::vector<std::int64_t>{0, std::numeric_limits<std::int64_t>::max()}));
            QCOMPARE(e["strings"].bytes.size(), std::size_t(3));
            for (std::size_t k = 0; k < 3; ++k)
                QCOMPARE(text(e["strings"].bytes[k]), strings[k]);
            QCOMPARE(e["empty"].kind, ExampleFeature::Kind::Empty);
        }
    }

    void largeRecordsStreamThroughGzip()
    {
        // Records far larger than zlib's output chunk, so that deflate runs many rounds.
        QTemporaryDir dir;
        const std::string path = dir.filePath("big.tfrecord").toStdString();
        auto w = TfRecordWriter::create(path, TfRecordWriter::Compression::Gzip, 1);
        QVERIFY(w.ok());
        std::vector<std::string> written;
        std::uint32_t state = 12345;
        for (int r = 0; r < 3; ++r) {
            std::string record(std::size_t(3u << 20) + std::size_t(r), '\0');
            for (char &c : record) {
                state = state * 1664525u + 1013904223u;
                c = char(state >> 24); // incompressible: output as large as the input
            }
            QVERIFY(w->write(record).ok());
            written.push_back(std::move(record));
        }
        QVERIFY(w->commit().ok());
        QVERIFY(w->fileBytes() > 9u << 20);
        std::vector<std::string> records;
        QCOMPARE(QString::fromStdString(readAll(path, TfRecordReader::Compression::Gzip, records)), QString());
        QCOMPARE(records.size(), written.size());
        for (std::size_t i = 0; i < written.size(); ++i)
            QVERIFY(records[i] == written[i]);
    }

    void emptyFiles_data()
    {
        QTest::addColumn<bool>("gzip");
        QTest::newRow("plain") << false;
        QTest::newRow("GZIP") << true;
    }
    void emptyFiles()
    {
        QFETCH(bool, gzip);
        const auto compression = gzip ? TfRecordWriter::Compression::Gzip : TfRecordWriter::Compression::None;
        QTemporaryDir dir;
        const std::string path = dir.filePath("empty.tfrecord").toStdString();
        auto w = TfRecordWriter::create(path, compression);
        QVERIFY(w.ok());
        QVERIFY(w->commit().ok());
        const std::string bytes = test::readFile(path);
        if (gzip)
            QCOMPARE(gunzip(bytes), std::string()); // a valid, empty gzip stream
        else
            QCOMPARE(bytes, std::string());
        std::vector<std::string> records;
        QCOMPARE(QString::fromStdString(readAll(path, compression, records)), QString());
        QVERIFY(records.empty());
    }

    void nothingAppearsBeforeCommit()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("late.tfrecord").toStdString();
        auto w = TfRecordWriter::create(path);
        QVERIFY(w.ok());
        QVERIFY(w->write(std::string_view("one")).ok());
        QVERIFY2(!QFile::exists(QString::fromStdString(path)), "the file must not appear before commit()");
        QVERIFY(w->commit().ok());
        QCOMPARE(filesIn(dir), QStringList{"late.tfrecord"}); // no temporary left behind
        // Nothing more after commit.
        QCOMPARE(w->write(std::string_view("two")).error().kind, Error::Kind::InvalidArgument);
        QVERIFY(!w->commit().ok());
    }

    void abandonedWriterLeavesNoFile_data()
    {
        QTest::addColumn<bool>("gzip");
        QTest::newRow("plain") << false;
        QTest::newRow("GZIP") << true;
    }
    void abandonedWriterLeavesNoFile()
    {
        QFETCH(bool, gzip);
        QTemporaryDir dir;
        {
            auto w = TfRecordWriter::create(dir.filePath("gone.tfrecord").toStdString(),
                                            gzip ? TfRecordWriter::Compression::Gzip : TfRecordWriter::Compression::None);
            QVERIFY(w.ok());
            for (int i = 0; i < 10; ++i)
                QVERIFY(w->write(std::string(1000, char('a' + i))).ok());
            QCOMPARE(filesIn(dir).size(), 1); // the temporary
        }
        QCOMPARE(filesIn(dir), QStringList());
    }

    void existingFileSurvivesAnAbandonedWrite()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("keep.tfrecord").toStdString();
        test::writeFile(path, "old contents");
        {
            auto w = TfRecordWriter::create(path);
            QVERIFY(w.ok());
            QVERIFY(w->write(std::string_view("new")).ok());
        } // never committed
        QCOMPARE(test::readFile(path), std::string("old contents"));
    }

    void errorsNameTheFile()
    {
        auto w = TfRecordWriter::create("/nonexistent-folder/x.tfrecord");
        QVERIFY(!w.ok());
        QCOMPARE(w.error().kind, Error::Kind::IoError);
        QCOMPARE(w.error().what, std::string("/nonexistent-folder/x.tfrecord"));
        QTemporaryDir dir;
        auto level = TfRecordWriter::create(dir.filePath("x").toStdString(), TfRecordWriter::Compression::Gzip, 12);
        QVERIFY(!level.ok());
        QCOMPARE(level.error().kind, Error::Kind::InvalidArgument);
    }

    void encoderRefusesWhatAnExampleCannotHold()
    {
        const std::vector<std::int64_t> one{1};
        const std::vector<std::uint64_t> huge{std::uint64_t(1) << 63};
        const std::vector<float> floats{1.5f};
        const std::vector<std::byte> threeBytes(3);
        auto refused = [](std::vector<ExampleFeatureValues> features, const char *reason) {
            std::string out;
            const Status s = encodeExample(features, out);
            if (s.ok())
                return QString("accepted");
            if (s.error().kind != Error::Kind::InvalidArgument || !QString::fromStdString(s.error().message()).contains(reason))
                return QString::fromStdString(s.error().message());
            return QString();
        };
        QCOMPARE(refused({ExampleFeatureValues::ints("a", one), ExampleFeatureValues::floats("a", floats)}, "feature 'a': given twice"), QString());
        QCOMPARE(refused({ExampleFeatureValues::numeric("u", DType::UInt64, std::as_bytes(std::span(huge)))}, "larger than the largest int64"), QString());
        QCOMPARE(refused({ExampleFeatureValues::numeric("f", DType::Float32, threeBytes)}, "not a whole number of float32"), QString());
        QCOMPARE(refused({{"x", ExampleFeature::Kind::Int64, DType::Float32, std::as_bytes(std::span(floats)), {}}}, "cannot be stored in an Int64List"),
                 QString());
    }

    void encoderOutputForEdgeCases()
    {
        // Bytes TensorFlow writes for these (protobuf, deterministic): an Example with no
        // features, an empty Int64List, a Feature with no list, an empty name.
        auto hex = [](const std::vector<ExampleFeatureValues> &f) {
            auto e = encodeExample(f);
            return e ? QByteArray::fromStdString(*e).toHex() : QByteArray("error");
        };
        QCOMPARE(hex({}), QByteArray("0a00"));
        QCOMPARE(hex({ExampleFeatureValues::ints("k", {})}), QByteArray("0a090a070a016b12021a00"));
        QCOMPARE(hex({ExampleFeatureValues::floats("k", {})}), QByteArray("0a090a070a016b12021200"));
        QCOMPARE(hex({{"k", ExampleFeature::Kind::Empty, DType::Float32, {}, {}}}), QByteArray("0a070a050a016b1200"));
        QCOMPARE(hex({{"", ExampleFeature::Kind::Empty, DType::Float32, {}, {}}}), QByteArray("0a060a040a001200"));
        const std::vector<std::int64_t> minusOne{-1};
        QCOMPARE(hex({ExampleFeatureValues::ints("k", minusOne)}), QByteArray("0a150a130a016b120e1a0c0a0affffffffffffffffff01"));
    }
};

QTEST_GUILESS_MAIN(TestTfRecordWriter)
#include "tst_tfrecord_writer.moc"
