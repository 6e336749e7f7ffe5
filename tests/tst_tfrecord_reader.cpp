// TFRecord framing: files written by TensorFlow (tests/data/tfrecord, make_tfrecord_fixtures.py),
// plain and GZIP, and every kind of damage: CRCs, truncation, junk.
#include "io/formats/tf_example.h"
#include "io/formats/tfrecord_reader.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace sluice;

namespace {

std::string tfFixture(const char *name) { return test::dataFile(std::string("tfrecord/") + name); }

const nlohmann::json &expected()
{
    static const nlohmann::json j = nlohmann::json::parse(test::readFile(test::dataFile("tfrecord.json")));
    return j;
}

// Reads every record; returns the error message, or "" with the records in `out`.
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

} // namespace

class TestTfRecordReader : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void readsWhatTensorFlowWrote_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("gzip");
        QTest::newRow("plain") << "plain.tfrecord" << false;
        QTest::newRow("GZIP") << "gzip.tfrecord.gz" << true;
    }
    void readsWhatTensorFlowWrote()
    {
        QFETCH(QString, file);
        QFETCH(bool, gzip);
        const std::string path = tfFixture(file.toUtf8().constData());
        QCOMPARE(TfRecordReader::sniff(path), std::optional(gzip ? TfRecordReader::Compression::Gzip : TfRecordReader::Compression::None));
        std::vector<std::string> records;
        QCOMPARE(QString::fromStdString(readAll(path, gzip ? TfRecordReader::Compression::Gzip : TfRecordReader::Compression::None, records)), QString());
        const auto &want = expected()["records"];
        QCOMPARE(records.size(), want.size());
        for (std::size_t i = 0; i < records.size(); ++i) {
            auto e = parseExample(std::as_bytes(std::span(records[i].data(), records[i].size())), "record");
            QVERIFY(e.ok());
            QCOMPARE((*e)["x"].floats, want[i]["x"].get<std::vector<float>>());
            QCOMPARE((*e)["label"].ints, want[i]["label"].get<std::vector<std::int64_t>>());
            QCOMPARE((*e)["tokens"].ints, want[i]["tokens"].get<std::vector<std::int64_t>>());
            const auto &name = (*e)["name"].bytes.at(0);
            QCOMPARE(std::string(reinterpret_cast<const char *>(name.data()), name.size()), want[i]["name"][0].get<std::string>());
        }
    }

    void emptyFileHasNoRecords()
    {
        std::vector<std::string> records;
        QCOMPARE(QString::fromStdString(readAll(tfFixture("empty.tfrecord"), TfRecordReader::Compression::None, records)), QString());
        QVERIFY(records.empty());
    }

    void compressionNames()
    {
        QCOMPARE(*TfRecordReader::parseCompression(""), TfRecordReader::Compression::None);
        QCOMPARE(*TfRecordReader::parseCompression("GZIP"), TfRecordReader::Compression::Gzip);
        QVERIFY(!TfRecordReader::parseCompression("gzip").ok());
        QVERIFY(!TfRecordReader::parseCompression("ZLIB").ok());
    }

    void damage_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("flipAt");   // byte to flip (-1: none)
        QTest::addColumn<int>("truncate"); // bytes to cut from the end (0: none)
        QTest::addColumn<QString>("reason");
        QTest::newRow("length CRC") << "plain.tfrecord" << 9 << 0 << "record 0: length CRC mismatch";
        QTest::newRow("length itself") << "plain.tfrecord" << 0 << 0 << "record 0: length CRC mismatch";
        QTest::newRow("data") << "plain.tfrecord" << 20 << 0 << "record 0: data CRC mismatch";
        QTest::newRow("cut in last record") << "plain.tfrecord" << -1 << 10 << "record 4: file ends inside the record";
        QTest::newRow("cut in header") << "plain.tfrecord" << -1 << 515 - 3 << "record 0: file ends inside the record header";
        QTest::newRow("gzip truncated") << "gzip.tfrecord.gz" << -1 << 40 << "GZIP stream is";
        QTest::newRow("gzip damaged") << "gzip.tfrecord.gz" << 60 << 0 << "";
    }
    void damage()
    {
        QFETCH(QString, file);
        QFETCH(int, flipAt);
        QFETCH(int, truncate);
        QFETCH(QString, reason);
        std::string bytes = test::readFile(tfFixture(file.toUtf8().constData()));
        if (flipAt >= 0)
            bytes[std::size_t(flipAt)] ^= 0x20;
        bytes.resize(bytes.size() - std::size_t(truncate));
        QTemporaryDir dir;
        const std::string path = dir.filePath("bad").toStdString();
        test::writeFile(path, bytes);
        std::vector<std::string> records;
        const bool gzip = file.endsWith(".gz");
        const QString message = QString::fromStdString(readAll(path, gzip ? TfRecordReader::Compression::Gzip : TfRecordReader::Compression::None, records));
        QVERIFY2(!message.isEmpty(), "damage must be reported");
        QVERIFY2(message.startsWith(QString::fromStdString(path)), qPrintable(message));
        QVERIFY2(message.contains(reason), qPrintable(message));
    }

    void notATfRecordFile()
    {
        QCOMPARE(TfRecordReader::sniff(test::fixture("float32_le.npy")), std::optional<TfRecordReader::Compression>());
        std::vector<std::string> records;
        const QString message = QString::fromStdString(readAll(test::fixture("float32_le.npy"), TfRecordReader::Compression::None, records));
        QVERIFY(message.contains("length CRC mismatch (damaged, or not a TFRecord file)"));
    }
};

QTEST_GUILESS_MAIN(TestTfRecordReader)
#include "tst_tfrecord_reader.moc"
