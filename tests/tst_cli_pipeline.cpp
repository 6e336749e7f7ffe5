// The pipeline commands as users run them: sluice preview (printed and as .npz batches),
// sluice run --profile (table, --json events, exit codes 0 / 1 / 2), sluice ops, and
// sluice bench pipeline.
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include "io/formats/npy_file.h"
#include "io/formats/npz_file.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <map>

using sluice::test::jsonLines;
using sluice::test::runSluice;

namespace {

// A project file in `dir` whose pipeline is `nodes` chained in order.
QString writeProject(const QTemporaryDir &dir, const std::vector<nlohmann::json> &nodes, const QString &name = "p.sluice")
{
    nlohmann::json doc{{"format", "sluice-project"}, {"version", 1}, {"name", "test"}};
    doc["pipeline"]["nodes"] = nodes;
    doc["pipeline"]["edges"] = nlohmann::json::array();
    for (std::size_t i = 1; i < nodes.size(); ++i)
        doc["pipeline"]["edges"].push_back({nodes[i - 1]["id"], nodes[i]["id"]});
    const QString path = dir.filePath(name);
    sluice::test::writeFile(path.toStdString(), doc.dump(2));
    return path;
}

nlohmann::json node(const char *id, const char *op, nlohmann::json params) { return {{"id", id}, {"op", op}, {"params", params}}; }

} // namespace

class TestCliPipeline : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_data;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_data = m_dir.filePath("data");
        const auto r = runSluice({"gen", "regression", "--out", m_data, "--rows", "1000", "--seed", "3", "--feature", "x:16", "--target",
                                  "y:scalar"});
        QCOMPARE(r.exitCode, 0);
    }

    void previewWritesBatchesAsNpz()
    {
        const QString project = writeProject(m_dir, {node("src", "from_npy", {{"features", {{"x", "data/x.npy"}, {"y", "data/y.npy"}}}}),
                                                     node("batch", "batch", {{"batch_size", 100}})});
        const QString out = m_dir.filePath("preview");
        const auto r = runSluice({"preview", project, "--batches", "3", "--out", out});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(QFile::exists(out + "/batch_00002.npz"));
        QVERIFY(!QFile::exists(out + "/batch_00003.npz"));
        // Batch 1 holds rows 100..199 of each array, named as the features.
        auto npz = sluice::NpzFile::open((out + "/batch_00001.npz").toStdString());
        QVERIFY(npz.ok());
        auto x = npz->load("x");
        QVERIFY(x.ok());
        QCOMPARE(x->shape(), (std::vector<std::uint64_t>{100, 16}));
        auto source = sluice::openNpy((m_data + "/x.npy").toStdString());
        QVERIFY(source.ok());
        const auto expected = source->rowRangeBytes(100, 200);
        QCOMPARE(x->data().size(), expected.size());
        QVERIFY(std::memcmp(x->data().data(), expected.data(), expected.size()) == 0);
        auto y = npz->load("y");
        QVERIFY(y.ok());
        QCOMPARE(y->shape(), (std::vector<std::uint64_t>{100}));
    }

    void previewPrintsShapesOfAnyNode()
    {
        const QString project = writeProject(m_dir, {node("src", "from_npy", {{"features", {{"x", "data/x.npy"}}}}),
                                                     node("batch", "batch", {{"batch_size", 8}})});
        const auto r = runSluice({"preview", project, "--node", "src", "--batches", "2"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("src emits {x: float32 (16,)}"), qPrintable(r.out));
        QVERIFY(r.out.contains("element 1"));
        const auto b = runSluice({"preview", project});
        QVERIFY2(b.out.contains("x                float32  (8, 16)"), qPrintable(b.out));
        const auto bad = runSluice({"preview", project, "--node", "nope"});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY(bad.err.contains("\"nope\" does not exist"));
    }

    void runProfilePrintsEveryStageAndTheBottleneck()
    {
        const QString project = writeProject(m_dir, {node("src", "from_npy", {{"features", {{"x", "data/x.npy"}}}}),
                                                     node("shuffle", "global_shuffle", {{"seed", 1}}),
                                                     node("batch", "batch", {{"batch_size", 32}}),
                                                     node("prefetch", "prefetch", {{"buffer_size", "AUTOTUNE"}})});
        const auto r = runSluice({"run", project, "--profile", "--epochs", "2", "--threads", "2"});
        QCOMPARE(r.exitCode, 0);
        for (const char *id : {"src", "shuffle", "batch", "prefetch"})
            QVERIFY2(r.out.contains(QString("\n") + id + " "), qPrintable(r.out));
        QVERIFY(r.out.contains("bottleneck: "));
        QVERIFY(r.out.contains("buffer_size="));
        // 1000 rows in batches of 32 → 32 batches per pass, two passes.
        QVERIFY2(r.out.contains("64 elements in"), qPrintable(r.out));
    }

    void runJsonEmitsStatsAndRunEnd()
    {
        const QString project = writeProject(m_dir, {node("src", "from_npy", {{"features", {{"x", "data/x.npy"}}}}),
                                                     node("repeat", "repeat", nlohmann::json::object()),
                                                     node("map", "map", {{"function", "scale"}, {"features", "x"}, {"scale", 2.0}}),
                                                     node("batch", "batch", {{"batch_size", 10}})});
        const auto r = runSluice({"run", project, "--json", "--seconds", "0.6", "--stats-interval", "0.1"});
        QCOMPARE(r.exitCode, 0);
        const auto lines = jsonLines(r.out);
        QVERIFY(lines.size() >= 3);
        int stats = 0;
        for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
            QCOMPARE(lines[i]["event"], "stats");
            QCOMPARE(lines[i]["stages"].size(), std::size_t(4));
            ++stats;
        }
        QVERIFY(stats >= 2);
        const auto &end = lines.back();
        QCOMPARE(end["event"], "run_end");
        QCOMPARE(end["status"], "ok");
        QVERIFY(end["elements"].get<std::uint64_t>() > 0);
        QCOMPARE(end["stats"]["stages"][2]["id"], "map");
        QVERIFY(end["stats"]["stages"][2]["elements"].get<std::uint64_t>() >= 10 * end["elements"].get<std::uint64_t>());
    }

    // Pipeline-only runs measure the input-bound share too, against the consumer they state: as
    // fast as possible (it always waits: input-bound), or a simulated step that outlasts the
    // pipeline (not input-bound: the consumer is the verdict).
    void pipelineRunsReportTheInputBoundShareOfTheirConsumer()
    {
        const QString project = writeProject(m_dir, {node("src", "from_npy", {{"features", {{"x", "data/x.npy"}}}}),
                                                     node("batch", "batch", {{"batch_size", 100}}),
                                                     node("prefetch", "prefetch", {{"buffer_size", 2}})});
        const auto fast = runSluice({"run", project, "--profile", "--json", "--epochs", "3", "--threads", "2"});
        QVERIFY2(fast.exitCode == 0, qPrintable(fast.err));
        const auto fastEnd = jsonLines(fast.out).back()["stats"];
        QCOMPARE(fastEnd["consumer"], "as fast as possible");
        QVERIFY(fastEnd["consumer_attached"].get<bool>());
        QVERIFY(fastEnd.contains("input_bound_share"));
        QVERIFY(fastEnd["bottleneck"] != "consumer");

        const auto slow = runSluice({"run", project, "--profile", "--json", "--epochs", "4", "--threads", "2", "--consumer-ms", "20"});
        QVERIFY2(slow.exitCode == 0, qPrintable(slow.err));
        const auto slowEnd = jsonLines(slow.out).back()["stats"];
        QCOMPARE(slowEnd["consumer"]["step_ms"].get<double>(), 20.0);
        QVERIFY2(slowEnd["input_bound_share"].get<double>() < 0.05, slowEnd.dump().c_str());
        QCOMPARE(slowEnd["input_bound"], "not input-bound");
        QCOMPARE(slowEnd["bottleneck"], "consumer");
        QCOMPARE(slowEnd["bottleneck_kind"], "consumer");

        const auto table = runSluice({"run", project, "--profile", "--consumer-ms", "1"});
        QVERIFY2(table.out.contains("consumer: a simulated step of 1"), qPrintable(table.out));
        QVERIFY2(table.out.contains("input-bound: "), qPrintable(table.out));
        for (const char *bad : {"0", "-3", "soon"}) {
            const auto r = runSluice({"run", project, "--profile", "--consumer-ms", bad});
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains("--consumer-ms") && r.err.contains("milliseconds"), qPrintable(r.err));
        }
    }

    void badProjectsExitWithTwoNamingTheNode()
    {
        QTemporaryDir dir;
        const QString unknownOp = writeProject(dir, {node("src", "range", {{"stop", 5}}), node("mix", "shufle", {{"buffer_size", 2}})});
        auto r = runSluice({"run", unknownOp});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("node \"mix\": unknown op \"shufle\"") && r.err.contains("shuffle"), qPrintable(r.err));

        const QString badParam = writeProject(dir, {node("src", "range", {{"stop", 5}}), node("b", "batch", {{"batch_size", "big"}})});
        r = runSluice({"run", badParam});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("node \"b\" (batch): batch_size: must be an integer"), qPrintable(r.err));

        const QString missing = writeProject(dir, {node("src", "from_npy", {{"features", {{"x", "nowhere.npy"}}}})});
        r = runSluice({"run", missing});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("features.x") && r.err.contains("nowhere.npy"), qPrintable(r.err));

        r = runSluice({"run", dir.filePath("absent.sluice")});
        QCOMPARE(r.exitCode, 2);
        r = runSluice({"run"});
        QCOMPARE(r.exitCode, 2);
        r = runSluice({"run", unknownOp, "--seconds", "-1"});
        QCOMPARE(r.exitCode, 2);
        // Acting on nothing without --json: refused rather than ignored.
        const QString fine = writeProject(dir, {node("src", "range", {{"stop", 5}})});
        r = runSluice({"run", fine, "--stats-interval", "0.1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("--stats-interval: applies to --json"), qPrintable(r.err));
        r = runSluice({"run", fine, "--profile", "--consumer-ms", "2", "--try-advice"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("--consumer-ms: does not apply to --try-advice"), qPrintable(r.err));
    }

    void aFailingRunExitsWithOne()
    {
        // A TFRecord whose second record's data is damaged: the run starts, then fails.
        QTemporaryDir dir;
        std::string bytes = sluice::test::readFile(sluice::test::dataFile("tfrecord/plain.tfrecord"));
        QVERIFY(bytes.size() > 64);
        bytes[bytes.size() / 2] ^= 0x5a;
        sluice::test::writeFile(dir.filePath("bad.tfrecord").toStdString(), bytes);
        const QString project = writeProject(
            dir, {node("src", "from_tfrecord", {{"filenames", "bad.tfrecord"}, {"features", {{"label", {{"dtype", "int64"}}}}}})});
        const auto r = runSluice({"run", project, "--json"});
        QCOMPARE(r.exitCode, 1);
        const auto end = jsonLines(r.out).back();
        QCOMPARE(end["event"], "run_end");
        QCOMPARE(end["status"], "failed");
        QVERIFY2(QString::fromStdString(end["error"].get<std::string>()).contains("bad.tfrecord"), end["error"].dump().c_str());
    }

    // The pipeline-only example profiles end to end on a small copy of its data, written by the
    // script that writes the real data (so the test follows the script's gen arguments).
    void classicExampleProfiles()
    {
        QTemporaryDir root;
        QVERIFY(root.isValid());
        // The project's paths (data/classic/…) are relative to its folder: a copy next to the data.
        const auto failed = sluice::test::writeExampleCopy(root.path(), {"classic"}, {"classic-pipeline"}, {{"SLUICE_EXAMPLE_SIZE", "3M"}});
        QVERIFY2(!failed, failed ? failed->c_str() : "");
        const QString project = root.filePath("classic-pipeline.sluice");
        auto x = sluice::openNpy(root.filePath("data/classic/x.npy").toStdString());
        QVERIFY(x.ok());
        const std::uint64_t rows = x->rowCount(), batches = (rows + 255) / 256;
        QVERIFY(rows > 256);

        const auto r = runSluice({"run", project, "--profile", "--json", "--epochs", "2", "--threads", "2", "--stats-interval", "0.05"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto lines = jsonLines(r.out);
        QVERIFY(!lines.empty());
        for (std::size_t i = 0; i + 1 < lines.size(); ++i)
            QCOMPARE(lines[i]["event"], "stats");
        const auto &end = lines.back();
        QCOMPARE(end["event"], "run_end");
        QCOMPARE(end["status"], "ok");
        QCOMPARE(end["passes"].get<int>(), 2);
        QCOMPARE(end["elements"].get<std::uint64_t>(), 2 * batches);
        const auto &stats = end["stats"];
        QStringList ids;
        for (const auto &s : stats["stages"])
            ids << QString::fromStdString(s["id"].get<std::string>());
        QCOMPARE(ids, (QStringList{"arrays", "shuffle", "batch", "to_float", "prefetch"}));
        // A stage; the whole pipeline when its work waited for a core (another test beside it); or
        // none when no stage was busy half the time (this small pipeline sits near that line).
        const QString bottleneck = QString::fromStdString(stats["bottleneck"].get<std::string>());
        const std::string kind = stats["bottleneck_kind"].get<std::string>();
        QVERIFY2(ids.contains(bottleneck) || (bottleneck == "pipeline" && kind == "cpu_contention") || (bottleneck.isEmpty() && kind == "no_stage"),
                 qPrintable(bottleneck + " [" + QString::fromStdString(kind) + "]"));
        QVERIFY2(kind == "compute" || kind == "storage" || kind == "buffer" || kind == "cpu_contention" || kind == "no_stage", kind.c_str());
        QVERIFY(!stats["bottleneck_reason"].get<std::string>().empty());
        QCOMPARE(stats["stages"][0]["elements"].get<std::uint64_t>(), 2 * rows); // every row, each pass
        QCOMPARE(stats["stages"][4]["elements"].get<std::uint64_t>(), 2 * batches);
        QVERIFY(stats["stages"][4]["tuned"]["buffer_size"].get<int>() >= 1);
        QVERIFY(stats["stages"][2]["tuned"].contains("num_parallel_calls"));
    }

    // SLUICE_EXAMPLE_DATA=DIR, as the README offers: the main job writes the classic dataset
    // there (a relative DIR taken from where it is started) and its preview and profile read it
    // from there, through --set.
    void theExampleJobReadsItsDataWhereItIsTold()
    {
        QTemporaryDir root;
        QVERIFY(root.isValid());
        QProcess job;
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert("SLUICE", QString::fromStdString(sluice::test::sluiceBinary()));
        env.insert("SLUICE_EXAMPLE_DATA", "my data/classic"); // relative, with a space
        env.insert("SLUICE_EXAMPLE_SIZE", "2M");
        env.insert("SLUICE_DATA_ROOT", root.filePath("data"));
        env.insert("SLUICE_EXAMPLE_ROWS", "64");
        env.insert("SLUICE_EXAMPLE_SECONDS", "0.5");
        env.insert("SLUICE_EXAMPLE_TRAIN", "");
        env.insert("SLUICE_EXAMPLE_WORKBENCH", "0");
        job.setProcessEnvironment(env);
        job.setWorkingDirectory(root.path());
        job.start("bash", {QStringLiteral(SLUICE_SOURCE_DIR) + "/scripts/example-job.sh"});
        QVERIFY(job.waitForFinished(300000));
        const QString out = QString::fromUtf8(job.readAllStandardOutput()), err = QString::fromUtf8(job.readAllStandardError());
        QVERIFY2(job.exitCode() == 0, qPrintable(err));
        QVERIFY(QFile::exists(root.filePath("my data/classic/x.npy")));
        QVERIFY2(out.contains("prefetch emits {meta: float32 (None, 8)"), qPrintable(out)); // the preview
        QVERIFY2(out.contains("bottleneck"), qPrintable(out));                              // the profile
    }

    void opsMarkdownIsTheReferencePage()
    {
        const auto r = runSluice({"ops", "--markdown"});
        QCOMPARE(r.exitCode, 0);
        const QString doc = QString::fromStdString(sluice::test::readFile(std::string(SLUICE_SOURCE_DIR) + "/docs/pipeline-ops.md"));
        QVERIFY2(r.out == doc, "docs/pipeline-ops.md is out of date: regenerate it with `sluice ops --markdown`");
        const auto j = nlohmann::json::parse(runSluice({"ops", "--json"}).out.toStdString());
        QVERIFY(j.size() >= 19);
        // Which parameters are required, and that a required one never has a default.
        std::map<std::string, bool> required;
        for (const auto &op : j)
            for (const auto &p : op["params"]) {
                QVERIFY2(!p["required"].get<bool>() || p["default"].get<std::string>().empty(), p.dump().c_str());
                required[op["name"].get<std::string>() + "." + p["name"].get<std::string>()] = p["required"].get<bool>();
            }
        for (const char *name : {"batch.batch_size", "prefetch.buffer_size", "range.stop", "shuffle.buffer_size", "from_npy.features",
                                 "from_csv.filenames", "from_tfrecord.features", "map.function", "shard.index", "take.count",
                                 "from_generator.generator", "from_generator.output_signature"})
            QVERIFY2(required.at(name), name);
        for (const char *name : {"global_shuffle.seed", "shuffle.seed", "cache.filename", "from_tfrecord.compression_type",
                                 "map.num_parallel_calls", "map.features", "interleave.num_parallel_calls", "from_csv.na_value", "range.step",
                                 "filter.value", "filter.predicate", "map.callable"})
            QVERIFY2(!required.at(name), name);
        QVERIFY(doc.contains("| `seed` | int | optional | random seed (absent: from the pipeline seed, else random) |"));
        QVERIFY(doc.contains("| `batch_size` | int | required |"));
    }

    void benchPipelineReportsFigures()
    {
        const auto r = runSluice({"bench", "pipeline", m_data + "/x.npy", "--seconds", "0.2", "--batch", "64", "--map-chain", "2", "--json"});
        QCOMPARE(r.exitCode, 0);
        const auto j = jsonLines(r.out).at(0);
        QVERIFY(j["samples_per_s"].get<double>() > 0);
        QVERIFY(j.contains("map_overhead_batched_ns_per_element"));
        QVERIFY(j.contains("map_overhead_unbatched_ns_per_element"));
        QCOMPARE(j["stats"]["stages"].size(), std::size_t(4));
        // --cold: the file dropped from the page cache first; the same stages measured.
        const auto cold = runSluice({"bench", "pipeline", m_data + "/x.npy", "--seconds", "0.2", "--batch", "64", "--cold", "--json"});
        QVERIFY2(cold.exitCode == 0, qPrintable(cold.err));
        QVERIFY(jsonLines(cold.out).at(0)["samples_per_s"].get<double>() > 0);
    }

    // SLUICE_STORAGE_THROTTLE_US makes every page read from a mapping wait, as a slow device
    // would, for trying the storage verdict by hand (docs/profiling.md): the pages count as read
    // from storage and the source's reads wait off the CPU.
    void storageThrottleFromTheEnvironment()
    {
        QTemporaryDir dir;
        const QString project = writeProject(dir, {node("src", "from_npy", {{"features", {{"x", (m_data + "/x.npy").toStdString()}}}}),
                                                   node("b", "batch", {{"batch_size", 64}})});
        qputenv("SLUICE_STORAGE_THROTTLE_US", "2000");
        const auto r = runSluice({"run", project, "--profile", "--json", "--epochs", "1"});
        qunsetenv("SLUICE_STORAGE_THROTTLE_US");
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto end = jsonLines(r.out).back();
        QVERIFY2(end["stats"]["storage_read_bytes"].get<double>() >= 16 * 4096, end.dump().c_str()); // the 64 KiB file's pages
        const auto &source = end["stats"]["stages"][0];
        QVERIFY2(source["storage"]["wait_s"].get<double>() >= 0.016, source.dump().c_str()); // 16 pages of 2 ms
    }
};

QTEST_GUILESS_MAIN(TestCliPipeline)
#include "tst_cli_pipeline.moc"
