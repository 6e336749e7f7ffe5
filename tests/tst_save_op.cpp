// The pipeline's save (tf.data Dataset.save) and load (Dataset.load): what save writes reads back
// through load as the rows it was given, in their order, for both formats, one or several
// shards, GZIP, batched or not; a pass that stops early writes no manifest and leaves a dataset
// saved before it intact; later passes do not rewrite; bad parameters are build errors that
// name the parameter.
#include "io/writers/shard_writer.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <set>

using namespace sluice;
using namespace sluice::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kRows = 10;

// x: float32 (3,), y: int64 scalars, u: uint8 (2,), each row's values telling the row apart.
struct Data
{
    std::vector<float> x;
    std::vector<std::int64_t> y;
    std::vector<std::uint8_t> u;
};

Data writeData(const std::string &dir, std::size_t rows = kRows)
{
    Data d;
    for (std::size_t r = 0; r < rows; ++r) {
        for (int k = 0; k < 3; ++k)
            d.x.push_back(float(r) + 0.25f * float(k));
        d.y.push_back(std::int64_t(r) * 1000 - 7);
        d.u.push_back(std::uint8_t(r % 256));
        d.u.push_back(std::uint8_t(255 - r % 256));
    }
    writeNpy(dir + "/x.npy", d.x, {3});
    writeNpy(dir + "/y.npy", d.y);
    writeNpy(dir + "/u.npy", d.u, {2});
    return d;
}

std::string source() { return op("src", "from_npy", {{"features", {{"x", "x.npy"}, {"y", "y.npy"}, {"u", "u.npy"}}}}); }
std::string save(json params = json::object())
{
    if (!params.contains("path"))
        params["path"] = "out";
    return op("save", "save", params);
}
std::string load(json path = "out") { return op("load", "load", {{"path", path}}); }

// The bytes of row `row` of feature `name` in a pass of single rows.
std::string rowBytes(const Pass &pass, const pipeline::ElementSpec &spec, std::size_t row, const std::string &name)
{
    const pipeline::Tensor &t = pass.elements.at(row).tensors.at(*spec.find(name));
    return std::string(reinterpret_cast<const char *>(t.data()), std::size_t(t.nbytes()));
}

template <typename T>
std::string bytesOf(const std::vector<T> &values, std::size_t row, std::size_t perRow)
{
    return std::string(reinterpret_cast<const char *>(values.data() + row * perRow), perRow * sizeof(T));
}

// Reads `folder`'s dataset back through load and compares it with `d`, row by row, in order.
void checkLoadsBack(const std::string &dir, const Data &d, const json &path = "out")
{
    auto p = buildPipeline(chain({load(path)}), dir);
    QVERIFY(p);
    const auto &spec = p->elementSpec();
    QCOMPARE(spec.text(), std::string("{u: uint8 (2,), x: float32 (3,), y: int64 ()}"));
    QCOMPARE(p->cardinality(), std::int64_t(d.y.size()));
    const Pass pass = collect(*p, "y");
    QVERIFY2(pass.ok(), pass.error.c_str());
    QCOMPARE(pass.size(), d.y.size());
    for (std::size_t r = 0; r < pass.size(); ++r) {
        QCOMPARE(rowBytes(pass, spec, r, "x"), bytesOf(d.x, r, 3));
        QCOMPARE(rowBytes(pass, spec, r, "y"), bytesOf(d.y, r, 1));
        QCOMPARE(rowBytes(pass, spec, r, "u"), bytesOf(d.u, r, 2));
    }
}

// Runs one pass to its end; the error's text, or "".
std::string runPassToEnd(pipeline::Pipeline &p)
{
    for (;;) {
        auto r = p.next();
        if (!r.ok())
            return r.error().message();
        if (!*r)
            return {};
    }
}

// What building `pipelineJson` fails with (kind invalid), or an error saying it built.
Error buildFailure(const std::string &pipelineJson, const std::string &folder)
{
    auto project = Project::fromText(projectText(pipelineJson), folder);
    if (!project)
        return project.error();
    auto built = pipeline::Pipeline::build(*project);
    return built ? Error::failed("test", "it built") : built.error();
}

// Files left in the folder other than the manifest and the shards it lists (a pass's leftovers).
std::vector<std::string> strayFiles(const std::string &folder)
{
    std::set<std::string> listed{kDatasetManifestName};
    if (auto m = readDatasetManifest(folder))
        for (const auto &s : m->shards)
            listed.insert(s.files.begin(), s.files.end());
    std::vector<std::string> stray;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(folder, ec))
        if (!listed.count(e.path().filename().string()))
            stray.push_back(e.path().filename().string());
    return stray;
}

} // namespace

class TestSaveOp : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void savesAndLoadsBack_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<int>("shards");
        QTest::addColumn<QString>("compression");
        QTest::newRow("tfrecord, 1 shard") << "tfrecord" << 1 << "";
        QTest::newRow("tfrecord, 3 shards") << "tfrecord" << 3 << "";
        QTest::newRow("tfrecord, 3 shards, GZIP") << "tfrecord" << 3 << "GZIP";
        QTest::newRow("npy, 1 shard") << "npy" << 1 << "";
        QTest::newRow("npy, 3 shards") << "npy" << 3 << "";
    }

    void savesAndLoadsBack()
    {
        QFETCH(QString, format);
        QFETCH(int, shards);
        QFETCH(QString, compression);
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        const Data data = writeData(d);
        json params{{"format", format.toStdString()}, {"num_shards", shards}};
        if (!compression.isEmpty())
            params["compression"] = compression.toStdString();
        auto p = buildPipeline(chain({source(), save(params)}), d);
        QVERIFY(p);
        // save passes its elements on unchanged.
        const Pass pass = collect(*p, "y");
        QVERIFY2(pass.ok(), pass.error.c_str());
        QCOMPARE(pass.firstValues(), (std::vector<std::int64_t>{-7, 993, 1993, 2993, 3993, 4993, 5993, 6993, 7993, 8993}));

        auto manifest = readDatasetManifest(d + "/out");
        QVERIFY2(manifest.ok(), manifest.ok() ? "" : manifest.error().message().c_str());
        QCOMPARE(manifest->records(), std::uint64_t(kRows));
        QCOMPARE(int(manifest->shards.size()), shards);
        // Rows dealt in turn: 10 rows over 3 shards are 4, 3, 3.
        if (shards == 3) {
            QCOMPARE(manifest->shards[0].records, std::uint64_t(4));
            QCOMPARE(manifest->shards[2].records, std::uint64_t(3));
        }
        QCOMPARE(manifest->compression == TfRecordWriter::Compression::Gzip, compression == "GZIP");
        const std::string first = manifest->shards[0].files[0];
        QCOMPARE(first, format == "npy" ? std::string("u-00000-of-0000") + std::to_string(shards) + ".npy"
                                        : std::string("data-00000-of-0000") + std::to_string(shards) + ".tfrecord");
        QVERIFY(strayFiles(d + "/out").empty());
        checkLoadsBack(d, data);
        // The manifest itself may be named too.
        checkLoadsBack(d, data, "out/manifest.json");
    }

    // A batched input is saved row by row: the same dataset as the rows unbatched.
    void batchesAreSavedAsRows()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        const Data data = writeData(d);
        for (const char *format : {"npy", "tfrecord"}) {
            auto p = buildPipeline(chain({source(), op("b", "batch", {{"batch_size", 4}}), save({{"format", format}, {"num_shards", 3}})}), d);
            QVERIFY(p);
            QCOMPARE(runPassToEnd(*p), std::string());
            checkLoadsBack(d, data);
        }
    }

    // Many blocks per shard, written by tasks in parallel while the consumer goes on.
    void aLargerPassIsWrittenInOrder()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        const Data data = writeData(d, 300000); // about 8 MB: several blocks for each of the shards
        pipeline::PipelineOptions options;
        options.threads = 2;
        auto p = buildPipeline(chain({source(), op("b", "batch", {{"batch_size", 1000}}), save({{"format", "npy"}, {"num_shards", 4}})}), d, options);
        QVERIFY(p);
        QCOMPARE(runPassToEnd(*p), std::string());
        p.reset();
        auto back = buildPipeline(chain({load(), op("b", "batch", {{"batch_size", 300000}})}), d);
        QVERIFY(back);
        const Pass pass = collect(*back, "x");
        QVERIFY2(pass.ok() && pass.size() == 1, pass.error.c_str());
        QCOMPARE(pass.bytes[0], bytesOf(data.x, 0, data.x.size()));
    }

    void stringFeaturesGoToTfRecord()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        writeFile(d + "/t.csv", "name,score\nalpha,1.5\nbeta,2\ngamma,-3.25\ndelta,0\n");
        const std::string csv = op("src", "from_csv", {{"filenames", "t.csv"}, {"columns", {{"name", "string"}, {"score", "float32"}}}});
        auto p = buildPipeline(chain({csv, save({{"num_shards", 2}, {"compression", "GZIP"}})}), d);
        QVERIFY(p);
        QCOMPARE(runPassToEnd(*p), std::string());
        auto back = buildPipeline(chain({load()}), d);
        QVERIFY(back);
        QCOMPARE(back->elementSpec().text(), std::string("{name: string (), score: float32 ()}"));
        const Pass pass = collect(*back, "score");
        QVERIFY2(pass.ok(), pass.error.c_str());
        QCOMPARE(pass.flat(), (std::vector<double>{1.5, 2, -3.25, 0}));
        std::vector<std::string> names;
        for (const auto &e : pass.elements)
            names.push_back(e.tensors[0].stringValues()[0]);
        QCOMPARE(names, (std::vector<std::string>{"alpha", "beta", "gamma", "delta"}));
        // The documented alternative: from_tfrecord over the shards with the manifest's spec
        // (rows then come shard by shard).
        auto direct = buildPipeline(chain({op("src", "from_tfrecord", {{"filenames", "out/data-*.tfrecord"}, {"compression_type", "GZIP"},
                                                                        {"features", {{"score", {{"dtype", "float32"}}}}}})}),
                                    d);
        QVERIFY(direct);
        QCOMPARE(collect(*direct, "score").flat(), (std::vector<double>{1.5, -3.25, 2, 0}));
    }

    // A pass that stops early (take after save, a restart, a cancel) writes no manifest and
    // leaves nothing behind; a dataset saved before it stays whole.
    void aPassCutShortWritesNothing()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        const Data data = writeData(d);
        {
            auto p = buildPipeline(chain({source(), save({{"num_shards", 3}}), op("t", "take", {{"count", 4}})}), d);
            QVERIFY(p);
            QCOMPARE(collect(*p, "y").size(), std::size_t(4));
        }
        QVERIFY(!fs::exists(d + "/out/manifest.json"));
        QVERIFY(strayFiles(d + "/out").empty());
        {
            auto p = buildPipeline(chain({source(), save({{"format", "npy"}})}), d);
            QVERIFY(p);
            QCOMPARE(collect(*p, "y", 3).size(), std::size_t(3));
            p->cancel();
            QVERIFY(!p->next().ok());
        }
        QVERIFY(!fs::exists(d + "/out/manifest.json"));
        QVERIFY(strayFiles(d + "/out").empty());

        auto full = buildPipeline(chain({source(), save()}), d);
        QVERIFY(full);
        QCOMPARE(runPassToEnd(*full), std::string());
        full.reset();
        {
            // A preview of the save node takes a few elements and stops.
            auto p = buildPipeline(chain({source(), save({{"num_shards", 2}})}), d);
            QVERIFY(p);
            QCOMPARE(collect(*p, "y", 2).size(), std::size_t(2));
            p->restart();
        }
        QVERIFY(strayFiles(d + "/out").empty());
        checkLoadsBack(d, data); // the one-shard dataset saved before, untouched
        QCOMPARE(readDatasetManifest(d + "/out")->shards.size(), std::size_t(1));
    }

    // Later passes (epochs) pass through without writing; a new run replaces the dataset.
    void laterPassesDoNotRewrite()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        const Data data = writeData(d);
        auto p = buildPipeline(chain({source(), save({{"num_shards", 2}})}), d);
        QVERIFY(p);
        QCOMPARE(runPassToEnd(*p), std::string());
        QVERIFY(fs::exists(d + "/out/manifest.json"));
        fs::remove_all(d + "/out");
        p->restart();
        QCOMPARE(collect(*p, "y").size(), kRows); // the elements still pass
        QVERIFY(!fs::exists(d + "/out"));
        p.reset();

        // Rerunning the project replaces what it saved (overwrite defaults to true), here with
        // three shards where there were two.
        for (int shards : {2, 3}) {
            auto again = buildPipeline(chain({source(), save({{"num_shards", shards}})}), d);
            QVERIFY(again);
            QCOMPARE(runPassToEnd(*again), std::string());
        }
        QCOMPARE(readDatasetManifest(d + "/out")->shards.size(), std::size_t(3));
        QVERIFY(strayFiles(d + "/out").empty()); // the two-shard files are gone
        checkLoadsBack(d, data);
    }

    void loadReadsSeveralDatasetsInTurn()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        writeData(d);
        for (const char *folder : {"parts/rank-00000", "parts/rank-00001"}) {
            auto p = buildPipeline(chain({source(), save({{"path", folder}, {"num_shards", 2}})}), d);
            QVERIFY(p);
            QCOMPARE(runPassToEnd(*p), std::string());
        }
        auto p = buildPipeline(chain({load("parts/rank-*")}), d);
        QVERIFY(p);
        const std::vector<std::int64_t> once{-7, 993, 1993, 2993, 3993, 4993, 5993, 6993, 7993, 8993};
        std::vector<std::int64_t> twice = once;
        twice.insert(twice.end(), once.begin(), once.end());
        QCOMPARE(collect(*p, "y").firstValues(), twice);
    }

    void badParametersAreNamed()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        writeData(d);
        writeFile(d + "/t.csv", "name\nalpha\n");
        const std::string csv = op("src", "from_csv", {{"filenames", "t.csv"}, {"columns", {{"name", "string"}}}});
        struct Case
        {
            std::string pipeline, param, says;
        };
        const std::vector<Case> cases{
            {chain({source(), op("save", "save", json::object())}), "path", "required"},
            {chain({source(), save({{"format", "parquet"}})}), "format", "parquet"},
            {chain({source(), save({{"num_shards", 0}})}), "num_shards", "at least 1"},
            {chain({csv, save({{"format", "npy"}})}), "format", "\"name\" is a string"},
            {chain({source(), save({{"format", "npy"}, {"compression", "GZIP"}})}), "compression", "tfrecord"},
            {chain({source(), save({{"num_shards", 3}, {"shard_pattern", "part.tfrecord"}})}), "shard_pattern", "{index}"},
            {chain({source(), save({{"shard_pattern", "{shard}.tfrecord"}})}), "shard_pattern", "unknown {shard}"},
            {chain({source(), save({{"features", {"x", "nope"}}})}), "features", "\"nope\" is not a feature"},
            {chain({load("missing")}), "path", "missing"},
            {chain({load(".")}), "path", "no manifest.json"},
        };
        for (const Case &c : cases) {
            const Error e = buildFailure(c.pipeline, d);
            QVERIFY2(e.param == c.param, (c.param + " expected, got: " + e.param + " / " + e.message()).c_str());
            QVERIFY2(contains(e.message(), c.says), e.message().c_str());
        }
        // overwrite false: a folder that holds a dataset is refused before anything runs.
        auto p = buildPipeline(chain({source(), save()}), d);
        QVERIFY(p);
        QCOMPARE(runPassToEnd(*p), std::string());
        const Error e = buildFailure(chain({source(), save({{"overwrite", false}})}), d);
        QCOMPARE(e.param, std::string("overwrite"));
        QVERIFY2(contains(e.message(), "already holds a saved dataset"), e.message().c_str());
        // Datasets of different features are not read as one.
        auto other = buildPipeline(chain({op("src", "from_npy", {{"features", {{"y", "y.npy"}}}}), save({{"path", "other"}})}), d);
        QVERIFY(other);
        QCOMPARE(runPassToEnd(*other), std::string());
        const Error mixed = buildFailure(chain({load(json::array({"out", "other"}))}), d);
        QCOMPARE(mixed.param, std::string("path"));
        QVERIFY2(contains(mixed.message(), "holds {y: int64 ()}"), mixed.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestSaveOp)
#include "tst_save_op.moc"
