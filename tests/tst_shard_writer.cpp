// Sharded datasets: TFRecord and npy shards written in parallel, one thread per shard, read
// back by Sluice's readers; the manifest written last, and nothing left under a final name by
// a writer that never committed.
#include "io/formats/npy_file.h"
#include "io/writers/shard_writer.h"
#include "io/formats/tf_example.h"
#include "io/formats/tfrecord_reader.h"
#include "support/test_support.h"
#include "support/reference.h"

#include <QDir>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QtTest>

#include <limits>
#include <numeric>
#include <thread>

using namespace sluice;

namespace {

QStringList filesIn(const QString &folder) { return QDir(folder).entryList(QDir::Files | QDir::Hidden, QDir::Name); }

// The test dataset: row r has x = (r, -r) as float32, label = r % 7 as int32, name = "row-r",
// tokens = r % 4 int64 values r, r+1, … (variable length).
std::vector<DatasetFeature> tfFeatures()
{
    return {{"x", DType::Float32, false, {2}, false},
            {"label", DType::Int32, false, {}, false},
            {"name", DType::UInt8, true, {}, false},
            {"tokens", DType::Int64, false, {}, true}};
}

// Columns for rows [first, first + n) of the test dataset, owning their values.
struct TfRows
{
    std::vector<float> x;
    std::vector<std::int32_t> label;
    std::vector<std::string> name;
    std::vector<std::int64_t> tokens;
    std::vector<std::uint64_t> lengths;

    TfRows(std::uint64_t first, std::uint64_t n)
    {
        for (std::uint64_t r = first; r < first + n; ++r) {
            x.insert(x.end(), {float(r), -float(r)});
            label.push_back(std::int32_t(r % 7));
            name.push_back("row-" + std::to_string(r));
            lengths.push_back(r % 4);
            for (std::uint64_t k = 0; k < r % 4; ++k)
                tokens.push_back(std::int64_t(r + k));
        }
    }
    std::vector<ColumnRows> columns() const
    {
        return {{std::as_bytes(std::span(x)), {}, {}},
                {std::as_bytes(std::span(label)), {}, {}},
                {{}, name, {}},
                {std::as_bytes(std::span(tokens)), {}, lengths}};
    }
};

// Writes `rows` rows, shard i getting rows [i * per, …), each shard from its own thread in
// pieces of 3 rows; returns the first error, or "".
template <typename Rows>
QString writeInParallel(ShardedDatasetWriter &w, std::uint64_t rows)
{
    const auto shards = std::uint64_t(w.shardCount());
    const std::uint64_t per = (rows + shards - 1) / shards;
    std::vector<std::string> errors(shards);
    std::vector<std::thread> threads;
    for (std::uint64_t s = 0; s < shards; ++s) {
        threads.emplace_back([&, s] {
            ShardWriter &shard = w.shard(int(s));
            const std::uint64_t end = std::min(rows, (s + 1) * per);
            for (std::uint64_t first = s * per; first < end; first += 3) {
                const Rows piece(first, std::min<std::uint64_t>(3, end - first));
                if (auto st = shard.append(std::min<std::uint64_t>(3, end - first), piece.columns()); !st) {
                    errors[s] = st.error().message();
                    return;
                }
            }
            if (auto st = shard.close(); !st)
                errors[s] = st.error().message();
        });
    }
    for (auto &t : threads)
        t.join();
    for (const auto &e : errors)
        if (!e.empty())
            return QString::fromStdString(e);
    return {};
}

std::vector<std::string> readRecords(const std::string &path, TfRecordReader::Compression c)
{
    std::vector<std::string> out;
    auto r = TfRecordReader::open(path, c);
    if (!r)
        return {"<" + r.error().message() + ">"};
    for (;;) {
        auto rec = r->next();
        if (!rec)
            return {"<" + rec.error().message() + ">"};
        if (!*rec)
            return out;
        out.emplace_back(reinterpret_cast<const char *>((*rec)->data()), (*rec)->size());
    }
}

// Checks that the records of a shard are rows [first, first + count) of the test dataset.
QString checkTfShard(const std::string &path, TfRecordReader::Compression c, std::uint64_t first, std::uint64_t count)
{
    const auto records = readRecords(path, c);
    if (records.size() != count)
        return QString("%1 records, expected %2").arg(records.size()).arg(count);
    for (std::uint64_t i = 0; i < count; ++i) {
        auto e = parseExample(std::as_bytes(std::span(records[i].data(), records[i].size())), "record");
        if (!e)
            return QString::fromStdString(e.error().message());
        const TfRows want(first + i, 1);
        Example &got = *e;
        const auto &name = got["name"].bytes;
        if (got.size() != 4 || got["x"].floats != want.x || got["label"].ints != std::vector<std::int64_t>{want.label[0]} ||
            name.size() != 1 || std::string(reinterpret_cast<const char *>(name[0].data()), name[0].size()) != want.name[0] ||
            got["tokens"].ints != want.tokens || got["tokens"].kind != ExampleFeature::Kind::Int64)
            return QString("record %1 of %2 differs").arg(i).arg(QString::fromStdString(path));
    }
    return {};
}

// The npy test dataset: x = (r, r + 0.5, r + 0.25) float32, y = r * 1000 int64, m = 2x2 uint8 of r.
std::vector<DatasetFeature> npyFeatures()
{
    return {{"x", DType::Float32, false, {3}, false}, {"y", DType::Int64, false, {}, false}, {"m", DType::UInt8, false, {2, 2}, false}};
}

struct NpyRows
{
    std::vector<float> x;
    std::vector<std::int64_t> y;
    std::vector<std::uint8_t> m;

    NpyRows(std::uint64_t first, std::uint64_t n)
    {
        for (std::uint64_t r = first; r < first + n; ++r) {
            x.insert(x.end(), {float(r), float(r) + 0.5f, float(r) + 0.25f});
            y.push_back(std::int64_t(r) * 1000);
            m.insert(m.end(), 4, std::uint8_t(r));
        }
    }
    std::vector<ColumnRows> columns() const
    {
        return {{std::as_bytes(std::span(x)), {}, {}}, {std::as_bytes(std::span(y)), {}, {}}, {std::as_bytes(std::span(m)), {}, {}}};
    }
};

template <typename T>
QString checkNpy(const std::string &path, std::vector<std::uint64_t> shape, const std::vector<T> &want)
{
    auto a = openNpy(path);
    if (!a)
        return QString::fromStdString(a.error().message());
    if (a->shape() != shape)
        return QString("%1: shape differs").arg(QString::fromStdString(path));
    auto v = a->template view<T>();
    if (!v)
        return QString::fromStdString(v.error().message());
    if (v->size() != want.size() || !std::equal(want.begin(), want.end(), v->data()))
        return QString("%1: values differ").arg(QString::fromStdString(path));
    return {};
}

ShardedDatasetOptions options(const QString &folder, DatasetFormat format, int shards)
{
    ShardedDatasetOptions o;
    o.folder = folder.toStdString();
    o.format = format;
    o.shards = shards;
    return o;
}

} // namespace

class TestShardWriter : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void tfrecordShardsReadBack_data()
    {
        QTest::addColumn<bool>("gzip");
        QTest::newRow("plain") << false;
        QTest::newRow("GZIP") << true;
    }
    void tfrecordShardsReadBack()
    {
        QFETCH(bool, gzip);
        const auto compression = gzip ? TfRecordWriter::Compression::Gzip : TfRecordWriter::Compression::None;
        QTemporaryDir dir;
        const QString folder = dir.filePath("out/tf"); // created, parents too
        auto o = options(folder, DatasetFormat::TfRecord, 4);
        o.compression = compression;
        auto w = ShardedDatasetWriter::create(o, tfFeatures());
        QVERIFY2(w.ok(), w.ok() ? "" : w.error().message().c_str());
        QCOMPARE(writeInParallel<TfRows>(*w, 50), QString()); // 13, 13, 13, 11 rows
        QVERIFY2(!QFile::exists(folder + "/manifest.json"), "the manifest is written by commit() only");
        QVERIFY(w->commit().ok());

        QCOMPARE(filesIn(folder), (QStringList{"data-00000-of-00004.tfrecord", "data-00001-of-00004.tfrecord", "data-00002-of-00004.tfrecord",
                                               "data-00003-of-00004.tfrecord", "manifest.json"}));
        for (int s = 0; s < 4; ++s) {
            const std::string path = (folder + QString("/data-0000%1-of-00004.tfrecord").arg(s)).toStdString();
            QCOMPARE(TfRecordReader::sniff(path), std::optional(compression));
            QCOMPARE(checkTfShard(path, compression, std::uint64_t(s) * 13, s < 3 ? 13 : 11), QString());
        }
        auto m = readDatasetManifest(folder.toStdString());
        QVERIFY(m.ok());
        QCOMPARE(m->compression, compression);
        QCOMPARE(m->records(), std::uint64_t(50));
        QCOMPARE(m->shards[3].records, std::uint64_t(11));
        QCOMPARE(m->features, tfFeatures());
    }

    void npyShardsReadBack()
    {
        QTemporaryDir dir;
        auto w = ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::Npy, 3), npyFeatures());
        QVERIFY2(w.ok(), w.ok() ? "" : w.error().message().c_str());
        QCOMPARE(writeInParallel<NpyRows>(*w, 20), QString()); // 7, 7, 6 rows
        QVERIFY(w->commit().ok());

        QStringList expected{"manifest.json"};
        for (const char *f : {"m", "x", "y"})
            for (int s = 0; s < 3; ++s)
                expected << QString("%1-0000%2-of-00003.npy").arg(f).arg(s);
        expected.sort();
        QCOMPARE(filesIn(dir.path()), expected);
        for (std::uint64_t s = 0; s < 3; ++s) {
            const std::uint64_t first = s * 7, n = s < 2 ? 7 : 6;
            const NpyRows want(first, n);
            auto path = [&](const char *f) { return dir.filePath(QString("%1-0000%2-of-00003.npy").arg(f).arg(s)).toStdString(); };
            QCOMPARE(checkNpy(path("x"), {n, 3}, want.x), QString());
            QCOMPARE(checkNpy(path("y"), {n}, want.y), QString());
            QCOMPARE(checkNpy(path("m"), {n, 2, 2}, want.m), QString());
        }
    }

    void manifestContent()
    {
        QTemporaryDir dir;
        auto w = ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::TfRecord, 2), tfFeatures());
        QVERIFY(w.ok());
        QCOMPARE(writeInParallel<TfRows>(*w, 5), QString());
        QVERIFY(w->commit().ok());
        const auto j = nlohmann::json::parse(test::readFile(dir.filePath("manifest.json").toStdString()));
        QCOMPARE(j["format"].get<std::string>(), std::string("sluice-dataset"));
        QCOMPARE(j["version"].get<int>(), 1);
        QCOMPARE(j["file_format"].get<std::string>(), std::string("tfrecord"));
        QCOMPARE(j["compression"].get<std::string>(), std::string(""));
        QCOMPARE(j["records"].get<int>(), 5);
        const auto expectedFeatures = nlohmann::json::parse(R"([
            {"name": "x", "dtype": "float32", "shape": [2], "tf_dtype": "float32"},
            {"name": "label", "dtype": "int32", "shape": [], "tf_dtype": "int64"},
            {"name": "name", "dtype": "string", "shape": [], "tf_dtype": "string"},
            {"name": "tokens", "dtype": "int64", "shape": null, "tf_dtype": "int64"}])");
        QCOMPARE(j["features"], expectedFeatures);
        const auto expectedShards = nlohmann::json::parse(R"([
            {"file": "data-00000-of-00002.tfrecord", "records": 3},
            {"file": "data-00001-of-00002.tfrecord", "records": 2}])");
        QCOMPARE(j["shards"], expectedShards);
        // What a reader gets back is what the writer described.
        auto m = readDatasetManifest(dir.path().toStdString());
        QVERIFY(m.ok());
        QCOMPARE(manifestToJson(*m), j);
        QCOMPARE(m->shards, w->manifest().shards);
    }

    void tensorflowReadsTheShardsByTheManifest()
    {
        // The reader of the future, played by TensorFlow: feature specs from the manifest alone.
        if (!test::numpyPython())
            SLUICE_REFERENCE_MISSING("no Python with numpy: the cross-check with TensorFlow is skipped");
        // TensorFlow from the fetched references (scripts/fetch-python-test-deps.sh), beside Debian's numpy.
        const QByteArray pythonPath = qgetenv("PYTHONPATH");
        qputenv("PYTHONPATH", SLUICE_SOURCE_DIR "/.deps/tensorflow" + (pythonPath.isEmpty() ? QByteArray() : ":" + pythonPath));
        const auto restore = qScopeGuard([&] { pythonPath.isEmpty() ? qunsetenv("PYTHONPATH") : qputenv("PYTHONPATH", pythonPath); });
        const auto hasTf = test::runPython("import importlib.util; print(importlib.util.find_spec('tensorflow') is not None)");
        if (!hasTf || hasTf->trimmed() != "True")
            SLUICE_REFERENCE_MISSING("TensorFlow is not installed: the cross-check with TensorFlow is skipped");
        QTemporaryDir dir;
        auto o = options(dir.path(), DatasetFormat::TfRecord, 2);
        o.compression = TfRecordWriter::Compression::Gzip;
        auto w = ShardedDatasetWriter::create(o, tfFeatures());
        QVERIFY(w.ok());
        QCOMPARE(writeInParallel<TfRows>(*w, 7), QString());
        QVERIFY(w->commit().ok());
        const auto out = test::runPython(R"(
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
types = {"float32": tf.float32, "int64": tf.int64, "string": tf.string}
spec = {f["name"]: tf.io.VarLenFeature(types[f["tf_dtype"]]) if f["shape"] is None
        else tf.io.FixedLenFeature(f["shape"], types[f["tf_dtype"]]) for f in m["features"]}
files = [os.path.join(d, s["file"]) for s in m["shards"]]
rows = []
for e in tf.data.TFRecordDataset(files, compression_type=m["compression"]).map(lambda r: tf.io.parse_single_example(r, spec)):
    rows.append("%s|%d|%s|%s" % (e["x"].numpy().tolist(), int(e["label"]), e["name"].numpy().decode(),
                                 tf.sparse.to_dense(e["tokens"]).numpy().tolist()))
print(";".join(rows))
)",
                                         {dir.path()});
        QVERIFY(out.has_value());
        QStringList want;
        for (int r = 0; r < 7; ++r) {
            QStringList tokens;
            for (int k = 0; k < r % 4; ++k)
                tokens << QString::number(r + k);
            want << QString("[%1.0, -%1.0]|%2|row-%1|[%3]").arg(r).arg(r % 7).arg(tokens.join(", "));
        }
        QCOMPARE(out->trimmed(), want.join(";"));
    }

    void numpyReadsTheNpyShards()
    {
        if (!test::numpyPython())
            SLUICE_REFERENCE_MISSING("numpy is not installed: the cross-check with numpy is skipped");
        QTemporaryDir dir;
        auto w = ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::Npy, 2), npyFeatures());
        QVERIFY(w.ok());
        QCOMPARE(writeInParallel<NpyRows>(*w, 5), QString());
        QVERIFY(w->commit().ok());
        const auto out = test::runPython(R"(
import json, os, sys
import numpy as np
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
for f in m["features"]:
    a = np.concatenate([np.load(os.path.join(d, s["files"][f["name"]])) for s in m["shards"]])
    print(f["name"], a.dtype, a.shape, a.reshape(len(a), -1)[:, 0].tolist())
)",
                                         {dir.path()});
        QVERIFY(out.has_value());
        QCOMPARE(out->trimmed(), QString("x float32 (5, 3) [0.0, 1.0, 2.0, 3.0, 4.0]\n"
                                         "y int64 (5,) [0, 1000, 2000, 3000, 4000]\n"
                                         "m uint8 (5, 2, 2) [0, 1, 2, 3, 4]"));
    }

    void npyManifestNamesAFilePerFeature()
    {
        QTemporaryDir dir;
        auto w = ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::Npy, 1), npyFeatures());
        QVERIFY(w.ok());
        QCOMPARE(writeInParallel<NpyRows>(*w, 4), QString());
        QVERIFY(w->commit().ok());
        const auto j = nlohmann::json::parse(test::readFile(dir.filePath("manifest.json").toStdString()));
        QCOMPARE(j["file_format"].get<std::string>(), std::string("npy"));
        QVERIFY(!j.contains("compression"));
        QCOMPARE(j["features"][2], nlohmann::json::parse(R"({"name": "m", "dtype": "uint8", "shape": [2, 2]})"));
        QCOMPARE(j["shards"][0], nlohmann::json::parse(R"({"files": {"x": "x-00000-of-00001.npy", "y": "y-00000-of-00001.npy",
                                                                   "m": "m-00000-of-00001.npy"}, "records": 4})"));
        auto m = readDatasetManifest(dir.path().toStdString());
        QVERIFY(m.ok());
        QCOMPARE(m->shards[0].files, (std::vector<std::string>{"x-00000-of-00001.npy", "y-00000-of-00001.npy", "m-00000-of-00001.npy"}));
    }

    void interruptedWriterLeavesNothing_data()
    {
        QTest::addColumn<bool>("npy");
        QTest::newRow("tfrecord") << false;
        QTest::newRow("npy") << true;
    }
    void interruptedWriterLeavesNothing()
    {
        QFETCH(bool, npy);
        QTemporaryDir dir;
        {
            auto w = npy ? ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::Npy, 3), npyFeatures())
                         : ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::TfRecord, 3), tfFeatures());
            QVERIFY(w.ok());
            if (npy) {
                const NpyRows rows(0, 5);
                QVERIFY(w->shard(0).append(5, rows.columns()).ok());
                QVERIFY(w->shard(1).append(5, rows.columns()).ok());
            } else {
                const TfRows rows(0, 5);
                QVERIFY(w->shard(0).append(5, rows.columns()).ok());
                QVERIFY(w->shard(1).append(5, rows.columns()).ok());
            }
            QVERIFY(w->shard(0).close().ok()); // published under its final name…
            QVERIFY(!filesIn(dir.path()).isEmpty());
        } // …but the dataset was never committed
        QCOMPARE(filesIn(dir.path()), QStringList());
        QCOMPARE(readDatasetManifest(dir.path().toStdString()).error().kind, Error::Kind::NotFound);
    }

    void failedShardWritesNoManifest()
    {
        QTemporaryDir dir;
        auto w = ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::TfRecord, 2), tfFeatures());
        QVERIFY(w.ok());
        const TfRows rows(0, 4);
        QVERIFY(w->shard(0).append(4, rows.columns()).ok());
        QVERIFY(w->shard(1).append(4, rows.columns()).ok());
        // Shard 1's temporary vanishes (as on a file system that failed): it cannot be renamed.
        for (const QString &f : filesIn(dir.path()))
            if (f.startsWith("data-00001-of-00002.tfrecord.partial-"))
                QVERIFY(QFile::remove(dir.filePath(f)));
        const Status s = w->commit();
        QVERIFY(!s.ok());
        QCOMPARE(s.error().kind, Error::Kind::IoError);
        QVERIFY2(QString::fromStdString(s.error().message()).contains("data-00001-of-00002.tfrecord"), s.error().message().c_str());
        QVERIFY(!QFile::exists(dir.filePath("manifest.json")));
        QVERIFY(!w->commit().ok()); // still failed: never a manifest over a missing shard
        auto other = ShardedDatasetWriter::create(options(dir.filePath("other"), DatasetFormat::TfRecord, 1), tfFeatures());
        QVERIFY(other.ok());
        *w = std::move(other).value();
        QCOMPARE(filesIn(dir.path()), QStringList()); // replacing the writer discarded shard 0 as well
    }

    void appendChecksColumnsFirst()
    {
        QTemporaryDir dir;
        auto w = ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::TfRecord, 1), tfFeatures());
        QVERIFY(w.ok());
        ShardWriter &shard = w->shard(0);
        const TfRows rows(0, 3);
        auto reason = [&](std::uint64_t n, std::vector<ColumnRows> columns) {
            const Status s = shard.append(n, columns);
            return s.ok() ? QString("accepted") : QString::fromStdString(s.error().message());
        };
        auto columns = rows.columns();
        QVERIFY(reason(3, {columns.begin(), columns.end() - 1}).contains("3 columns given for 4 features"));
        QVERIFY(reason(2, columns).contains("feature 'x': 6 values given where 2 rows hold 4"));
        auto shortLengths = columns;
        shortLengths[3].rowLengths = shortLengths[3].rowLengths.first(2);
        QVERIFY(reason(3, shortLengths).contains("feature 'tokens': 2 row lengths for 3 rows"));
        auto oddBytes = columns;
        oddBytes[0].data = oddBytes[0].data.first(5);
        QVERIFY(reason(3, oddBytes).contains("not a whole number of float32 values"));
        // Refused appends wrote nothing: the shard goes on.
        QVERIFY(shard.append(3, columns).ok());
        QCOMPARE(shard.rows(), std::uint64_t(3));
        QVERIFY(w->commit().ok());
        QCOMPARE(checkTfShard(dir.filePath("data-00000-of-00001.tfrecord").toStdString(), TfRecordReader::Compression::None, 0, 3), QString());
        QVERIFY(!shard.append(3, columns).ok()); // closed
    }

    void uint64BeyondInt64IsRefused()
    {
        QTemporaryDir dir;
        auto w = ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::TfRecord, 1), {{"u", DType::UInt64, false, {}, false}});
        QVERIFY(w.ok());
        const std::vector<std::uint64_t> ok{1, std::uint64_t(std::numeric_limits<std::int64_t>::max())}, tooBig{2, std::uint64_t(1) << 63};
        const Status s = w->shard(0).append(2, std::vector<ColumnRows>{{std::as_bytes(std::span(tooBig)), {}, {}}});
        QVERIFY(!s.ok());
        QVERIFY(QString::fromStdString(s.error().message()).contains("larger than the largest int64"));
        QVERIFY(w->shard(0).append(2, std::vector<ColumnRows>{{std::as_bytes(std::span(ok)), {}, {}}}).ok());
        QVERIFY(w->commit().ok());
        QCOMPARE(w->manifest().records(), std::uint64_t(2));
    }

    void emptyShardsAreValidFiles()
    {
        QTemporaryDir dir;
        {
            auto w = ShardedDatasetWriter::create(options(dir.filePath("tf"), DatasetFormat::TfRecord, 3), tfFeatures());
            QVERIFY(w.ok());
            const TfRows rows(0, 2);
            QVERIFY(w->shard(1).append(2, rows.columns()).ok());
            QVERIFY(w->commit().ok()); // closes the shards nobody closed, empty ones included
            QCOMPARE(test::readFile(dir.filePath("tf/data-00000-of-00003.tfrecord").toStdString()), std::string());
            QCOMPARE(checkTfShard(dir.filePath("tf/data-00001-of-00003.tfrecord").toStdString(), TfRecordReader::Compression::None, 0, 2), QString());
        }
        auto w = ShardedDatasetWriter::create(options(dir.filePath("npy"), DatasetFormat::Npy, 2), npyFeatures());
        QVERIFY(w.ok());
        QVERIFY(w->commit().ok());
        QCOMPARE(checkNpy(dir.filePath("npy/x-00001-of-00002.npy").toStdString(), {0, 3}, std::vector<float>{}), QString());
        QCOMPARE(readDatasetManifest(dir.filePath("npy").toStdString())->records(), std::uint64_t(0));
    }

    void customPattern()
    {
        QTemporaryDir dir;
        auto o = options(dir.path(), DatasetFormat::TfRecord, 2);
        o.pattern = "part-{index}.tfrecord.gz";
        o.compression = TfRecordWriter::Compression::Gzip;
        auto w = ShardedDatasetWriter::create(o, tfFeatures());
        QVERIFY(w.ok());
        QVERIFY(w->commit().ok());
        QCOMPARE(filesIn(dir.path()), (QStringList{"manifest.json", "part-00000.tfrecord.gz", "part-00001.tfrecord.gz"}));
        QCOMPARE(w->shard(1).files(), std::vector<std::string>{"part-00001.tfrecord.gz"});
    }

    void existingDatasetIsReplacedOnlyWhenAsked()
    {
        QTemporaryDir dir;
        {
            auto w = ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::TfRecord, 4), tfFeatures());
            QVERIFY(w.ok());
            QCOMPARE(writeInParallel<TfRows>(*w, 8), QString());
            QVERIFY(w->commit().ok());
        }
        test::writeFile(dir.filePath("notes.txt").toStdString(), "the user's own file");
        auto refused = ShardedDatasetWriter::create(options(dir.path(), DatasetFormat::TfRecord, 2), tfFeatures());
        QVERIFY(!refused.ok());
        QVERIFY2(QString::fromStdString(refused.error().message()).contains("already holds 'manifest.json'"), refused.error().message().c_str());
        QCOMPARE(filesIn(dir.path()).size(), 6); // untouched

        auto o = options(dir.path(), DatasetFormat::TfRecord, 2);
        o.overwrite = true;
        auto w = ShardedDatasetWriter::create(o, tfFeatures());
        QVERIFY(w.ok());
        QVERIFY2(!QFile::exists(dir.filePath("manifest.json")), "the old manifest goes before anything is rewritten");
        QCOMPARE(writeInParallel<TfRows>(*w, 3), QString());
        QVERIFY(w->commit().ok());
        // The old shards are gone, the user's file is not.
        QCOMPARE(filesIn(dir.path()), (QStringList{"data-00000-of-00002.tfrecord", "data-00001-of-00002.tfrecord", "manifest.json", "notes.txt"}));
        QCOMPARE(readDatasetManifest(dir.path().toStdString())->records(), std::uint64_t(3));
    }

    void badOptionsAreErrors_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<int>("shards");
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("feature"); // an extra feature: "string", "varlen", "dup", "" (none)
        QTest::addColumn<QString>("reason");
        QTest::newRow("no shards") << "tfrecord" << 0 << "" << "" << "at least one is needed";
        QTest::newRow("npy strings") << "npy" << 1 << "" << "string" << "npy shards hold numeric features only";
        QTest::newRow("npy variable length") << "npy" << 1 << "" << "varlen" << "npy shards need a fixed row shape";
        QTest::newRow("same name twice") << "tfrecord" << 1 << "" << "dup" << "feature 'x': given twice";
        QTest::newRow("no index") << "tfrecord" << 2 << "data.tfrecord" << "" << "gives 'data.tfrecord' twice ({index} is needed)";
        QTest::newRow("npy without feature") << "npy" << 2 << "{index}.npy" << "" << "{index} and {feature} are both needed";
        QTest::newRow("unknown placeholder") << "tfrecord" << 1 << "{shard}.tfrecord" << "" << "unknown {shard}";
        QTest::newRow("open brace") << "tfrecord" << 1 << "x{index" << "" << "'{' without its '}'";
        QTest::newRow("subfolder") << "tfrecord" << 1 << "a/{index}" << "" << "not a file name of its own";
        QTest::newRow("manifest name") << "tfrecord" << 1 << "manifest.json" << "" << "not a file name of its own";
    }
    void badOptionsAreErrors()
    {
        QFETCH(QString, format);
        QFETCH(int, shards);
        QFETCH(QString, pattern);
        QFETCH(QString, feature);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        auto o = options(dir.filePath("out"), *parseDatasetFormat(format.toStdString()), shards);
        o.pattern = pattern.toStdString();
        auto features = npyFeatures();
        if (feature == "string")
            features.push_back({"s", DType::UInt8, true, {}, false});
        else if (feature == "varlen")
            features.push_back({"v", DType::Int64, false, {}, true});
        else if (feature == "dup")
            features.push_back({"x", DType::Int64, false, {}, false});
        auto w = ShardedDatasetWriter::create(o, features);
        QVERIFY(!w.ok());
        QVERIFY2(QString::fromStdString(w.error().message()).contains(reason), w.error().message().c_str());
        QVERIFY2(!QFile::exists(dir.filePath("out")), "nothing touches the disk before the options are checked");
    }

    void folderThatCannotBeCreated()
    {
        QTemporaryDir dir;
        test::writeFile(dir.filePath("file").toStdString(), "x");
        auto w = ShardedDatasetWriter::create(options(dir.filePath("file/sub"), DatasetFormat::TfRecord, 1), tfFeatures());
        QVERIFY(!w.ok());
        QCOMPARE(w.error().kind, Error::Kind::IoError);
        QCOMPARE(w.error().what, dir.filePath("file/sub").toStdString());
        QVERIFY2(QString::fromStdString(w.error().reason).startsWith("cannot create folder"), w.error().reason.c_str());
    }

    void damagedManifestsAreErrors_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("reason");
        QTest::newRow("not json") << "{" << "not valid JSON";
        QTest::newRow("other format") << R"({"format": "x"})" << "not a dataset manifest";
        QTest::newRow("newer") << R"({"format": "sluice-dataset", "version": 2})" << "newer Sluice";
        QTest::newRow("bad dtype") << R"({"format": "sluice-dataset", "version": 1, "file_format": "npy",
            "features": [{"name": "x", "dtype": "complex64", "shape": []}], "shards": []})" << "unknown dtype 'complex64'";
        QTest::newRow("file outside") << R"({"format": "sluice-dataset", "version": 1, "file_format": "tfrecord",
            "features": [{"name": "x", "dtype": "int64", "shape": []}], "shards": [{"file": "../x", "records": 1}]})"
                                      << "not a file name in the dataset's folder";
        QTest::newRow("missing npy file") << R"({"format": "sluice-dataset", "version": 1, "file_format": "npy",
            "features": [{"name": "x", "dtype": "int64", "shape": []}], "shards": [{"files": {}, "records": 1}]})"
                                          << "no file for feature 'x'";
        QTest::newRow("records disagree") << R"({"format": "sluice-dataset", "version": 1, "file_format": "tfrecord",
            "features": [], "shards": [{"file": "a", "records": 1}], "records": 2})" << "not the sum";
    }
    void damagedManifestsAreErrors()
    {
        QFETCH(QString, json);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        test::writeFile(dir.filePath("manifest.json").toStdString(), json.toStdString());
        auto m = readDatasetManifest(dir.path().toStdString());
        QVERIFY(!m.ok());
        QVERIFY2(QString::fromStdString(m.error().message()).contains(reason), m.error().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestShardWriter)
#include "tst_shard_writer.moc"
