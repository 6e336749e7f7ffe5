// `sluice convert` as users run it: CSV → TFRecord shards read back through load (types as
// `sluice inspect` infers them, an empty field as NaN), .npy → npy shards, TFRecord → npy, an
// image folder → TFRecord of encoded pictures, and bad arguments exiting 2 naming the option.
#include "io/shard_writer.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QDir>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
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

} // namespace

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
