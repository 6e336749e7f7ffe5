// from_parquet against files that pyarrow and pandas wrote (tests/data/parquet, written by
// make_parquet_fixtures.py): every column type compared byte for byte with what numpy wrote from
// the same values; column selection, nulls and column_defaults, several files, the same rows on
// any number of threads, and damaged files, which must end in an error naming the file and never
// in a crash (the suite runs under ASan/UBSan).
#include "io/formats/npy_file.h"
#include "pipeline/sources/parquet_file.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"
#include "support/reference.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstring>
#include <optional>

using namespace sluice;
using namespace sluice::test;
using nlohmann::json;

namespace {

std::string parquetData(const std::string &name) { return dataFile("parquet/" + name); }

// The column order of mixed.parquet (and the other mixed_* files); pandas' file has no lists.
const char *const kMixedSpec = "{i32: int32 (), i64: int64 (), f32: float32 (), f64: float64 (), flag: bool (), u8: uint8 (), "
                               "name: string (), vec: float32 (3,), pair: float32 (2,)}";
const char *const kPandasSpec = "{i32: int32 (), i64: int64 (), f32: float32 (), f64: float64 (), flag: bool (), u8: uint8 (), "
                                "name: string ()}";
const std::vector<std::string> kMixedNumeric{"i32", "i64", "f32", "f64", "flag", "u8", "vec", "pair"};

// One pass of a pipeline with every feature kept (Pass keeps the values of one): what it built
// to, its elements, and the error that ended it.
struct Read
{
    bool built = false;
    pipeline::ElementSpec features;
    std::vector<pipeline::Element> elements;
    std::string error; // the build error, or the error that ended the pass ("" at its end)

    bool ok() const { return built && error.empty(); }
    std::string spec() const { return built ? features.text() : "(did not build: " + error + ")"; }
    std::size_t rows() const { return elements.size(); }
    std::optional<std::size_t> index(const std::string &feature) const { return features.find(feature); }

    // Every element's bytes of a numeric feature, one element after another (C order).
    std::string bytes(const std::string &feature) const
    {
        auto k = index(feature);
        if (!k)
            return "<no feature " + feature + ">";
        std::string out;
        for (const auto &e : elements)
            out.append(reinterpret_cast<const char *>(e.tensors.at(*k).data()), e.tensors.at(*k).nbytes());
        return out;
    }
    // Every element's strings of a string feature, one element after another.
    std::vector<std::string> strings(const std::string &feature) const
    {
        std::vector<std::string> out;
        if (auto k = index(feature))
            for (const auto &e : elements)
                for (const auto &s : e.tensors.at(*k).stringValues())
                    out.push_back(s);
        return out;
    }
    // Each element's shape of `feature` (batches: their leading dimension first).
    std::vector<pipeline::Shape> shapes(const std::string &feature) const
    {
        std::vector<pipeline::Shape> out;
        if (auto k = index(feature))
            for (const auto &e : elements)
                out.push_back(e.tensors.at(*k).shape());
        return out;
    }
    template <typename T> std::vector<T> values(const std::string &feature) const
    {
        const std::string b = bytes(feature);
        std::vector<T> out(b.size() / sizeof(T));
        std::memcpy(out.data(), b.data(), out.size() * sizeof(T));
        return out;
    }
};

// Builds from_parquet with `params` (paths relative to `folder`), optionally followed by a batch
// node with `batch` as its parameters, and reads one pass. `threads` is the arena's size, so
// that num_parallel_calls > 1 has more than one thread to run on whatever machine runs this.
Read readParquet(const json &params, const std::string &folder = "/", int threads = 2, const std::optional<json> &batch = {})
{
    std::vector<std::string> nodes{op("src", "from_parquet", params)};
    if (batch)
        nodes.push_back(op("batch", "batch", *batch));
    pipeline::PipelineOptions options;
    options.threads = threads;
    Read r;
    auto p = buildPipeline(chain(nodes), folder, options, &r.error);
    if (!p)
        return r;
    r.built = true;
    r.features = p->elementSpec();
    // The fixtures hold a few dozen rows: far more means a damaged file was read as something
    // else, which is a failure too, not a reason to run forever.
    while (r.elements.size() < 100000) {
        auto next = p->next();
        if (!next.ok()) {
            r.error = next.error().message();
            return r;
        }
        if (!*next)
            return r;
        r.elements.push_back(std::move(**next));
    }
    r.error = "more than 100000 elements";
    return r;
}

// A column as numpy wrote it (parquet/<name>.npy), read through core's .npy reader, which
// tst_npy_file checks against numpy itself.
struct Reference
{
    std::string problem; // why it could not be read; empty when it was
    DType dtype = DType::Float32;
    pipeline::Shape rowShape;
    std::uint64_t rows = 0;
    std::string bytes; // C order, native byte order
};

Reference npyReference(const std::string &name)
{
    Reference ref;
    auto array = openNpy(parquetData(name + ".npy"));
    if (!array.ok()) {
        ref.problem = "reference " + name + ".npy: " + array.error().message();
        return ref;
    }
    const NdArray native = array->toNative();
    ref.dtype = native.dtype();
    for (auto d : native.rowShape())
        ref.rowShape.push_back(std::int64_t(d));
    ref.rows = native.rowCount();
    ref.bytes.assign(reinterpret_cast<const char *>(native.data().data()), native.data().size());
    return ref;
}

json jsonReference(const std::string &name) { return json::parse(readFile(parquetData(name + ".json"))); }

// Empty when feature `feature` of `read`, one row per element, holds exactly what numpy wrote to
// parquet/<npy>.npy (its first `rows` rows, or all of them): dtype, row shape, row count and
// every byte (so -0.0, subnormals, infinities and 64-bit integers count); otherwise what differs.
std::string sameAsNpy(const Read &read, const std::string &feature, const std::string &npy, std::optional<std::uint64_t> rows = {})
{
    const Reference ref = npyReference(npy);
    if (!ref.problem.empty())
        return ref.problem;
    const auto k = read.index(feature);
    if (!k)
        return "no feature \"" + feature + "\" in " + read.spec();
    const auto &spec = read.features.features[*k];
    const pipeline::ValueType want{ref.dtype, false};
    if (!(spec.type == want) || spec.shape != ref.rowShape)
        return feature + " is " + spec.type.name() + " " + pipeline::shapeText(spec.shape) + ", numpy has " + want.name() + " " +
               pipeline::shapeText(ref.rowShape);
    const std::uint64_t n = rows.value_or(ref.rows);
    if (read.rows() != n)
        return feature + ": " + std::to_string(read.rows()) + " rows, expected " + std::to_string(n) + " (" + read.error + ")";
    const std::size_t rowBytes = ref.rows ? ref.bytes.size() / ref.rows : 0;
    for (std::size_t i = 0; i < read.rows(); ++i) {
        const auto &t = read.elements[i].tensors[*k];
        if (!(t.type() == want) || t.shape() != ref.rowShape)
            return feature + ", row " + std::to_string(i) + ": a tensor of " + t.type().name() + " " + pipeline::shapeText(t.shape());
        if (t.nbytes() != rowBytes || std::memcmp(t.data(), ref.bytes.data() + i * rowBytes, rowBytes) != 0) {
            std::string got, expected;
            for (std::uint64_t v = 0; v < t.count(); ++v)
                got += (v ? ", " : "") + std::to_string(t.valueAsDouble(v));
            return feature + ", row " + std::to_string(i) + " differs from " + npy + ".npy (read: " + got + ")";
        }
    }
    return {};
}

// The rows of `bytes` (`rows` rows of one size) in reverse order.
std::string reversedRows(const std::string &bytes, std::size_t rows)
{
    const std::size_t size = bytes.size() / rows;
    std::string out;
    for (std::size_t i = rows; i-- > 0;)
        out += bytes.substr(i * size, size);
    return out;
}

template <typename T> std::vector<T> reversed(std::vector<T> v)
{
    std::reverse(v.begin(), v.end());
    return v;
}

// Copies fixtures into `dir`: {name in dir, fixture}.
bool copyFixtures(const QTemporaryDir &dir, const std::vector<std::pair<std::string, std::string>> &copies)
{
    for (const auto &[to, from] : copies)
        if (!QFile::copy(QString::fromStdString(parquetData(from)), dir.filePath(QString::fromStdString(to))))
            return false;
    return true;
}

// Builds and reads `path` with one thread and with several; every error must name the file (the
// part of the path after the folder, since messages may shorten it). Empty when it does, or what
// went wrong. `mustFail`: the file is damaged where no reader can miss it.
std::string damagedFileMessage(const std::string &folder, const std::string &name, bool mustFail)
{
    for (const json &parallel : {json(1), json("AUTOTUNE")}) {
        const Read r = readParquet({{"filenames", name}, {"num_parallel_calls", parallel}}, folder);
        if (r.ok() && mustFail)
            return name + ": read " + std::to_string(r.rows()) + " rows without an error";
        if (!r.ok() && !contains(r.error, name))
            return name + ": the error does not name the file: " + r.error;
    }
    return {};
}

} // namespace

class TestParquetSource : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Before every test: a build without Arrow skips them all, saying so; CI builds always fetch
    // Arrow (scripts/fetch-arrow.sh), so there a build without it fails instead of passing green.
    void init()
    {
        if (pipeline::ParquetFile::available())
            return;
        if (qEnvironmentVariable("CI") == QLatin1String("true"))
            QFAIL("this build has no Parquet support, and CI builds must have it (scripts/fetch-arrow.sh)");
        SLUICE_REFERENCE_MISSING("this build has no Parquet support");
    }

    // The same table written plain, with ZSTD + dictionaries + data pages v2, with GZIP and no
    // dictionaries, and by pandas: every column exactly as numpy has it, 10 rows in file order
    // across the 3 row groups (4, 4, 2).
    void readsEveryColumnType_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("spec");
        QTest::newRow("plain") << "mixed.parquet" << kMixedSpec;
        QTest::newRow("zstd, dictionary, v2 pages") << "mixed_zstd.parquet" << kMixedSpec;
        QTest::newRow("gzip, no dictionary") << "mixed_gzip.parquet" << kMixedSpec;
        QTest::newRow("pandas") << "mixed_pandas.parquet" << kPandasSpec; // large_string for its strings
    }
    void readsEveryColumnType()
    {
        QFETCH(QString, file);
        QFETCH(QString, spec);
        const std::string path = parquetData(file.toStdString());

        auto opened = pipeline::ParquetFile::open(path);
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().message().c_str());
        QCOMPARE((*opened)->rowGroups(), 3);
        QCOMPARE((*opened)->rows(), std::int64_t(10));
        QCOMPARE((*opened)->rowGroupRows(0), std::int64_t(4));
        QCOMPARE((*opened)->rowGroupRows(2), std::int64_t(2));

        const Read r = readParquet({{"filenames", path}});
        QVERIFY2(r.ok(), r.error.c_str());
        QCOMPARE(QString::fromStdString(r.spec()), spec);
        QCOMPARE(r.rows(), std::size_t(10));
        for (const auto &column : kMixedNumeric) {
            if ((column == "vec" || column == "pair") && file == QLatin1String("mixed_pandas.parquet"))
                continue;
            const std::string diff = sameAsNpy(r, column, "mixed_" + column);
            QVERIFY2(diff.empty(), diff.c_str());
        }
        QCOMPARE(r.strings("name"), jsonReference("mixed_name").get<std::vector<std::string>>());
        for (const auto &shape : r.shapes("name"))
            QCOMPARE(shape, pipeline::Shape{});
    }

    // int8 to uint64 at their extremes, float16, large_string, binary (bytes that are not UTF-8,
    // zeros among them) and large_list.
    void readsOtherWidthsAndLargeTypes()
    {
        const Read r = readParquet({{"filenames", parquetData("more_types.parquet")}});
        QVERIFY2(r.ok(), r.error.c_str());
        QCOMPARE(r.spec(), std::string("{i8: int8 (), i16: int16 (), u16: uint16 (), u32: uint32 (), u64: uint64 (), f16: float16 (), "
                                       "lstr: string (), bin: string (), llist: float64 (2,)}"));
        for (const std::string column : {"i8", "i16", "u16", "u32", "u64", "f16", "llist"}) {
            const std::string diff = sameAsNpy(r, column, "more_types_" + column);
            QVERIFY2(diff.empty(), diff.c_str());
        }
        QCOMPARE(r.strings("lstr"), jsonReference("more_types_lstr").get<std::vector<std::string>>());
        std::vector<std::string> binary;
        for (const auto &bytes : jsonReference("more_types_bin")) {
            binary.emplace_back();
            for (const auto &b : bytes)
                binary.back().push_back(char(b.get<int>()));
        }
        QCOMPARE(r.strings("bin"), binary);
    }

    // Row groups decoded one at a time or several at once: the same rows in the same order, over
    // three files (9 row groups of two sizes, one file backwards).
    void sameRowsOnAnyNumberOfThreads()
    {
        QTemporaryDir dir;
        QVERIFY(copyFixtures(dir, {{"part-0.parquet", "mixed.parquet"}, {"part-1.parquet", "mixed_zstd.parquet"},
                                   {"part-2.parquet", "mixed_reversed.parquet"}}));
        const std::string d = dir.path().toStdString();
        auto readAll = [&](const json &parallel) { return readParquet({{"filenames", "part-*.parquet"}, {"num_parallel_calls", parallel}}, d); };
        const Read one = readAll(1);
        QVERIFY2(one.ok(), one.error.c_str());
        QCOMPARE(one.rows(), std::size_t(30));
        for (const auto &column : kMixedNumeric) {
            const std::string ref = npyReference("mixed_" + column).bytes;
            QVERIFY2(one.bytes(column) == ref + ref + reversedRows(ref, 10), column.c_str());
        }
        const auto names = jsonReference("mixed_name").get<std::vector<std::string>>();
        auto threeFiles = names;
        threeFiles.insert(threeFiles.end(), names.begin(), names.end());
        const auto backwards = reversed(names);
        threeFiles.insert(threeFiles.end(), backwards.begin(), backwards.end());
        QCOMPARE(one.strings("name"), threeFiles);

        for (const json &parallel : {json("AUTOTUNE"), json(3), json(16)}) {
            const Read many = readAll(parallel);
            QVERIFY2(many.ok(), many.error.c_str());
            QCOMPARE(many.spec(), one.spec());
            QCOMPARE(many.rows(), one.rows());
            for (const auto &column : kMixedNumeric)
                QVERIFY2(many.bytes(column) == one.bytes(column), (column + " with num_parallel_calls " + parallel.dump()).c_str());
            QCOMPARE(many.strings("name"), one.strings("name"));
        }
    }

    // batch right after from_parquet cuts its batches from the decoded row groups (no element per
    // row): the same batches as one thread gives, across row-group boundaries (groups of 4, 4, 2;
    // batches of 3), with and without the last partial batch.
    void batchAfterSourceCutsTheSameBatches()
    {
        const auto names = jsonReference("mixed_name").get<std::vector<std::string>>();
        for (bool drop : {false, true}) {
            const json batch{{"batch_size", 3}, {"drop_remainder", drop}};
            auto batched = [&](const json &parallel) {
                return readParquet({{"filenames", parquetData("mixed.parquet")}, {"num_parallel_calls", parallel}}, "/", 2, batch);
            };
            const Read one = batched(1);
            QVERIFY2(one.ok(), one.error.c_str());
            const std::size_t rows = drop ? 9 : 10;
            std::vector<pipeline::Shape> vecShapes{{3, 3}, {3, 3}, {3, 3}};
            if (!drop)
                vecShapes.push_back({1, 3});
            QCOMPARE(one.shapes("vec"), vecShapes);
            for (const auto &column : kMixedNumeric) {
                const std::string ref = npyReference("mixed_" + column).bytes;
                QVERIFY2(one.bytes(column) == ref.substr(0, ref.size() / 10 * rows), column.c_str());
            }
            QCOMPARE(one.strings("name"), std::vector<std::string>(names.begin(), names.begin() + std::ptrdiff_t(rows)));

            for (const json &parallel : {json("AUTOTUNE"), json(3)}) {
                const Read many = batched(parallel);
                QVERIFY2(many.ok(), many.error.c_str());
                QCOMPARE(many.rows(), one.rows());
                for (const auto &column : kMixedNumeric) {
                    QCOMPARE(many.shapes(column), one.shapes(column));
                    QVERIFY2(many.bytes(column) == one.bytes(column), column.c_str());
                }
                QCOMPARE(many.shapes("name"), one.shapes("name"));
                QCOMPARE(many.strings("name"), one.strings("name"));
            }
        }
    }

    // "columns": the features in the order named, one name as a string; a name the file lacks is
    // a build error that quotes it and lists what the file has.
    void columnsSelectAndOrder()
    {
        const std::string path = parquetData("mixed.parquet");
        const Read picked = readParquet({{"filenames", path}, {"columns", {"pair", "name", "i32"}}});
        QVERIFY2(picked.ok(), picked.error.c_str());
        QCOMPARE(picked.spec(), std::string("{pair: float32 (2,), name: string (), i32: int32 ()}"));
        for (const std::string column : {"pair", "i32"}) {
            const std::string diff = sameAsNpy(picked, column, "mixed_" + column);
            QVERIFY2(diff.empty(), diff.c_str());
        }
        QCOMPARE(picked.strings("name"), jsonReference("mixed_name").get<std::vector<std::string>>());
        QCOMPARE(picked.elements.at(0).tensors.size(), std::size_t(3));

        const Read single = readParquet({{"filenames", path}, {"columns", "f64"}});
        QVERIFY2(single.ok(), single.error.c_str());
        QCOMPARE(single.spec(), std::string("{f64: float64 ()}"));
        const std::string diff = sameAsNpy(single, "f64", "mixed_f64");
        QVERIFY2(diff.empty(), diff.c_str());

        const std::string missing = buildError(chain({op("src", "from_parquet", {{"filenames", path}, {"columns", {"i32", "nope"}}})}));
        QVERIFY2(contains(missing, "\"nope\"") && contains(missing, "mixed.parquet") && contains(missing, "columns") &&
                     contains(missing, "i32, i64, f32, f64, flag, u8, name, vec, pair"),
                 missing.c_str());
    }

    // Parameters that cannot work are build errors naming the parameter.
    void badParametersAreBuildErrors()
    {
        const std::string path = parquetData("mixed.parquet");
        auto errorOf = [](const json &params) { return buildError(chain({op("src", "from_parquet", params)})); };
        const std::string noFiles = errorOf(json::object());
        QVERIFY2(contains(noFiles, "filenames"), noFiles.c_str());
        const std::string twice = errorOf({{"filenames", path}, {"columns", {"i32", "f32", "i32"}}});
        QVERIFY2(contains(twice, "columns") && contains(twice, "\"i32\" twice"), twice.c_str());
        const std::string none = errorOf({{"filenames", path}, {"columns", json::array()}});
        QVERIFY2(contains(none, "columns"), none.c_str());
        const std::string notNames = errorOf({{"filenames", path}, {"columns", {1, 2}}});
        QVERIFY2(contains(notNames, "columns"), notNames.c_str());
        const std::string parallel = errorOf({{"filenames", path}, {"num_parallel_calls", "fast"}});
        QVERIFY2(contains(parallel, "num_parallel_calls"), parallel.c_str());
    }

    // Columns Sluice cannot read: named in "columns", a build error naming the column and its
    // type; with "columns" absent, left out.
    void unsupportedColumns()
    {
        const std::string path = parquetData("unsupported.parquet");
        for (const auto &[column, type] : {std::pair{"when", "timestamp"}, std::pair{"pt", "struct"}, std::pair{"tags", "string"}}) {
            const std::string error = buildError(chain({op("src", "from_parquet", {{"filenames", path}, {"columns", {"id", column}}})}));
            QVERIFY2(contains(error, std::string("\"") + column + "\"") && contains(error, type) && contains(error, "unsupported.parquet"),
                     error.c_str());
        }
        const Read r = readParquet({{"filenames", path}});
        QVERIFY2(r.ok(), r.error.c_str());
        QCOMPARE(r.spec(), std::string("{id: int64 ()}"));
        const std::string diff = sameAsNpy(r, "id", "unsupported_id");
        QVERIFY2(diff.empty(), diff.c_str());
    }

    // A null without a default ends the pass at its row, with the file, column and global row
    // (counted from the file's first row, across row groups) in the message, after the rows
    // before it; the same on one thread and several.
    void nullsWithoutDefaultsStopAtTheirRow()
    {
        const std::string path = parquetData("nulls.parquet");
        for (const json &parallel : {json(1), json("AUTOTUNE")}) {
            const Read all = readParquet({{"filenames", path}, {"num_parallel_calls", parallel}});
            QVERIFY(all.built);
            QCOMPARE(all.spec(), std::string("{x: float32 (), s: string (), k: int64 (), v: float32 (2,)}"));
            QVERIFY2(contains(all.error, "nulls.parquet") && contains(all.error, "column \"x\", row 5 is null and has no default in column_defaults"),
                     all.error.c_str());
            for (const std::string column : {"x", "k", "v"}) {
                const std::string diff = sameAsNpy(all, column, "nulls_" + column, 5);
                QVERIFY2(diff.empty(), diff.c_str());
            }
            const auto s = jsonReference("nulls_s");
            std::vector<std::string> firstFive;
            for (int i = 0; i < 5; ++i)
                firstFive.push_back(s.at(i).get<std::string>());
            QCOMPARE(all.strings("s"), firstFive);

            // A null string (row 7, in the second row group) and a null list (row 6).
            const Read strings = readParquet({{"filenames", path}, {"columns", {"s", "k"}}, {"num_parallel_calls", parallel}});
            QVERIFY2(contains(strings.error, "nulls.parquet") && contains(strings.error, "column \"s\", row 7 is null and has no default"),
                     strings.error.c_str());
            QCOMPARE(strings.rows(), std::size_t(7));
            const Read lists = readParquet({{"filenames", path}, {"columns", {"k", "v"}}, {"num_parallel_calls", parallel}});
            QVERIFY2(contains(lists.error, "nulls.parquet") && contains(lists.error, "column \"v\", row 6"), lists.error.c_str());
            const std::string diff = sameAsNpy(lists, "v", "nulls_v", 6);
            QVERIFY2(diff.empty(), diff.c_str());
        }
    }

    // column_defaults: a null of a number or string column becomes its default; a null list has
    // none, so the pass still ends there.
    void nullsTakeTheDefaults()
    {
        const std::string path = parquetData("nulls.parquet");
        const Reference x = npyReference("nulls_x");
        QVERIFY2(x.problem.empty() && x.bytes.size() == sizeof(float) * 10, x.problem.c_str());
        std::vector<float> xs(10);
        std::memcpy(xs.data(), x.bytes.data(), sizeof(float) * 10);
        xs[5] = -1.5f;
        auto s = jsonReference("nulls_s");
        s[7] = "missing";
        const json defaults{{"x", -1.5}, {"s", "missing"}};
        for (const json &parallel : {json(1), json("AUTOTUNE")}) {
            const Read all = readParquet({{"filenames", path}, {"column_defaults", defaults}, {"num_parallel_calls", parallel}});
            QVERIFY2(contains(all.error, "nulls.parquet") && contains(all.error, "column \"v\", row 6"), all.error.c_str());
            QCOMPARE(all.values<float>("x"), std::vector<float>(xs.begin(), xs.begin() + 6));
            const std::string diff = sameAsNpy(all, "k", "nulls_k", 6);
            QVERIFY2(diff.empty(), diff.c_str());

            const Read scalars = readParquet({{"filenames", path}, {"columns", {"x", "s", "k"}}, {"column_defaults", defaults},
                                              {"num_parallel_calls", parallel}});
            QVERIFY2(scalars.ok(), scalars.error.c_str());
            QCOMPARE(scalars.values<float>("x"), xs);
            QCOMPARE(scalars.strings("s"), s.get<std::vector<std::string>>());
            const std::string all10 = sameAsNpy(scalars, "k", "nulls_k");
            QVERIFY2(all10.empty(), all10.c_str());
        }
        // An integer default for a float column is a number like any other.
        const Read whole = readParquet({{"filenames", path}, {"columns", {"x"}}, {"column_defaults", {{"x", 2}}}});
        QVERIFY2(whole.ok(), whole.error.c_str());
        QCOMPARE(whole.values<float>("x").at(5), 2.0f);
    }

    // Defaults that cannot apply are build errors naming column_defaults.<column>.
    void defaultsThatCannotApplyAreBuildErrors()
    {
        const std::string path = parquetData("nulls.parquet");
        auto errorOf = [&](const json &defaults, const json &columns) {
            json params{{"filenames", path}, {"column_defaults", defaults}};
            if (!columns.is_null())
                params["columns"] = columns;
            return buildError(chain({op("src", "from_parquet", params)}));
        };
        for (const auto &[defaults, param] : {std::pair{json{{"v", 0}}, "column_defaults.v"},                    // a list column
                                              std::pair{json{{"v", {0, 0}}}, "column_defaults.v"},               // a list for a list column
                                              std::pair{json{{"x", "zero"}}, "column_defaults.x"},               // text for a number
                                              std::pair{json{{"s", 3}}, "column_defaults.s"},                    // a number for text
                                              std::pair{json{{"k", true}}, "column_defaults.k"},                 // a boolean for an int64
                                              std::pair{json{{"nope", 1}}, "column_defaults.nope"}}) {           // no such column
            const std::string error = errorOf(defaults, nullptr);
            QVERIFY2(contains(error, param), (param + std::string(": ") + error).c_str());
        }
        const std::string notRead = errorOf({{"x", 1}}, {"k"}); // a column the file has but the node does not read
        QVERIFY2(contains(notRead, "column_defaults.x"), notRead.c_str());
        const std::string notObject = errorOf(5, nullptr);
        QVERIFY2(contains(notObject, "column_defaults"), notObject.c_str());
    }

    // List columns take their length from the first row: a row of another length, or holding a
    // null, ends the pass there; a first row without a list is a build error.
    void listsOfAnotherLengthStopThePass()
    {
        const std::string path = parquetData("lists.parquet");
        for (const json &parallel : {json(1), json("AUTOTUNE")}) {
            const Read ragged = readParquet({{"filenames", path}, {"columns", {"id", "ragged"}}, {"num_parallel_calls", parallel}});
            QCOMPARE(ragged.spec(), std::string("{id: int64 (), ragged: int32 (2,)}"));
            QVERIFY2(contains(ragged.error, "lists.parquet") && contains(ragged.error, "column \"ragged\", row 6") &&
                         contains(ragged.error, "not a list of 2"),
                     ragged.error.c_str());
            std::string diff = sameAsNpy(ragged, "ragged", "lists_ragged_head");
            QVERIFY2(diff.empty(), diff.c_str());
            diff = sameAsNpy(ragged, "id", "lists_id", 6);
            QVERIFY2(diff.empty(), diff.c_str());

            const Read holey = readParquet({{"filenames", path}, {"columns", {"id", "holey"}}, {"num_parallel_calls", parallel}});
            QVERIFY2(contains(holey.error, "lists.parquet") && contains(holey.error, "column \"holey\", row 3"), holey.error.c_str());
            diff = sameAsNpy(holey, "holey", "lists_holey_head");
            QVERIFY2(diff.empty(), diff.c_str());
        }
        const std::string firstNull = buildError(chain({op("src", "from_parquet", {{"filenames", path}, {"columns", {"id", "first_null"}}})}));
        QVERIFY2(contains(firstNull, "lists.parquet") && contains(firstNull, "first_null"), firstNull.c_str());
    }

    // Several files: a glob in byte order, a list in its own order, each file's rows in order.
    void severalFilesInOrder()
    {
        QTemporaryDir dir;
        QVERIFY(copyFixtures(dir, {{"part-0.parquet", "mixed.parquet"}, {"part-1.parquet", "mixed_zstd.parquet"},
                                   {"reversed.parquet", "mixed_reversed.parquet"}}));
        const std::string d = dir.path().toStdString();
        const auto names = jsonReference("mixed_name").get<std::vector<std::string>>();

        const Read globbed = readParquet({{"filenames", "part-*.parquet"}}, d);
        QVERIFY2(globbed.ok(), globbed.error.c_str());
        QCOMPARE(globbed.spec(), std::string(kMixedSpec));
        QCOMPARE(globbed.rows(), std::size_t(20));
        for (const auto &column : kMixedNumeric) {
            const std::string ref = npyReference("mixed_" + column).bytes;
            QVERIFY2(globbed.bytes(column) == ref + ref, column.c_str());
        }
        auto twice = names;
        twice.insert(twice.end(), names.begin(), names.end());
        QCOMPARE(globbed.strings("name"), twice);

        const Read listed = readParquet({{"filenames", {"reversed.parquet", "part-0.parquet"}}, {"num_parallel_calls", 3}}, d);
        QVERIFY2(listed.ok(), listed.error.c_str());
        QCOMPARE(listed.rows(), std::size_t(20));
        for (const auto &column : kMixedNumeric) {
            const std::string ref = npyReference("mixed_" + column).bytes;
            QVERIFY2(listed.bytes(column) == reversedRows(ref, 10) + ref, column.c_str());
        }
        auto backThenForth = reversed(names);
        backThenForth.insert(backThenForth.end(), names.begin(), names.end());
        QCOMPARE(listed.strings("name"), backThenForth);
    }

    // A later file without the first file's columns (or with another type) ends the pass where
    // it starts, naming that file and the column, after every row of the files before it.
    void secondFileWithOtherColumnsIsAnError()
    {
        QTemporaryDir dir;
        QVERIFY(copyFixtures(dir, {{"part-0.parquet", "mixed.parquet"}, {"part-1.parquet", "other_columns.parquet"}}));
        const std::string d = dir.path().toStdString();
        for (const json &parallel : {json(1), json(3)}) {
            const Read all = readParquet({{"filenames", "part-*.parquet"}, {"num_parallel_calls", parallel}}, d);
            QVERIFY(all.built);
            QCOMPARE(all.rows(), std::size_t(10));
            QVERIFY2(contains(all.error, "part-1.parquet") && contains(all.error, "\"i32\""), all.error.c_str());
            const Read i64 = readParquet({{"filenames", "part-*.parquet"}, {"columns", {"i64"}}, {"num_parallel_calls", parallel}}, d);
            QCOMPARE(i64.rows(), std::size_t(10));
            QVERIFY2(contains(i64.error, "part-1.parquet") && contains(i64.error, "\"i64\""), i64.error.c_str());
        }
    }

    void emptyFileHasNoRows()
    {
        const Read r = readParquet({{"filenames", parquetData("empty.parquet")}});
        QVERIFY2(r.ok(), r.error.c_str());
        QCOMPARE(r.spec(), std::string("{id: int64 (), name: string ()}"));
        QCOMPARE(r.rows(), std::size_t(0));
    }

    // A file that is not there, a glob that matches nothing, and text with a .parquet name.
    void missingAndNonParquetFiles()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        const Read missing = readParquet({{"filenames", "missing.parquet"}}, d);
        QVERIFY(!missing.built);
        QVERIFY2(contains(missing.error, "missing.parquet"), missing.error.c_str());
        const Read nothing = readParquet({{"filenames", "none-*.parquet"}}, d);
        QVERIFY(!nothing.built);
        QVERIFY2(contains(nothing.error, "none-*.parquet"), nothing.error.c_str());
        writeFile(d + "/notes.parquet", "id,name\n1,alpha\n2,beta\n");
        const std::string text = damagedFileMessage(d, "notes.parquet", true);
        QVERIFY2(text.empty(), text.c_str());
        // A list whose second file is not Parquet: the first file's rows, then the error.
        QVERIFY(copyFixtures(dir, {{"part-0.parquet", "mixed.parquet"}}));
        const Read second = readParquet({{"filenames", {"part-0.parquet", "notes.parquet"}}}, d);
        QCOMPARE(second.rows(), std::size_t(10));
        QVERIFY2(contains(second.error, "notes.parquet"), second.error.c_str());
    }

    // Every way of cutting a Parquet file short loses its footer (the schema and where the row
    // groups are, at the end): an error naming the file, at build, never a crash.
    void truncatedFilesAreErrors()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        const std::string bytes = readFile(parquetData("mixed.parquet"));
        QVERIFY(bytes.size() > 100 && bytes.substr(bytes.size() - 4) == "PAR1");
        // The footer: [thrift metadata][its length, 4 bytes little-endian]["PAR1"].
        std::uint32_t footer = 0;
        std::memcpy(&footer, bytes.data() + bytes.size() - 8, 4);
        QVERIFY(footer + 8 < bytes.size());
        const std::size_t size = bytes.size(), footerStart = size - 8 - footer;
        const std::vector<std::size_t> lengths{0, 1, 3, 4, 7, 8, 100, size / 4, size / 2, 3 * size / 4, // in the pages
                                               footerStart - 1, footerStart, footerStart + 1, footerStart + footer / 2,
                                               size - 9, size - 8, size - 5, size - 4, size - 2, size - 1}; // the footer
        for (std::size_t length : lengths) {
            const std::string name = "cut-" + std::to_string(length) + ".parquet";
            writeFile(d + "/" + name, bytes.substr(0, length));
            const std::string problem = damagedFileMessage(d, name, true);
            QVERIFY2(problem.empty(), problem.c_str());
        }
    }

    // Flipped bytes: in the footer's length or its magic number, always an error; anywhere else
    // (page headers, compressed or plain values, statistics, the schema) an error naming the file
    // or values read without one (a flipped value byte in a plain page is still a value), never
    // a crash.
    void flippedBytesAreErrorsOrValues()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        for (const std::string fixture : {"mixed.parquet", "mixed_zstd.parquet"}) {
            const std::string bytes = readFile(parquetData(fixture));
            const std::size_t size = bytes.size();
            auto flipped = [&](std::size_t at, unsigned char mask, bool mustFail) {
                std::string damaged = bytes;
                damaged[at] = char(static_cast<unsigned char>(damaged[at]) ^ mask);
                const std::string name = "flip-" + std::to_string(at) + "-" + fixture;
                writeFile(d + "/" + name, damaged);
                return damagedFileMessage(d, name, mustFail);
            };
            // The last magic byte, and the top bit of the footer length (a footer longer than the file).
            for (const auto &problem : {flipped(size - 1, 0x01, true), flipped(size - 5, 0x80, true)})
                QVERIFY2(problem.empty(), problem.c_str());
            for (std::size_t i = 0; i < 24; ++i) {
                const std::string problem = flipped(i * (size - 1) / 23, 0x5a, false);
                QVERIFY2(problem.empty(), problem.c_str());
            }
        }
    }

    // The features of a later file are checked for their row shape as well as their type: a
    // scalar where the first file has lists (or lists where it has a scalar) is an error naming
    // that file and the column, not rows read with the first file's shape.
    void secondFileWithOtherRowShapesIsAnError()
    {
        QTemporaryDir dir;
        QVERIFY(copyFixtures(dir, {{"part-0.parquet", "mixed.parquet"}, {"part-1.parquet", "other_shapes.parquet"}}));
        const std::string d = dir.path().toStdString();
        for (const std::string column : {"vec", "f32"}) {
            for (const json &parallel : {json(1), json(3)}) {
                const Read r = readParquet({{"filenames", "part-*.parquet"}, {"columns", {column}}, {"num_parallel_calls", parallel}}, d);
                QVERIFY(r.built);
                QVERIFY2(contains(r.error, "part-1.parquet") && contains(r.error, "\"" + column + "\""),
                         (column + ": " + (r.error.empty() ? "no error, " + std::to_string(r.rows()) + " rows" : r.error)).c_str());
                QCOMPARE(r.rows(), std::size_t(10));
            }
        }
    }

    // Readable columns after a struct: a struct is one column of the schema but a Parquet leaf
    // column per member, so "score" (the fourth field) is the fifth leaf; each feature must be
    // read from its own column.
    void readableColumnsAfterAStruct()
    {
        const std::string path = parquetData("after_struct.parquet");
        const Read all = readParquet({{"filenames", path}});
        QVERIFY2(all.ok(), all.error.c_str());
        QCOMPARE(all.spec(), std::string("{id: int64 (), score: float64 ()}"));
        for (const std::string column : {"id", "score"}) {
            const std::string diff = sameAsNpy(all, column, "after_struct_" + column);
            QVERIFY2(diff.empty(), diff.c_str());
        }
        const Read score = readParquet({{"filenames", path}, {"columns", {"score"}}, {"num_parallel_calls", 3}});
        QVERIFY2(score.ok(), score.error.c_str());
        const std::string diff = sameAsNpy(score, "score", "after_struct_score");
        QVERIFY2(diff.empty(), diff.c_str());
    }
};

QTEST_GUILESS_MAIN(TestParquetSource)
#include "tst_parquet_source.moc"
