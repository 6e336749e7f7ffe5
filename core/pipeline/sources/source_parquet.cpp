// from_parquet: rows of Apache Parquet files (pandas' to_parquet, pyarrow, Spark), selected
// columns as features: numbers and booleans as scalars, strings, lists of numbers of one length
// as vectors. Each row group is decoded as one chunk of columns (row_chunks.h), several at once
// on the arena's tasks, and its rows handed out in file order: the same rows in the same order
// on any number of threads. Only the row groups in flight are in memory, so files larger than
// RAM stream through.
#include "pipeline/sources/parquet_file.h"
#include "pipeline/sources/source_files.h"

#include "pipeline/engine/async_stage.h"
#include "pipeline/sources/row_chunks.h"

#include <algorithm>
#include <mutex>

namespace sluice::pipeline {
namespace {

struct ParquetConfig
{
    std::vector<std::string> columnNames; // the features, in order
    std::vector<ParquetDefault> defaults;
};

// The files, opened once each (their footers parsed) when the pass first reaches them, and
// checked to have the first file's columns.
class ParquetFiles
{
public:
    ParquetFiles(std::vector<std::string> paths, std::shared_ptr<const ParquetFile> first, const ElementSpec &spec,
                 const ParquetConfig &config)
        : m_paths(std::move(paths)), m_opened(m_paths.size()), m_spec(spec), m_config(config)
    {
        auto indices = indicesOf(*first);
        m_opened[0] = {std::move(first), std::move(indices)};
    }

    std::size_t size() const { return m_paths.size(); }

    struct Opened
    {
        std::shared_ptr<const ParquetFile> file;
        std::vector<std::size_t> columns; // the features' indices among the file's columns
    };

    Result<Opened> at(std::size_t i) const
    {
        {
            std::lock_guard lock(m_mutex);
            if (m_opened[i].file)
                return m_opened[i];
        }
        auto file = ParquetFile::open(m_paths[i]);
        if (!file.ok())
            return file.error();
        if (auto mismatch = checkColumns(**file); !mismatch.empty())
            return Error::corrupt(m_paths[i], mismatch);
        std::lock_guard lock(m_mutex);
        m_opened[i] = {*file, indicesOf(**file)};
        return m_opened[i];
    }

private:
    std::vector<std::size_t> indicesOf(const ParquetFile &file) const
    {
        std::vector<std::size_t> indices;
        for (const auto &name : m_config.columnNames)
            for (std::size_t c = 0; c < file.columns().size(); ++c)
                if (file.columns()[c].name == name)
                    indices.push_back(c);
        return indices;
    }

    // Empty when `file` has every feature's column with the same type (lists: checked per row).
    std::string checkColumns(const ParquetFile &file) const
    {
        for (const auto &feature : m_spec.features) {
            auto it = std::find_if(file.columns().begin(), file.columns().end(),
                                   [&](const ParquetColumn &c) { return c.name == feature.name; });
            if (it == file.columns().end())
                return "has no column \"" + feature.name + "\" (the first file has it)";
            // Lists of any length fit a list feature (each row's length is checked as it is read).
            const bool sameShape = it->isList ? feature.shape.size() == 1 : it->rowShape == feature.shape;
            if (!it->type || !(*it->type == feature.type) || !sameShape)
                return "column \"" + feature.name + "\" is " + it->parquetType + ", not " + feature.type.name() + " " +
                       shapeText(feature.shape) + " as in the first file";
        }
        return {};
    }

    std::vector<std::string> m_paths;
    mutable std::vector<Opened> m_opened;
    mutable std::mutex m_mutex;
    const ElementSpec &m_spec;
    const ParquetConfig &m_config;
};

// Work items: (file index, row group) as two int64 scalars, every row group of every file in order.
class RowGroupPlan final : public Iterator
{
public:
    explicit RowGroupPlan(const ParquetFiles &files) : m_files(files) {}

    Result<Poll> next(Element &out) override
    {
        while (m_file < m_files.size()) {
            auto opened = m_files.at(m_file);
            if (!opened.ok())
                return opened.error();
            if (m_group < opened->file->rowGroups()) {
                out.tensors = {Tensor::scalar<std::int64_t>(std::int64_t(m_file)), Tensor::scalar<std::int64_t>(m_group++)};
                return Poll::Ready;
            }
            ++m_file;
            m_group = 0;
        }
        return Poll::End;
    }

private:
    const ParquetFiles &m_files;
    std::size_t m_file = 0;
    int m_group = 0;
};

Result<Element> readChunk(const ParquetFiles &files, const ElementSpec &spec, const ParquetConfig &config, const Element &item)
{
    auto opened = files.at(std::size_t(*item.tensors[0].as<std::int64_t>()));
    if (!opened.ok())
        return opened.error();
    return opened->file->readRowGroup(int(*item.tensors[1].as<std::int64_t>()), opened->columns, spec, config.defaults);
}

// One thread: the plan's row groups read one after another where the rows are taken.
class SequentialChunks final : public Iterator
{
public:
    SequentialChunks(const ParquetFiles &files, const ElementSpec &spec, const ParquetConfig &config)
        : m_plan(files), m_files(files), m_spec(spec), m_config(config)
    {
    }
    Result<Poll> next(Element &out) override
    {
        Element item;
        auto polled = m_plan.next(item);
        if (!polled.ok() || *polled != Poll::Ready)
            return polled;
        auto chunk = readChunk(m_files, m_spec, m_config, item);
        if (!chunk.ok())
            return chunk.error();
        out = std::move(chunk).value();
        return Poll::Ready;
    }

private:
    RowGroupPlan m_plan;
    const ParquetFiles &m_files;
    const ElementSpec &m_spec;
    const ParquetConfig &m_config;
};

class ParquetDataset final : public Dataset, public ChunkedRows
{
public:
    ParquetDataset(ElementSpec spec, StageStats *stats, std::vector<std::string> paths, std::shared_ptr<const ParquetFile> first,
                   ParquetConfig config, int parallelism)
        : Dataset(std::move(spec), stats), m_config(std::move(config)),
          m_files(std::move(paths), std::move(first), this->spec(), m_config), m_parallelism(parallelism)
    {
    }

    const ChunkedRows *chunkedRows() const override { return this; }

    // The dataset outlives its iterators (the pipeline keeps it), so they may refer to its members.
    std::unique_ptr<Iterator> makeChunkIterator(const IteratorContext &context) const override
    {
        if (m_parallelism <= 1)
            return measureChunks(std::make_unique<SequentialChunks>(m_files, spec(), m_config), stats());
        const ParquetFiles &files = m_files;
        const ElementSpec &rowSpec = spec();
        const ParquetConfig &config = m_config;
        return AsyncStage::start(
            context, [&files](const IteratorContext &) { return std::make_unique<RowGroupPlan>(files); },
            [&files, &rowSpec, &config](Element &&item, std::uint64_t) { return readChunk(files, rowSpec, config, item); },
            AsyncOptions{m_parallelism, m_parallelism + 1, true}, stats());
    }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        return rowsOfChunks(makeChunkIterator(context), spec());
    }

private:
    ParquetConfig m_config;
    ParquetFiles m_files;
    int m_parallelism;
};

// The features: the columns named in "columns" (each must be readable), or every readable one.
ElementSpec featuresOf(Params &params, const ParquetFile &file, ParquetConfig &config)
{
    std::vector<std::string> names;
    if (params.has("columns")) {
        names = params.strings("columns", std::nullopt);
        if (names.empty())
            params.fail("columns", "must name at least one column");
    } else {
        for (const auto &c : file.columns())
            if (c.type)
                names.push_back(c.name);
        if (names.empty())
            params.fail("filenames", file.path() + ": no column Sluice can read (numbers, booleans, strings, lists of numbers)");
    }
    ElementSpec spec;
    for (const auto &name : names) {
        const std::string param = "columns";
        auto it = std::find_if(file.columns().begin(), file.columns().end(), [&](const ParquetColumn &c) { return c.name == name; });
        if (it == file.columns().end()) {
            std::string known;
            for (const auto &c : file.columns())
                known += (known.empty() ? "" : ", ") + c.name;
            params.fail(param, file.path() + " has no column \"" + name + "\" (it has: " + known + ")");
        }
        if (!it->type)
            params.fail(param, file.path() + ": column \"" + name + "\": " + it->unsupportedReason);
        if (spec.find(name))
            params.fail(param, "names \"" + name + "\" twice");
        Shape shape = it->rowShape;
        if (it->isList) {
            auto length = file.listLength(std::size_t(it - file.columns().begin()));
            if (!length.ok())
                params.fail(param, length.error().message());
            shape = {*length};
        }
        spec.features.push_back({name, *it->type, shape});
        config.columnNames.push_back(name);
    }
    return spec;
}

// An integer column's default, exactly, within the column's range.
std::int64_t integerDefault(Params &params, const std::string &param, DType dtype, const nlohmann::json &value)
{
    const bool isUnsigned = !isSignedInteger(dtype);
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t(INT64_MAX)) {
        if (dtype != DType::UInt64)
            params.fail(param, value.dump() + " does not fit in " + std::string(dtypeName(dtype)));
        return std::int64_t(value.get<std::uint64_t>()); // the same bits as the uint64 value
    }
    const std::int64_t v = value.get<std::int64_t>();
    const int bits = int(itemSize(dtype)) * 8;
    const std::int64_t lo = isUnsigned ? 0 : bits == 64 ? INT64_MIN : -(std::int64_t(1) << (bits - 1));
    const std::int64_t hi = bits == 64 ? INT64_MAX : isUnsigned ? (std::int64_t(1) << bits) - 1 : (std::int64_t(1) << (bits - 1)) - 1;
    if (v < lo || v > hi)
        params.fail(param, value.dump() + " does not fit in " + std::string(dtypeName(dtype)));
    return v;
}

void readDefaults(Params &params, const ElementSpec &spec, ParquetConfig &config)
{
    config.defaults.assign(spec.features.size(), {});
    const nlohmann::json *defaults = params.raw("column_defaults");
    if (!defaults)
        return;
    if (!defaults->is_object())
        params.fail("column_defaults", "must be an object: column name → value that a null becomes");
    for (const auto &[name, value] : defaults->items()) {
        auto index = spec.find(name);
        if (!index)
            params.fail("column_defaults." + name, "names no column that is read");
        const auto &feature = spec.features[*index];
        if (!feature.shape.empty())
            params.fail("column_defaults." + name, "a list column has no default: a null list is an error");
        auto &d = config.defaults[*index];
        d.present = true;
        if (feature.type.isString && value.is_string())
            d.text = value.get<std::string>();
        else if (feature.type.dtype == DType::Bool && value.is_boolean())
            d.number = value.get<bool>() ? 1 : 0;
        else if (!feature.type.isString && feature.type.dtype != DType::Bool && isFloating(feature.type.dtype) && value.is_number())
            d.number = value.get<double>();
        else if (!feature.type.isString && feature.type.dtype != DType::Bool && !isFloating(feature.type.dtype) && value.is_number_integer())
            d.integer = integerDefault(params, "column_defaults." + name, feature.type.dtype, value);
        else
            params.fail("column_defaults." + name, "must be a " + feature.type.name() + " value, got " + value.dump());
    }
}

std::shared_ptr<Dataset> buildFromParquet(BuildContext &context, Params &params, const Inputs &)
{
    const nlohmann::json *names = params.raw("filenames");
    if (!names)
        params.fail("filenames", "missing (this parameter is required)");
    auto paths = filesInScope(context, params, expandSourceFiles(context, params, "filenames", *names));
    const std::int64_t parallel = params.autotunable("num_parallel_calls", kAutotune);
    // The first file's columns are the features; a typo or an unreadable column is a build error.
    auto first = ParquetFile::open(paths.front());
    if (!first.ok())
        params.fail("filenames", first.error().message());
    ParquetConfig config;
    ElementSpec spec = featuresOf(params, **first, config);
    readDefaults(params, spec, config);
    StageStats *stats = context.statsFor(params.node());
    const int parallelism = parallel == kAutotune ? context.threads() : int(std::min<std::int64_t>(parallel, 1024));
    stats->async = parallelism > 1;
    return std::make_shared<ParquetDataset>(std::move(spec), stats, std::move(paths), std::move(first).value(), std::move(config),
                                            parallelism);
}

} // namespace

void registerParquetSource(std::vector<OpInfo> &ops)
{
    ops.push_back({"from_parquet", "sources",
                   "Rows of Apache Parquet files (pandas to_parquet, pyarrow, Spark), columns as features: numbers, booleans and "
                   "strings as scalars, lists of numbers of one length as vectors (tfio.IODataset.from_parquet; "
                   "pyarrow.parquet.ParquetFile.iter_batches). Row groups are decoded in parallel and stream from disk.",
                   {{"filenames", "path|glob|list", "", "Parquet files, read one after another (all with the first file's columns)", true},
                    {"columns", "string|list", "all", "the columns to read, by name (absent: every column Sluice can read)"},
                    {"column_defaults", "object", "", "column name → value a null becomes (absent: a null is an error)"},
                    {"num_parallel_calls", "int|AUTOTUNE", "AUTOTUNE",
                     "row groups decoded at once; the rows keep their order (1: one thread)"}},
                   0, 0, buildFromParquet});
}

} // namespace sluice::pipeline
