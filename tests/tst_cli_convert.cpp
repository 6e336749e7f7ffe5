// `sluice convert` as users run it: CSV → TFRecord shards read back through load (types as
// `sluice inspect` infers them, an empty field as NaN), .npy → npy shards, TFRecord → npy, an
// image folder → TFRecord of encoded pictures, Parquet → TFRecord and npy (compared with what
// numpy wrote, tests/data/parquet), and bad arguments exiting 2 naming the option.
#include "io/formats/npy_file.h"
#include "io/writers/shard_writer.h"
#include "pipeline/sources/parquet_file.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"
#include "support/reference.h"

#include <QDir>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>

using namespace sluice;
using namespace sluice::test;
using nlohmann::json;

namespace {

// One pass of `load` over `folder` (relative to `dir`); fails the test where it does not build.
Pass loadPass(const std::string &dir, const std::string &folder, const std::string &feature)
{
    return runPass(chain({op("load", "load", {{"path", folder}})}), feature, dir);
}

std::string specOf(const std::string &dir, const std::string &folder)
{
    auto p = buildPipeline(chain({op("load", "load", {{"path", folder}})}), dir);
    return p ? p->elementSpec().text() : std::string("does not build");
}

std::string parquetData(const std::string &name) { return dataFile("parquet/" + name); }

// mixed.parquet's columns in file order, as from_parquet reads them.
const char *const kMixedSpec = "{i32: int32 (), i64: int64 (), f32: float32 (), f64: float64 (), flag: bool (), u8: uint8 (), "
                               "name: string (), vec: float32 (3,), pair: float32 (2,)}";

// The bytes numpy wrote to parquet/<name>.npy (native byte order), through core's .npy reader.
std::string referenceBytes(const std::string &name)
{
    auto array = openNpy(parquetData(name + ".npy"));
    if (!array.ok())
        return "<reference " + name + ".npy: " + array.error().message() + ">";
    const NdArray native = array->toNative();
    return std::string(reinterpret_cast<const char *>(native.data().data()), native.data().size());
}

// What an .npy file holds: its dtype, shape and bytes (native byte order), for comparing files.
std::string npyContents(const std::string &path)
{
    auto array = openNpy(path);
    if (!array.ok())
        return "<" + array.error().message() + ">";
    const NdArray native = array->toNative();
    std::string s(dtypeName(native.dtype()));
    for (std::uint64_t d : native.shape())
        s += " " + std::to_string(d);
    s += ": ";
    s.append(reinterpret_cast<const char *>(native.data().data()), native.data().size());
    return s;
}

// The rows of numeric feature `feature` of the dataset in `folder` as load reads them back: their
// bytes, one row after another.
std::string loadedBytes(const std::string &dir, const std::string &folder, const std::string &feature)
{
    const Pass back = loadPass(dir, folder, feature);
    if (!back.ok())
        return "<" + back.error + ">";
    std::string out;
    for (const auto &row : back.bytes)
        out += row;
    return out;
}

// The rows of string feature `feature` of the dataset in `folder` as load reads them back.
std::vector<std::string> loadedStrings(const std::string &dir, const std::string &folder, const std::string &feature)
{
    auto p = buildPipeline(chain({op("load", "load", {{"path", folder}})}), dir);
    if (!p)
        return {"<does not build>"};
    const auto index = p->elementSpec().find(feature);
    const Pass back = collect(*p, feature);
    std::vector<std::string> out;
    for (const auto &e : back.elements)
        out.push_back(e.tensors.at(*index).stringValues().at(0));
    if (!back.ok())
        out.push_back("<" + back.error + ">");
    return out;
}

// "" when `sluice convert` of a Parquet file exits 2 saying the build lacks Parquet support;
// otherwise what it did.
QString noParquetProblem(const QTemporaryDir &dir)
{
    const auto r = runSluice({"convert", QString::fromStdString(parquetData("mixed.parquet")), "--to", "npy", "--out", dir.filePath("never-written")});
    if (r.exitCode == 2 && r.err.contains("built without Parquet support"))
        return {};
    return "exit " + QString::number(r.exitCode) + ": " + r.err;
}

} // namespace

// Parquet needs Apache Arrow in the build (the test links the same core as `sluice`). Without it
// convert must say so; the Parquet cases are then skipped, except in CI, whose builds always fetch
// Arrow (scripts/fetch-arrow.sh): there a build without it fails instead of passing green.
// QSKIP returns from the test function itself, so this is a macro.
#define REQUIRE_PARQUET()                                                                                            \
    do {                                                                                                             \
        if (!pipeline::ParquetFile::available()) {                                                                   \
            const QString problem = noParquetProblem(m_dir);                                                         \
            QVERIFY2(problem.isEmpty(), qPrintable(problem));                                                        \
            if (qEnvironmentVariable("CI") == QLatin1String("true"))                                                 \
                QFAIL("this build has no Parquet support, and CI builds must have it (scripts/fetch-arrow.sh)");     \
            SLUICE_REFERENCE_MISSING("this build has no Parquet support");                                                              \
        }                                                                                                            \
    } while (0)

class TestCliConvert : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::string m_d;
    QString m_csv;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_d = m_dir.path().toStdString();
        writeFile(m_d + "/t.csv", "id,value,name\n1,0.5,alpha\n2,,beta\n3,2.25,gamma\n4,-1,delta\n5,8,epsilon\n");
        m_csv = m_dir.filePath("t.csv");
    }

    void csvToTfRecordReadsBack()
    {
        const auto r = runSluice({"convert", m_csv, "--to", "tfrecord", "--shards", "3", "--compression", "GZIP", "--out", m_dir.filePath("records")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("5 rows in 3 tfrecord shards"), qPrintable(r.out));
        auto manifest = readDatasetManifest(m_d + "/records");
        QVERIFY(manifest.ok());
        QCOMPARE(manifest->shards.size(), std::size_t(3));
        QVERIFY(manifest->compression == TfRecordWriter::Compression::Gzip);
        // Columns in file order; whole numbers int64, a column with an empty field float32 (NaN).
        QCOMPARE(specOf(m_d, "records"), std::string("{id: int64 (), value: float32 (), name: string ()}"));
        const Pass ids = loadPass(m_d, "records", "id");
        QVERIFY2(ids.ok(), ids.error.c_str());
        QCOMPARE(ids.firstValues(), (std::vector<std::int64_t>{1, 2, 3, 4, 5}));
        const Pass values = loadPass(m_d, "records", "value");
        QCOMPARE(values.size(), std::size_t(5));
        QCOMPARE(values.values[0][0], 0.5);
        QVERIFY(std::isnan(values.values[1][0]));
        QCOMPARE(values.values[3][0], -1.0);
        std::vector<std::string> names;
        for (const auto &e : values.elements)
            names.push_back(e.tensors[2].stringValues()[0]);
        QCOMPARE(names, (std::vector<std::string>{"alpha", "beta", "gamma", "delta", "epsilon"}));
    }

    void tfRecordToNpyWithChosenFeatures()
    {
        // The shards just written are TFRecord input like any other: their spec is inferred.
        const auto r = runSluice({"convert", m_dir.filePath("records/data-00000-of-00003.tfrecord"), m_dir.filePath("records/data-00001-of-00003.tfrecord"),
                                  "--to", "npy", "--features", "value,id", "--out", m_dir.filePath("from-records")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(specOf(m_d, "from-records"), std::string("{value: float32 (), id: int64 ()}"));
        // Shard 0 holds rows 0 and 3, shard 1 rows 1 and 4 (rows are dealt in turn).
        QCOMPARE(loadPass(m_d, "from-records", "id").firstValues(), (std::vector<std::int64_t>{1, 4, 2, 5}));
    }

    void npyToNpy()
    {
        std::vector<float> x;
        std::vector<std::int64_t> label;
        for (int r = 0; r < 7; ++r) {
            for (int k = 0; k < 4; ++k)
                x.push_back(float(r * 10 + k));
            label.push_back(r % 3);
        }
        writeNpy(m_d + "/x.npy", x, {4});
        writeNpy(m_d + "/label.npy", label);
        const auto r = runSluice({"convert", m_dir.filePath("x.npy"), m_dir.filePath("label.npy"), "--to", "npy", "--shards", "2", "--threads", "2",
                                  "--out", m_dir.filePath("arrays")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(std::filesystem::exists(m_d + "/arrays/x-00001-of-00002.npy"));
        QCOMPARE(specOf(m_d, "arrays"), std::string("{x: float32 (4,), label: int64 ()}"));
        const Pass back = loadPass(m_d, "arrays", "x");
        QVERIFY2(back.ok(), back.error.c_str());
        std::vector<double> expected(x.begin(), x.end());
        QCOMPARE(back.flat(), expected);
        QCOMPARE(loadPass(m_d, "arrays", "label").firstValues(), (std::vector<std::int64_t>{0, 1, 2, 0, 1, 2, 0}));

        // An existing dataset is replaced only when asked.
        const auto again = runSluice({"convert", m_dir.filePath("label.npy"), "--to", "npy", "--out", m_dir.filePath("arrays")});
        QCOMPARE(again.exitCode, 2);
        QVERIFY2(again.err.contains("--overwrite"), qPrintable(again.err));
        const auto replaced = runSluice({"convert", m_dir.filePath("label.npy"), "--to", "npy", "--out", m_dir.filePath("arrays"), "--overwrite"});
        QVERIFY2(replaced.exitCode == 0, qPrintable(replaced.err));
        QCOMPARE(specOf(m_d, "arrays"), std::string("{label: int64 ()}"));
        QVERIFY(!std::filesystem::exists(m_d + "/arrays/x-00001-of-00002.npy")); // the old dataset's files are gone
    }

    void imageFolderToTfRecord()
    {
        const QString pictures = m_dir.filePath("pictures");
        const auto gen = runSluice({"gen", "images", "--out", pictures, "--classes", "2", "--rows", "6", "--size", "8x8", "--format", "png"});
        QVERIFY2(gen.exitCode == 0, qPrintable(gen.err));
        const auto r = runSluice({"convert", pictures, "--to", "tfrecord", "--shards", "2", "--out", m_dir.filePath("picture-records")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(specOf(m_d, "picture-records"), std::string("{image: string (), label: int64 ()}"));
        const Pass back = loadPass(m_d, "picture-records", "label");
        QCOMPARE(sorted(back.firstValues()), (std::vector<std::int64_t>{0, 0, 0, 1, 1, 1}));
        // The encoded bytes, as the files hold them: PNG's signature first.
        QVERIFY(back.elements[0].tensors[0].stringValues()[0].starts_with("\x89PNG"));
        // Pictures are strings: npy cannot hold them.
        const auto npy = runSluice({"convert", pictures, "--to", "npy", "--out", m_dir.filePath("picture-arrays")});
        QCOMPARE(npy.exitCode, 2);
        QVERIFY2(npy.err.contains("--to: ") && npy.err.contains("\"image\" is a string"), qPrintable(npy.err));
        QVERIFY(!std::filesystem::exists(m_d + "/picture-arrays/manifest.json"));
    }

    // Parquet: the columns from_parquet reads become features in file order, and come back row
    // for row as numpy wrote them (make_parquet_fixtures.py), so a type or an order changed
    // anywhere between the file and the shards shows.
    void parquetToTfRecordAndNpy()
    {
        REQUIRE_PARQUET();
        const QString mixed = QString::fromStdString(parquetData("mixed.parquet"));
        const auto r = runSluice({"convert", mixed, "--to", "tfrecord", "--shards", "2", "--out", m_dir.filePath("parquet-records")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("10 rows in 2 tfrecord shards"), qPrintable(r.out));
        auto manifest = readDatasetManifest(m_d + "/parquet-records");
        QVERIFY(manifest.ok());
        std::vector<std::string> names;
        for (const auto &f : manifest->features)
            names.push_back(f.name);
        QCOMPARE(names, (std::vector<std::string>{"i32", "i64", "f32", "f64", "flag", "u8", "name", "vec", "pair"}));
        QCOMPARE(specOf(m_d, "parquet-records"), std::string(kMixedSpec));
        // load reads the shards in turn: the file's rows in the file's order, every byte kept
        // (64-bit extremes, -0.0, a subnormal, infinities)...
        for (const char *column : {"i32", "i64", "f32", "flag", "u8", "vec", "pair"})
            QVERIFY2(loadedBytes(m_d, "parquet-records", column) == referenceBytes(std::string("mixed_") + column), column);
        // ...but float64's: a FloatList holds float32, so f64 comes back rounded to it (1e308 as inf).
        const std::string f64 = referenceBytes("mixed_f64");
        std::vector<double> rounded(f64.size() / sizeof(double));
        QCOMPARE(rounded.size(), std::size_t(10));
        std::memcpy(rounded.data(), f64.data(), f64.size());
        for (double &v : rounded)
            v = double(float(v));
        QVERIFY(loadedBytes(m_d, "parquet-records", "f64") == std::string(reinterpret_cast<const char *>(rounded.data()), f64.size()));
        QCOMPARE(loadedStrings(m_d, "parquet-records", "name"), json::parse(readFile(parquetData("mixed_name.json"))).get<std::vector<std::string>>());

        // npy: the chosen numeric columns, each file (one shard: the whole column) what numpy wrote.
        const auto npy = runSluice({"convert", mixed, "--to", "npy", "--features", "i32,f64,vec,pair", "--out", m_dir.filePath("parquet-arrays")});
        QVERIFY2(npy.exitCode == 0, qPrintable(npy.err));
        QCOMPARE(specOf(m_d, "parquet-arrays"), std::string("{i32: int32 (), f64: float64 (), vec: float32 (3,), pair: float32 (2,)}"));
        for (const char *column : {"i32", "f64", "vec", "pair"})
            QVERIFY2(npyContents(m_d + "/parquet-arrays/" + column + "-00000-of-00001.npy") == npyContents(parquetData(std::string("mixed_") + column + ".npy")),
                     column);
        // Without --features the string column comes too, and npy holds numbers only.
        const auto strings = runSluice({"convert", mixed, "--to", "npy", "--out", m_dir.filePath("parquet-strings")});
        QCOMPARE(strings.exitCode, 2);
        QVERIFY2(strings.err.contains("--to: ") && strings.err.contains("\"name\" is a string"), qPrintable(strings.err));
        QVERIFY(!std::filesystem::exists(m_d + "/parquet-strings/manifest.json"));
    }

    // A Parquet column from_parquet cannot read (a timestamp, a struct, a list of strings) is left
    // out, unless --features names it: then the error names it and says why. Several inputs must
    // be Parquet files with the same columns.
    void parquetColumnsLeftOutOrRefused()
    {
        REQUIRE_PARQUET();
        const QString unsupported = QString::fromStdString(parquetData("unsupported.parquet"));
        const auto ids = runSluice({"convert", unsupported, "--to", "npy", "--out", m_dir.filePath("parquet-ids")});
        QVERIFY2(ids.exitCode == 0, qPrintable(ids.err));
        QCOMPARE(specOf(m_d, "parquet-ids"), std::string("{id: int64 ()}"));
        QVERIFY(loadedBytes(m_d, "parquet-ids", "id") == referenceBytes("unsupported_id"));
        const auto when = runSluice({"convert", unsupported, "--to", "tfrecord", "--features", "id,when", "--out", m_dir.filePath("parquet-when")});
        QCOMPARE(when.exitCode, 2);
        // Refused before anything is read, naming the option, the column and its type.
        QVERIFY2(when.err.startsWith("sluice: --features: 'when'") && when.err.contains("timestamp"), qPrintable(when.err));
        QVERIFY(!std::filesystem::exists(m_d + "/parquet-when/manifest.json"));

        const QString mixed = QString::fromStdString(parquetData("mixed.parquet"));
        const QString never = m_dir.filePath("parquet-never");
        const auto columns = runSluice({"convert", mixed, QString::fromStdString(parquetData("other_columns.parquet")), "--to", "tfrecord", "--out", never});
        QCOMPARE(columns.exitCode, 2);
        QVERIFY2(columns.err.startsWith("sluice: ") && columns.err.contains("other_columns.parquet"), qPrintable(columns.err));
        const auto kinds = runSluice({"convert", mixed, m_csv, "--to", "tfrecord", "--out", never});
        QCOMPARE(kinds.exitCode, 2);
        QVERIFY2(kinds.err.contains("convert one kind at a time"), qPrintable(kinds.err));
        QVERIFY(!std::filesystem::exists(m_d + "/parquet-never/manifest.json"));
    }

    void badArgumentsExit2NamingTheOption_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("names");
        QTest::newRow("no --to") << QStringList{"IN.csv", "--out", "o"} << "--to";
        QTest::newRow("unknown --to") << QStringList{"IN.csv", "--to", "parquet", "--out", "o"} << "--to";
        QTest::newRow("no --out") << QStringList{"IN.csv", "--to", "npy"} << "--out";
        QTest::newRow("--shards 0") << QStringList{"IN.csv", "--to", "npy", "--shards", "0", "--out", "o"} << "--shards";
        QTest::newRow("--compression ZIP") << QStringList{"IN.csv", "--to", "tfrecord", "--compression", "ZIP", "--out", "o"} << "--compression";
        QTest::newRow("--compression with npy") << QStringList{"IN.csv", "--to", "npy", "--compression", "GZIP", "--out", "o"} << "--compression";
        QTest::newRow("unknown feature") << QStringList{"IN.csv", "--to", "tfrecord", "--features", "id,nope", "--out", "o"} << "--features";
        QTest::newRow("strings to npy") << QStringList{"IN.csv", "--to", "npy", "--out", "o"} << "--to";
        QTest::newRow("missing input") << QStringList{"missing.csv", "--to", "npy", "--out", "o"} << "missing.csv";
    }

    void badArgumentsExit2NamingTheOption()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, names);
        args.replaceInStrings("IN.csv", m_csv);
        args.replaceInStrings(QRegularExpression("^o$"), m_dir.filePath("never-written"));
        const auto r = runSluice(QStringList{"convert"} + args, m_dir.path());
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.startsWith("sluice: ") && r.err.contains(names), qPrintable(r.err));
        QVERIFY(!std::filesystem::exists(m_d + "/never-written/manifest.json"));
    }
};

QTEST_GUILESS_MAIN(TestCliConvert)
#include "tst_cli_convert.moc"
