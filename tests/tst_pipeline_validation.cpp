// Building a pipeline validates every node: each error names the node and the parameter at
// fault (and what was expected). Damaged input found while running (a TFRecord CRC) is an error
// from next() naming the file and record. AUTOTUNE is accepted as "AUTOTUNE" and as -1.
#include "pipeline/engine/pipeline.h"
#include "project/project.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

using namespace sluice;
using namespace sluice::test;
using nlohmann::json;

namespace {

std::string range(const std::string &id = "src", const json &extra = json::object())
{
    json params{{"stop", 10}};
    params.update(extra);
    return op(id, "range", params);
}
std::string npy(const json &features) { return op("src", "from_npy", {{"features", features}}); }
const json kRecordFeatures{{"x", {{"dtype", "float32"}, {"shape", {3}}}}, {"label", {{"dtype", "int64"}}}};

// Two sources feeding one node `to` (zip, or a one-input op given two).
std::string twoInputs(const std::string &to, const std::string &toOp)
{
    return R"({"nodes": [)" + range("a") + ", " + range("b") + ", " + op(to, toOp) + R"(], "edges": [["a", ")" + to + R"("], ["b", ")" +
           to + R"("]]})";
}

} // namespace

class TestPipelineValidation : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string path(const std::string &name) const { return m_dir.filePath(QString::fromStdString(name)).toStdString(); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        writeNpy<float>(path("rows4.npy"), std::vector<float>(4 * 3, 1.0f), {3});
        writeNpy<std::int64_t>(path("rows5.npy"), {1, 2, 3, 4, 5});
        writeNpy<std::int32_t>(path("ints4.npy"), std::vector<std::int32_t>(4 * 3, 2), {3});
        writeNpy<float>(path("scalars4.npy"), {0.5f, 1.5f, 2.5f, 3.5f});
        writeFile(path("t.csv"), "a,b\n1,2\n");
    }

    void buildErrorsNameNodeAndParameter_data()
    {
        QTest::addColumn<QString>("pipeline");
        QTest::addColumn<QStringList>("expected");
        auto row = [](const char *name, const std::string &pipeline, const QStringList &expected) {
            QTest::newRow(name) << QString::fromStdString(pipeline) << expected;
        };
        const std::string src = range();
        row("unknown op", chain({src, op("x", "shufle")}), {R"(node "x")", R"(unknown op "shufle")", "shuffle", "global_shuffle", "batch"});
        row("missing param", chain({src, op("b", "batch")}), {R"(node "b" (batch))", "batch_size", "missing", "required"});
        row("missing range stop", chain({op("src", "range")}), {R"(node "src" (range))", "stop", "missing"});
        row("string where int", chain({src, op("b", "batch", {{"batch_size", "four"}})}), {R"(node "b" (batch))", "batch_size", "integer", "\"four\""});
        row("fraction where int", chain({src, op("b", "batch", {{"batch_size", 2.5}})}), {R"(node "b" (batch))", "batch_size", "integer", "2.5"});
        row("string where bool", chain({src, op("b", "batch", {{"batch_size", 4}, {"drop_remainder", "yes"}})}), {R"(node "b" (batch))", "drop_remainder", "true or false"});
        row("unknown parameter", chain({src, op("b", "batch", {{"batch_size", 4}, {"batchsize", 4}})}),
            {R"(node "b" (batch))", "batchsize", "unknown parameter", "known: batch_size, drop_remainder"});
        row("not a parameter of the function", chain({src, op("m", "map", {{"function", "scale"}, {"features", "value"}, {"scale", 2}, {"depth", 3}})}),
            {R"(node "m" (map))", "depth", R"(function "scale")"});
        row("unknown map function", chain({src, op("m", "map", {{"function", "blur"}})}), {R"(node "m" (map))", "function", "\"blur\"", "one_hot"});
        row("batch_size 0", chain({src, op("b", "batch", {{"batch_size", 0}})}), {R"(node "b" (batch))", "batch_size", "at least 1", "got 0"});
        row("take -2", chain({src, op("t", "take", {{"count", -2}})}), {R"(node "t" (take))", "count", "at least -1"});
        row("shuffle buffer 0", chain({src, op("s", "shuffle", {{"buffer_size", 0}})}), {R"(node "s" (shuffle))", "buffer_size", "at least 1"});
        row("shard index", chain({src, op("s", "shard", {{"num_shards", 3}, {"index", 3}})}), {R"(node "s" (shard))", "index", "below num_shards (3)", "got 3"});
        row("AUTOTUNE misspelt", chain({src, op("p", "prefetch", {{"buffer_size", "autotune"}})}), {R"(node "p" (prefetch))", "buffer_size", "\"AUTOTUNE\""});
        row("map parallelism 0", chain({src, op("m", "map", {{"function", "identity"}, {"num_parallel_calls", 0}})}), {R"(node "m" (map))", "num_parallel_calls", "at least 1"});
        row("normalize std 0", chain({src, op("n", "map", {{"function", "normalize"}, {"features", "value"}, {"std", 0}})}), {R"(node "n" (map))", "std", "positive"});
        row("missing npy", chain({npy({{"x", "missing.npy"}})}), {R"(node "src" (from_npy))", "features.x", "missing.npy", "no such file"});
        row("glob matches nothing", chain({op("src", "from_tfrecord", {{"filenames", "nope-*.tfrecord"}, {"features", kRecordFeatures}})}),
            {R"(node "src" (from_tfrecord))", "filenames", "nope-*.tfrecord", "no file matches"});
        row("npz without the member", chain({op("src", "from_npz", {{"path", fixture("stored.npz")}, {"members", {"labels", "weight"}}})}),
            {R"(node "src" (from_npz))", "members", "\"weight\"", "weights"});
        row("npz arrays of different lengths", chain({op("src", "from_npz", {{"path", fixture("stored.npz")}})}),
            {R"(node "src" (from_npz))", "path", "different lengths", "\"weights\" has 3"});
        row("npz members of different lengths", chain({op("src", "from_npz", {{"path", fixture("stored.npz")}, {"members", {"labels", "weights"}}})}),
            {R"(node "src" (from_npz))", "members", "different lengths", "\"labels\" has 6", "\"weights\" has 3"});
        row("features of different lengths", chain({npy({{"a", "rows4.npy"}, {"b", "rows5.npy"}})}),
            {R"(node "src" (from_npy))", "features", "different lengths", "\"a\" has 4 rows", "\"b\" has 5"});
        row("0-d array", chain({npy({{"x", fixture("scalar_f8.npy")}})}), {R"(node "src" (from_npy))", "features.x", "0-d"});
        row("filter on a vector", chain({npy({{"x", "rows4.npy"}}), op("f", "filter", {{"feature", "x"}, {"value", 1}})}),
            {R"(node "f" (filter))", "feature", "\"x\"", "float32 (3,)", "scalar"});
        row("filter on a missing feature", chain({src, op("f", "filter", {{"feature", "label"}, {"value", 1}})}),
            {R"(node "f" (filter))", "feature", "\"label\"", "it has: value"});
        row("concat of different dtypes", chain({npy({{"a", "rows4.npy"}, {"b", "ints4.npy"}}), op("c", "map", {{"function", "concat"}, {"features", {"a", "b"}}, {"name", "ab"}})}),
            {R"(node "c" (map))", "features", "int32", "float32", "cast"});
        row("map on a missing feature", chain({npy({{"x", "rows4.npy"}}), op("m", "map", {{"function", "scale"}, {"features", "nope"}, {"scale", 2}})}),
            {R"(node "m" (map))", "features", "\"nope\"", "it has: x"});
        row("one_hot of floats", chain({npy({{"x", "scalars4.npy"}}), op("o", "map", {{"function", "one_hot"}, {"features", "x"}, {"depth", 3}})}),
            {R"(node "o" (map))", "features", "float32", "integer"});
        row("reshape that does not fit", chain({npy({{"x", fixture("nd_u1.npy")}}), op("r", "map", {{"function", "reshape"}, {"features", "x"}, {"shape", {7, -1}}})}),
            {R"(node "r" (map))", "shape", "60 values"});
        row("global_shuffle of a stream", chain({op("src", "from_tfrecord", {{"filenames", dataFile("tfrecord/plain.tfrecord")}, {"features", kRecordFeatures}}), op("g", "global_shuffle")}),
            {R"(node "g" (global_shuffle))", "random-access", "shuffle(buffer_size)"});
        row("tfrecord dtype", chain({op("src", "from_tfrecord", {{"filenames", dataFile("tfrecord/plain.tfrecord")}, {"features", {{"x", {{"dtype", "float64"}}}}}})}),
            {R"(node "src" (from_tfrecord))", "features.x.dtype", "float64"});
        row("csv column not in the header", chain({op("src", "from_csv", {{"filenames", "t.csv"}, {"columns", {"a", "c"}}})}), {R"(node "src" (from_csv))", "columns.c", "'c'", "t.csv"});
        // Options that would act on nothing are refused, not dropped.
        row("cache on_mismatch without a file", chain({src, op("c", "cache", {{"on_mismatch", "error"}})}),
            {R"(node "c" (cache))", "on_mismatch", "set filename"});
        row("adapt_elements without adapt", chain({src, op("n", "map", {{"function", "normalize"}, {"features", "value"}, {"adapt_elements", 10}})}),
            {R"(node "n" (map))", "adapt_elements", "\"adapt\""});
        row("csv default for no column", chain({op("src", "from_csv", {{"filenames", "t.csv"}, {"columns", {"a"}}, {"column_defaults", {{"lable", 0}}}})}),
            {R"(node "src" (from_csv))", "column_defaults.lable", "names no column"});
        row("interleave readers above cycle_length", chain({src, op("i", "interleave", {{"cycle_length", 2}, {"num_parallel_calls", 4}})}),
            {R"(node "i" (interleave))", "num_parallel_calls", "at most cycle_length (2)"});
        row("zip of duplicate names", twoInputs("z", "zip"), {R"(node "z" (zip))", "\"value\"", "two inputs"});
        row("two inputs to batch", twoInputs("x", "batch"), {R"(node "x" (batch))", "takes 1 input", "has 2"});
        row("one input to zip", chain({src, op("z", "zip")}), {R"(node "z" (zip))", "at least 2 inputs", "has 1"});
        row("an input to a source", chain({src, range("r2")}), {R"(node "r2" (range))", "takes 0 inputs", "has 1"});
    }
    void buildErrorsNameNodeAndParameter()
    {
        QFETCH(QString, pipeline);
        QFETCH(QStringList, expected);
        const std::string error = buildError(pipeline.toStdString(), m_dir.path().toStdString());
        QVERIFY2(!error.empty(), "the pipeline built");
        for (const QString &part : expected)
            QVERIFY2(contains(error, part.toStdString()), qPrintable(QString("\"%1\" not in: %2").arg(part, QString::fromStdString(error))));
    }

    // The node and the parameter are fields of the error, as the workbench places it.
    void buildErrorsCarryNodeAndParameterAsFields()
    {
        auto fields = [&](const std::string &pipelineJson) {
            auto project = Project::fromJson(nlohmann::json::parse(projectText(pipelineJson)), m_dir.path().toStdString(), "");
            if (!project)
                return std::string("project: ") + project.error().message();
            auto built = pipeline::Pipeline::build(*project, {});
            if (built)
                return std::string("built");
            const Error &e = built.error();
            return std::string(kindName(e.kind)) + " " + e.node + " " + e.param;
        };
        const std::string src = range();
        QCOMPARE(fields(chain({op("src", "from_tfrecord", {{"filenames", dataFile("tfrecord/plain.tfrecord")}, {"features", {{"x", {{"dtype", "float64"}}}}}})})),
                 std::string("invalid src features"));
        QCOMPARE(fields(chain({src, op("b", "batch", {{"batch_size", 0}})})), std::string("invalid b batch_size"));
        QCOMPARE(fields(twoInputs("x", "batch")), std::string("invalid x "));
        QCOMPARE(fields(chain({src, op("m", "shuffle", {{"buffer_size", 4}, {"colour", "red"}})})), std::string("invalid m colour"));
    }

    void corruptedTfRecordFailsWhileRunning()
    {
        std::string bytes = readFile(dataFile("tfrecord/plain.tfrecord"));
        auto length = [&](std::size_t at) {
            std::uint64_t n;
            std::memcpy(&n, bytes.data() + at, 8);
            return std::size_t(n);
        };
        const std::size_t second = 12 + length(0) + 4; // header (length, its CRC), data, data CRC
        QVERIFY(second + 12 + length(second) + 4 <= bytes.size());
        bytes[second + 12 + length(second) / 2] ^= 0x20; // inside record 1's data
        writeFile(path("damaged.tfrecord"), bytes);

        auto p = buildPipeline(chain({op("src", "from_tfrecord", {{"filenames", "damaged.tfrecord"}, {"features", kRecordFeatures}})}),
                               m_dir.path().toStdString());
        QVERIFY(p); // the damage is found while reading
        auto first = p->next();
        QVERIFY2(first.ok() && *first, first.ok() ? "no element" : first.error().message().c_str());
        auto damaged = p->next();
        QVERIFY(!damaged.ok());
        const std::string message = damaged.error().message();
        QVERIFY2(contains(message, "damaged.tfrecord") && contains(message, "record 1") && contains(message, "CRC"), message.c_str());
    }

    void autotuneAcceptedAsStringAndMinusOne()
    {
        for (const json &autotune : {json("AUTOTUNE"), json(-1)}) {
            const std::string pipeline = chain({range("src", {{"stop", 100}}), op("b", "batch", {{"batch_size", 10}, {"num_parallel_calls", autotune}}),
                                                op("u", "unbatch"), op("m", "map", {{"function", "scale"}, {"features", "value"}, {"scale", 2}, {"num_parallel_calls", autotune}}),
                                                op("p", "prefetch", {{"buffer_size", autotune}})});
            auto p = buildPipeline(pipeline);
            QVERIFY(p);
            const Pass pass = collect(*p);
            QVERIFY2(pass.ok(), pass.error.c_str());
            std::vector<double> expected;
            for (int i = 0; i < 100; ++i)
                expected.push_back(2 * i);
            QCOMPARE(pass.flat(), expected);
            const auto snap = p->snapshot();
            QCOMPARE(snap.stages.size(), std::size_t(5));
            QVERIFY(snap.stages[1].tuned.count("num_parallel_calls")); // batch
            QVERIFY(snap.stages[3].tuned.count("num_parallel_calls")); // map
            QVERIFY(snap.stages[4].tuned.count("buffer_size"));        // prefetch
            // interleave's cycle_length too
            QCOMPARE(buildError(chain({range(), op("i", "interleave", {{"cycle_length", autotune}, {"num_parallel_calls", autotune}})})), std::string());
        }
        // An explicit number is not tuned.
        auto fixed = buildPipeline(chain({range(), op("p", "prefetch", {{"buffer_size", 4}})}));
        QVERIFY(fixed);
        QVERIFY(collect(*fixed).ok());
        QVERIFY(fixed->snapshot().stages[1].tuned.empty());
    }
};

QTEST_GUILESS_MAIN(TestPipelineValidation)
#include "tst_pipeline_validation.moc"
