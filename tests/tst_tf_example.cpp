// tf.train.Example decoding from hand-built wire bytes: packed and unpacked lists, negative
// int64s, unknown fields, and damaged lengths that must be errors, not reads past the end.
#include "io/formats/tf_example.h"
#include "support/tfrecord_writer.h"

#include <QtTest>

using namespace sluice;
using sluice::test::Proto;

namespace {

std::string entry(const std::string &name, const std::string &feature) { return Proto().bytes(1, name).bytes(2, feature).b; }
std::string exampleOf(const std::vector<std::string> &entries)
{
    Proto features;
    for (const auto &e : entries)
        features.bytes(1, e);
    return Proto().bytes(1, features.b).b;
}
Result<Example> parse(const std::string &s) { return parseExample(std::as_bytes(std::span(s.data(), s.size())), "rec"); }

} // namespace

class TestTfExample : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void packedAndUnpackedLists()
    {
        Proto packedFloats;
        std::string raw(8, '\0');
        const float two[2] = {1.5f, -2.0f};
        std::memcpy(raw.data(), two, 8);
        packedFloats.bytes(1, raw);
        Proto unpackedFloats;
        unpackedFloats.fixed32(1, 3.0f).fixed32(1, 4.0f);
        Proto packedInts;
        packedInts.bytes(1, Proto().varint(7).varint(std::uint64_t(-3)).b);
        Proto unpackedInts;
        unpackedInts.key(1, 0).varint(42).key(1, 0).varint(std::uint64_t(std::numeric_limits<std::int64_t>::min()));
        const std::string record = exampleOf({
            entry("pf", Proto().bytes(2, packedFloats.b).b),
            entry("uf", Proto().bytes(2, unpackedFloats.b).b),
            entry("pi", Proto().bytes(3, packedInts.b).b),
            entry("ui", Proto().bytes(3, unpackedInts.b).b),
            entry("s", Proto().bytes(1, Proto().bytes(1, "abc").bytes(1, "").b).b),
            entry("none", ""),
        });
        auto e = parse(record);
        QVERIFY2(e.ok(), e.ok() ? "" : e.error().message().c_str());
        QCOMPARE((*e)["pf"].floats, (std::vector<float>{1.5f, -2.0f}));
        QCOMPARE((*e)["uf"].floats, (std::vector<float>{3.0f, 4.0f}));
        QCOMPARE((*e)["pi"].ints, (std::vector<std::int64_t>{7, -3}));
        QCOMPARE((*e)["ui"].ints, (std::vector<std::int64_t>{42, std::numeric_limits<std::int64_t>::min()}));
        QCOMPARE((*e)["s"].bytes.size(), std::size_t(2));
        QCOMPARE((*e)["s"].kind, ExampleFeature::Kind::Bytes);
        QCOMPARE((*e)["none"].kind, ExampleFeature::Kind::Empty);
        QCOMPARE(QString(exampleKindName((*e)["pf"].kind)), QString("float32"));
    }

    void unknownFieldsAreSkipped()
    {
        Proto p;
        p.key(7, 0).varint(99);         // unknown varint field in Example
        p.key(8, 1).b.append(8, '\1');  // unknown fixed64
        p.bytes(1, Proto().bytes(1, entry("x", Proto().bytes(3, Proto().bytes(1, Proto().varint(5).b).b).b)).b);
        auto e = parse(p.b);
        QVERIFY(e.ok());
        QCOMPARE((*e)["x"].ints, std::vector<std::int64_t>{5});
    }

    void emptyPackedListIsAFloatFeatureWithNoValues()
    {
        // Found by fuzz_tf_example: a packed float list of length 0.
        auto e = parse(exampleOf({entry("x", Proto().bytes(2, Proto().bytes(1, "").b).b)}));
        QVERIFY(e.ok());
        QCOMPARE((*e)["x"].kind, ExampleFeature::Kind::Float);
        QVERIFY((*e)["x"].floats.empty());
    }

    void emptyRecordIsAnEmptyExample()
    {
        auto e = parse("");
        QVERIFY(e.ok());
        QVERIFY(e->empty());
    }

    void damagedRecords_data()
    {
        QTest::addColumn<QByteArray>("record");
        const std::string good = exampleOf({entry("x", Proto().bytes(2, Proto().bytes(1, std::string(8, '\0')).b).b)});
        auto row = [](const char *name, const std::string &s) { QTest::newRow(name) << QByteArray(s.data(), qsizetype(s.size())); };
        row("truncated", good.substr(0, good.size() - 3));
        row("length past end", Proto().key(1, 2).varint(1000).b + "abc");
        row("endless varint", std::string(12, '\xff'));
        row("group wire type", Proto().key(1, 3).b);
        row("packed floats not a multiple of 4", exampleOf({entry("x", Proto().bytes(2, Proto().bytes(1, "abcde").b).b)}));
        row("huge length", Proto().key(1, 2).varint(~0ull >> 1).b);
    }
    void damagedRecords()
    {
        QFETCH(QByteArray, record);
        auto e = parseExample(std::as_bytes(std::span(record.constData(), std::size_t(record.size()))), "file.tfrecord: record 3");
        QVERIFY(!e.ok());
        QVERIFY(QString::fromStdString(e.error().message()).startsWith("file.tfrecord: record 3: not a valid tf.train.Example"));
    }
};

QTEST_GUILESS_MAIN(TestTfExample)
#include "tst_tf_example.moc"
