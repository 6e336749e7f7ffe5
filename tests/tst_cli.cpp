// The `sluice` executable as users run it: inspect (text and --json), gen, bench read,
// and exit codes / messages for bad input (2) as docs/architecture.md, decision 9 fixes them.
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

using sluice::test::fixture;
using sluice::test::jsonLines;
using sluice::test::runSluice;

namespace {

QString fx(const char *name) { return QString::fromStdString(fixture(name)); }

} // namespace

class TestCli : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void inspectJsonHasNumpysKeys()
    {
        const auto r = runSluice({"inspect", "--json", "--stats", fx("nan_f4.npy"), fx("float64_be.npy")});
        QCOMPARE(r.exitCode, 0);
        const auto lines = jsonLines(r.out);
        QCOMPARE(lines.size(), std::size_t(2));
        const auto &a = lines[0];
        QCOMPARE(a["dtype"], "<f4");
        QCOMPARE(a["shape"], nlohmann::json::array({2, 3}));
        QCOMPARE(a["fortran_order"], false);
        QCOMPARE(a["format_version"], "1.0");
        QCOMPARE(a["nbytes"], 24);
        QCOMPARE(a["stats"]["nan_count"], 2);
        QCOMPARE(a["stats"]["min"], -2.5);
        QCOMPARE(a["stats"]["max"], "inf"); // numpy: np.nanmax gives inf
        QCOMPARE(a["stats"]["sum"], "inf");
        for (const char *key : {"min", "max", "sum", "mean", "nan_count"})
            QVERIFY2(a["stats"].contains(key), key);
        QCOMPARE(lines[1]["dtype"], ">f8");
    }

    void inspectNpzListsArraysByName()
    {
        const auto r = runSluice({"inspect", "--json", fx("deflated.npz")});
        QCOMPARE(r.exitCode, 0);
        const auto j = jsonLines(r.out).at(0);
        QCOMPARE(j["format"], "npz");
        QCOMPARE(j["arrays"].size(), std::size_t(3));
        QCOMPARE(j["arrays"]["features"]["shape"], nlohmann::json::array({6, 4}));
        QCOMPARE(j["arrays"]["weights"]["fortran_order"], true);
        QCOMPARE(j["arrays"]["labels"]["dtype"], "<i8");
        QCOMPARE(j["arrays"]["labels"]["storage"], "inflated");
    }

    void inspectTfRecordListsExampleFeatures()
    {
        const QString plain = QString::fromStdString(sluice::test::dataFile("tfrecord/plain.tfrecord"));
        const QString gzip = QString::fromStdString(sluice::test::dataFile("tfrecord/gzip.tfrecord.gz"));
        const auto r = runSluice({"inspect", "--json", plain, gzip});
        QCOMPARE(r.exitCode, 0);
        const auto lines = jsonLines(r.out);
        QCOMPARE(lines.size(), std::size_t(2));
        for (const auto &j : lines) {
            QCOMPARE(j["format"], "tfrecord");
            QCOMPARE(j["records"], 5);
            QCOMPARE(j["features"]["x"]["dtype"], "float32");
            QCOMPARE(j["features"]["x"]["min_length"], 3);
            QCOMPARE(j["features"]["label"]["dtype"], "int64");
            QCOMPARE(j["features"]["name"]["dtype"], "string");
            QCOMPARE(j["features"]["tokens"]["min_length"], 1); // variable length: 1..5
            QCOMPARE(j["features"]["tokens"]["max_length"], 5);
        }
        QCOMPARE(lines[0]["compression"], "");
        QCOMPARE(lines[1]["compression"], "GZIP");
        const auto text = runSluice({"inspect", plain});
        QVERIFY2(text.out.contains("TFRecord, 5 records of tf.train.Example"), qPrintable(text.out));
        QVERIFY(text.out.contains("length 1..5"));
    }

    void inspectCsvInfersColumnTypes()
    {
        QTemporaryDir dir;
        const QString csv = dir.filePath("t.csv");
        sluice::test::writeFile(csv.toStdString(), "id,price,city,code\n1,2.5,\"Paris, FR\",7\n2,nan,Oslo,\n3,1e3,Rome,9\n");
        const auto r = runSluice({"inspect", "--json", "--stats", csv});
        QCOMPARE(r.exitCode, 0);
        const auto j = jsonLines(r.out).at(0);
        QCOMPARE(j["format"], "csv");
        QCOMPARE(j["rows"], 3);
        const auto &c = j["columns"];
        QCOMPARE(c[0]["name"], "id");
        QCOMPARE(c[0]["dtype"], "int64");
        QCOMPARE(c[1]["dtype"], "float64");
        QCOMPARE(c[1]["stats"]["nan_count"], 1);
        QCOMPARE(c[1]["stats"]["max"], 1000.0);
        QCOMPARE(c[2]["dtype"], "string");
        QVERIFY(!c[2].contains("stats"));
        QCOMPARE(c[3]["empty"], 1);
        QCOMPARE(c[3]["stats"]["mean"], 8.0);
        const QString bad = dir.filePath("bad.csv");
        sluice::test::writeFile(bad.toStdString(), "a,b\n1,2\n3\n");
        const auto e = runSluice({"inspect", bad});
        QCOMPARE(e.exitCode, 2);
        QVERIFY2(e.err.contains("sluice: " + bad + ": line 3: 1 fields, the header has 2"), qPrintable(e.err));
    }

    void inspectTextIsReadable()
    {
        const auto r = runSluice({"inspect", "--stats", fx("int16_v3.npy")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("format         .npy 3.0"));
        QVERIFY(r.out.contains("dtype          <i2"));
        QVERIFY(r.out.contains("shape          (3, 4)"));
        QVERIFY(r.out.contains("max 11"));
    }

    void badFilesAreReportedAndOthersStillInspected()
    {
        QTemporaryDir dir;
        const QString empty = dir.filePath("empty.npy");
        sluice::test::writeFile(empty.toStdString(), "");
        const QString missing = dir.filePath("missing.npy");
        const QString damaged = dir.filePath("damaged.tfrecord");
        std::string record = sluice::test::readFile(sluice::test::dataFile("tfrecord/plain.tfrecord"));
        record[40] ^= 1;
        sluice::test::writeFile(damaged.toStdString(), record);
        const auto r = runSluice({"inspect", "--json", empty, fx("object.npy"), fx("uint8_na.npy"), missing, damaged});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("sluice: " + empty + ": file is empty"), qPrintable(r.err));
        QVERIFY(r.err.contains("sluice: " + fx("object.npy") + ": object dtype"));
        QVERIFY(r.err.contains("sluice: " + missing + ": no such file"));
        QVERIFY(r.err.contains("sluice: " + damaged + ": record 0: data CRC mismatch"));
        const auto lines = jsonLines(r.out);
        QCOMPARE(lines.size(), std::size_t(1)); // the good file is still reported
        QCOMPARE(lines[0]["dtype"], "|u1");
    }

    void genWritesADatasetThatInspectReads()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("data");
        auto r = runSluice({"gen", "classification", "--out", out, "--rows", "1000", "--feature", "image:8x8:uint8",
                            "--feature", "x:4", "--target", "label:3", "--seed", "5"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("wrote 1000 rows"));
        r = runSluice({"inspect", "--json", "--stats", out + "/image.npy", out + "/label.npy"});
        QCOMPARE(r.exitCode, 0);
        const auto lines = jsonLines(r.out);
        QCOMPARE(lines[0]["shape"], nlohmann::json::array({1000, 8, 8}));
        QCOMPARE(lines[0]["dtype"], "|u1");
        QCOMPARE(lines[1]["dtype"], "<i8");
        QVERIFY(lines[1]["stats"]["max"].get<int>() <= 2);
    }

    void genSizeOption()
    {
        QTemporaryDir dir;
        const auto r = runSluice({"gen", "regression", "--out", dir.path(), "--size", "1M", "--feature", "x:256", "--target", "y:1"});
        QCOMPARE(r.exitCode, 0);
        // 1 MiB / (256*4 + 4) bytes per row
        QVERIFY2(r.out.contains("wrote 1020 rows"), qPrintable(r.out));
    }

    void benchReadReportsAgainstMemcpy()
    {
        QTemporaryDir dir;
        QCOMPARE(runSluice({"gen", "regression", "--out", dir.path(), "--rows", "20000", "--feature", "x:64"}).exitCode, 0);
        for (const char *order : {"sequential", "shuffled"}) {
            const auto r = runSluice({"bench", "read", dir.filePath("x.npy"), "--order", order, "--batch", "128",
                                      "--threads", "2", "--passes", "2", "--verify", "--json"});
            QCOMPARE(r.exitCode, 0);
            const auto j = jsonLines(r.out).at(0);
            for (const char *key : {"samples_per_s", "bytes_per_s", "memcpy_bytes_per_s"})
                QVERIFY2(j[key].get<double>() > 0, key);
            QCOMPARE(j["samples"], 40000);
            QCOMPARE(j["order"], order);
        }
        // Same rows in both orders: the same order-independent checksum.
        const auto s = jsonLines(runSluice({"bench", "read", dir.filePath("x.npy"), "--passes", "1", "--verify", "--json"}).out).at(0);
        const auto h = jsonLines(runSluice({"bench", "read", dir.filePath("x.npy"), "--order", "shuffled", "--passes", "1", "--verify", "--json"}).out).at(0);
        QCOMPARE(s["checksum"], h["checksum"]);
        // --cold first drops the file from the page cache; the rows read are the same.
        const auto cold = runSluice({"bench", "read", dir.filePath("x.npy"), "--passes", "1", "--verify", "--cold", "--json"});
        QVERIFY2(cold.exitCode == 0, qPrintable(cold.err));
        QCOMPARE(jsonLines(cold.out).at(0)["checksum"], s["checksum"]);
        // --member reads one array of an .npz (numpy-written: labels has 6 rows).
        const auto member = runSluice({"bench", "read", fx("stored.npz"), "--member", "labels", "--batch", "2", "--passes", "1", "--json"});
        QVERIFY2(member.exitCode == 0, qPrintable(member.err));
        QCOMPARE(jsonLines(member.out).at(0)["samples"], 6);
        const auto noMember = runSluice({"bench", "read", fx("stored.npz"), "--member", "nope"});
        QCOMPARE(noMember.exitCode, 2);
        QVERIFY2(noMember.err.contains("nope"), qPrintable(noMember.err));
    }

    // bench storage measures the device under a file around the page cache and remembers it for
    // the profiles; a file system without O_DIRECT (tmpfs) is refused with the reason.
    void benchStorageMeasuresAndRemembers()
    {
        QTemporaryDir dir;
        const QString records = dir.filePath("records/storage.json");
        qputenv("SLUICE_STORAGE_RECORDS", records.toUtf8()); // the child inherits it: never the user's records
        QCOMPARE(runSluice({"gen", "regression", "--out", dir.path(), "--rows", "20000", "--feature", "x:64"}).exitCode, 0);
        const auto r = runSluice({"bench", "storage", dir.filePath("x.npy"), "--seconds", "0.2", "--queue-depth", "4", "--json"});
        const auto where = runSluice({"bench", "storage", "--records"});
        qunsetenv("SLUICE_STORAGE_RECORDS");
        QCOMPARE(where.exitCode, 0);
        QCOMPARE(where.out.trimmed(), records);
        if (r.exitCode == 2 && r.err.contains("O_DIRECT"))
            return; // files in memory: nothing to measure, and it says so
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto j = jsonLines(r.out).at(0);
        QVERIFY(j["random_read_iops"].get<double>() > 0);
        QCOMPARE(j["queue_depth"], 4);
        QCOMPARE(j["saved_to"].get<std::string>(), records.toStdString());
        const auto saved = nlohmann::json::parse(sluice::test::readFile(records.toStdString()));
        QCOMPARE(saved.at(j["device_id"].get<std::string>()).at("random_read_iops"), j["random_read_iops"]);
    }

    void badArgumentsExitWithTwo_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown command") << QStringList{"frobnicate"} << "sluice: frobnicate: unknown command";
        QTest::newRow("inspect nothing") << QStringList{"inspect"} << "no FILE given";
        QTest::newRow("unknown option") << QStringList{"inspect", "--bogus", "x.npy"} << "Unknown option 'bogus'";
        QTest::newRow("bench order") << QStringList{"bench", "read", fx("float32_le.npy"), "--order", "sideways"} << "sluice: --order: 'sideways'";
        QTest::newRow("bench batch") << QStringList{"bench", "read", fx("float32_le.npy"), "--batch", "0"} << "sluice: --batch:";
        QTest::newRow("bench seconds") << QStringList{"bench", "read", fx("float32_le.npy"), "--seconds", "-1"} << "sluice: --seconds:";
        QTest::newRow("bench missing file") << QStringList{"bench", "read", "nope.npy"} << "sluice: nope.npy: no such file";
        QTest::newRow("bench no rows") << QStringList{"bench", "read", fx("scalar_f8.npy")} << "no rows to read";
        QTest::newRow("bench what") << QStringList{"bench", "write", "x"} << "usage: sluice bench read FILE";
        // Options that would act on nothing are refused.
        QTest::newRow("bench seed in order") << QStringList{"bench", "read", fx("float32_le.npy"), "--seed", "3"} << "sluice: --seed: seeds the shuffled order";
        QTest::newRow("bench passes and seconds") << QStringList{"bench", "read", fx("float32_le.npy"), "--passes", "1", "--seconds", "2"}
                                                  << "give --passes or --seconds, not both";
        QTest::newRow("inspect threads without stats") << QStringList{"inspect", "--threads", "2", fx("float32_le.npy")} << "sluice: --threads: applies to --stats";
        QTest::newRow("bench train run warmup") << QStringList{"bench", "train", "--run", "--warmup", "2"} << "sluice: --warmup: applies to the step benchmark";
        QTest::newRow("bench storage missing") << QStringList{"bench", "storage", "nope.bin"} << "sluice: nope.bin:";
        QTest::newRow("bench storage small") << QStringList{"bench", "storage", fx("float32_le.npy"), "--seconds", "0.1"} << "float32_le.npy";
        QTest::newRow("bench storage depth") << QStringList{"bench", "storage", fx("float32_le.npy"), "--queue-depth", "0"} << "sluice: --queue-depth:";
        QTest::newRow("bench storage what") << QStringList{"bench", "storage"} << "usage: sluice bench storage FILE";
        QTest::newRow("gen kind") << QStringList{"gen", "clustering", "--out", "x", "--rows", "5"} << "KIND must be";
        QTest::newRow("gen rows") << QStringList{"gen", "regression", "--out", "x", "--rows", "many"} << "sluice: --rows:";
        QTest::newRow("gen size") << QStringList{"gen", "regression", "--out", "x", "--size", "lots"} << "sluice: --size:";
        QTest::newRow("gen dtype") << QStringList{"gen", "regression", "--out", "x", "--rows", "5", "--feature", "a:3:float128"} << "unknown dtype 'float128'";
        QTest::newRow("gen shape") << QStringList{"gen", "regression", "--out", "x", "--rows", "5", "--feature", "a:3x0"} << "is not like 256";
        QTest::newRow("gen classes") << QStringList{"gen", "classification", "--out", "x", "--rows", "5", "--target", "l:1"} << "at least 2 classes";
        QTest::newRow("gen classes fit") << QStringList{"gen", "classification", "--out", "x", "--rows", "5", "--target", "l:300:int8"} << "300 classes do not fit in int8";
        QTest::newRow("gen no out") << QStringList{"gen", "regression", "--rows", "5"} << "--out DIR is required";
    }
    void badArgumentsExitWithTwo()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const auto r = runSluice(args, dir.path());
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(!QDir(dir.path()).exists("x")); // nothing written on bad input
    }

    void helpAndVersion()
    {
        auto r = runSluice({"--help"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("sluice inspect"));
        r = runSluice({"inspect", "--help"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("--stats"));
        r = runSluice({"--version"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("CUDA:"));
        QVERIFY(r.out.contains("GPU")); // a GPU line or the reason there is none
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
