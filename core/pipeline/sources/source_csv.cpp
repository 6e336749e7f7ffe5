// from_csv: rows of CSV files of any size (read from the mapping, pages released behind the
// scan), selected columns parsed into scalar features, as tf.data.experimental.CsvDataset /
// make_csv_dataset do.
#include "pipeline/sources/source_files.h"

#include "io/formats/csv_reader.h"
#include "pipeline/engine/async_stage.h"
#include "pipeline/sources/row_chunks.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include <cmath>

namespace sluice::pipeline {
namespace {

struct CsvColumn
{
    std::string name;
    ValueType type;
    std::optional<nlohmann::json> defaultValue;
};

struct CsvConfig
{
    CsvOptions options;
    std::vector<CsvColumn> columns;
    std::string naValue;
};

// A field as a scalar of its column's type; missing fields take the column's default.
Tensor store(DType dtype, double value, std::int64_t exact = 0)
{
    switch (dtype) {
    case DType::Float32: return Tensor::scalar<float>(float(value));
    case DType::Float64: return Tensor::scalar<double>(value);
    case DType::Int32: return Tensor::scalar<std::int32_t>(std::int32_t(exact ? exact : std::int64_t(value)));
    default: return Tensor::scalar<std::int64_t>(exact ? exact : std::int64_t(value));
    }
}

Result<Tensor> parseField(const CsvConfig &config, const CsvReader &reader, const CsvColumn &c, std::string_view field)
{
    const bool missing = field.empty() || (!config.naValue.empty() && field == config.naValue);
    if (c.type.isString)
        return Tensor::strings({}, {missing && c.defaultValue ? c.defaultValue->get<std::string>() : std::string(field)});
    const auto where = [&reader] { return reader.path() + ": line " + std::to_string(reader.line()); };
    if (missing) {
        if (!c.defaultValue)
            return Error::corrupt(where(), "column \"" + c.name + "\" is empty and has no default in column_defaults");
        return store(c.type.dtype, c.defaultValue->get<double>());
    }
    if (isFloating(c.type.dtype)) {
        auto v = parseCsvDouble(field);
        if (!v)
            return Error::corrupt(where(), "column \"" + c.name + "\": \"" + std::string(field) + "\" is not a number");
        return store(c.type.dtype, *v);
    }
    auto v = parseCsvInt(field);
    if (!v)
        return Error::corrupt(where(), "column \"" + c.name + "\": \"" + std::string(field) + "\" is not an integer");
    if (c.type.dtype == DType::Int32 && (*v < INT32_MIN || *v > INT32_MAX))
        return Error::corrupt(where(), "column \"" + c.name + "\": " + std::string(field) + " does not fit in int32");
    return store(c.type.dtype, double(*v), *v);
}

// Opens a file and finds the configured columns in its header.
Result<CsvReader> openCsv(const std::string &path, const CsvConfig &config, std::vector<std::size_t> &indices)
{
    auto reader = CsvReader::open(path, config.options);
    if (!reader.ok())
        return reader.error();
    indices.clear();
    for (const auto &c : config.columns) {
        auto index = reader->columnIndex(c.name);
        if (!index.ok())
            return index.error();
        indices.push_back(*index);
    }
    return reader;
}

class CsvIterator final : public Iterator
{
public:
    CsvIterator(std::vector<std::string> files, const CsvConfig &config) : m_files(std::move(files)), m_config(config) {}

    Result<Poll> next(Element &out) override
    {
        for (;;) {
            if (!m_reader) {
                if (m_file >= m_files.size())
                    return Poll::End;
                auto reader = openCsv(m_files[m_file++], m_config, m_indices);
                if (!reader.ok())
                    return reader.error();
                m_reader.emplace(std::move(reader).value());
            }
            auto row = m_reader->next();
            if (!row.ok())
                return row.error();
            if (!*row) {
                m_reader.reset();
                continue;
            }
            out.tensors.clear();
            for (std::size_t i = 0; i < m_config.columns.size(); ++i) {
                auto t = parseField(m_config, *m_reader, m_config.columns[i], (**row)[m_indices[i]]);
                if (!t.ok())
                    return t.error();
                out.tensors.push_back(std::move(t).value());
            }
            return Poll::Ready;
        }
    }

private:
    std::vector<std::string> m_files;
    std::size_t m_file = 0;
    const CsvConfig &m_config;
    std::optional<CsvReader> m_reader;
    std::vector<std::size_t> m_indices;
};


// Parallel parsing: the files are cut into chunks at line ends outside quotes (a cheap scan
// that only counts quotes and newlines), chunks are parsed on the arena's tasks into columns,
// and the rows are handed out chunk after chunk: the same rows in the same order as one thread.

// Work items: (file index, begin, end, first line) as four int64 scalars.
class CsvChunkPlan final : public Iterator
{
public:
    CsvChunkPlan(const std::vector<std::string> &files, const CsvConfig &config, int parallelism)
        : m_files(files), m_config(config), m_parallelism(parallelism)
    {
    }
    Result<Poll> next(Element &out) override
    {
        while (!m_file || m_pos >= m_file->size()) {
            const std::size_t nextIndex = m_file ? m_index + 1 : 0;
            if (nextIndex >= m_files.size())
                return Poll::End;
            m_index = nextIndex;
            auto reader = CsvReader::open(m_files[m_index], m_config.options); // the header, for where rows begin
            if (!reader.ok())
                return reader.error();
            auto file = MappedFile::open(m_files[m_index]); // the same mapping the reader holds
            if (!file.ok())
                return file.error();
            m_file = std::move(file).value();
            m_pos = reader->dataBegin();
            m_line = reader->dataBeginLine();
            // Chunks of a few MiB: enough to keep every task busy, small enough to start soon.
            m_chunkBytes = std::clamp<std::size_t>(m_file->size() / std::size_t(8 * m_parallelism), 256u << 10, 8u << 20);
        }
        const CsvChunkEnd chunk = nextCsvChunk(m_file->bytes(), m_pos, m_chunkBytes);
        out.tensors.clear();
        for (std::uint64_t v : {std::uint64_t(m_index), std::uint64_t(m_pos), std::uint64_t(chunk.end), m_line})
            out.tensors.push_back(Tensor::scalar<std::int64_t>(std::int64_t(v)));
        m_pos = chunk.end;
        m_line += chunk.lines;
        return Poll::Ready;
    }

private:
    const std::vector<std::string> &m_files;
    const CsvConfig &m_config;
    int m_parallelism;
    std::size_t m_index = 0;
    std::shared_ptr<const MappedFile> m_file;
    std::size_t m_pos = 0, m_chunkBytes = 0;
    std::uint64_t m_line = 1;
};

// Parses one chunk into an element of columns: each feature a 1-d tensor of the chunk's rows.
Result<Element> parseChunk(const std::vector<std::string> &files, const CsvConfig &config, const Element &item)
{
    const auto value = [&item](std::size_t i) { return std::uint64_t(*item.tensors[i].as<std::int64_t>()); };
    std::vector<std::size_t> indices;
    auto reader = openCsv(files.at(value(0)), config, indices);
    if (!reader.ok())
        return reader.error();
    reader->restrict(std::size_t(value(1)), std::size_t(value(2)), value(3));
    std::vector<std::vector<std::byte>> numeric(config.columns.size());
    std::vector<std::vector<std::string>> strings(config.columns.size());
    std::uint64_t rows = 0;
    std::optional<Error> error; // the rows before it are still delivered, as one thread would
    for (std::vector<Tensor> fields; !error;) {
        auto row = reader->next();
        if (!row.ok()) {
            error = row.error();
            break;
        }
        if (!*row)
            break;
        fields.clear();
        for (std::size_t i = 0; i < config.columns.size() && !error; ++i) {
            auto t = parseField(config, *reader, config.columns[i], (**row)[indices[i]]);
            if (t.ok())
                fields.push_back(std::move(t).value());
            else
                error = t.error();
        }
        if (error)
            break;
        for (std::size_t i = 0; i < config.columns.size(); ++i) {
            if (config.columns[i].type.isString)
                strings[i].push_back(fields[i].stringValues().front());
            else
                numeric[i].insert(numeric[i].end(), fields[i].data(), fields[i].data() + fields[i].nbytes());
        }
        ++rows;
    }
    Element chunk;
    for (std::size_t i = 0; i < config.columns.size(); ++i) {
        if (config.columns[i].type.isString) {
            chunk.tensors.push_back(Tensor::strings({std::int64_t(rows)}, std::move(strings[i])));
            continue;
        }
        Tensor t = Tensor::allocate(config.columns[i].type.dtype, {std::int64_t(rows)});
        if (!numeric[i].empty())
            std::memcpy(t.mutableData(), numeric[i].data(), numeric[i].size());
        chunk.tensors.push_back(std::move(t));
    }
    if (error)
        attachChunkError(chunk, *error);
    return chunk;
}

class CsvDataset final : public Dataset, public ChunkedRows
{
public:
    CsvDataset(ElementSpec spec, StageStats *stats, std::vector<std::string> files, CsvConfig config, int parallelism)
        : Dataset(std::move(spec), stats), m_files(std::move(files)), m_config(std::move(config)), m_parallelism(parallelism)
    {
    }

    const ChunkedRows *chunkedRows() const override { return m_parallelism > 1 ? this : nullptr; }

    std::unique_ptr<Iterator> makeChunkIterator(const IteratorContext &context) const override
    {
        const std::vector<std::string> &files = m_files;
        const CsvConfig &config = m_config;
        const int parallelism = m_parallelism;
        // The dataset outlives its iterators (the pipeline keeps it), so the plan and the tasks
        // may refer to its files and configuration.
        return AsyncStage::start(
            context, [&files, &config, parallelism](const IteratorContext &) { return std::make_unique<CsvChunkPlan>(files, config, parallelism); },
            [&files, &config](Element &&item, std::uint64_t) { return parseChunk(files, config, item); },
            AsyncOptions{parallelism, 2 * parallelism, true}, stats());
    }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        if (m_parallelism <= 1)
            return std::make_unique<CsvIterator>(m_files, m_config);
        return rowsOfChunks(makeChunkIterator(context), spec());
    }

private:
    std::vector<std::string> m_files;
    CsvConfig m_config;
    int m_parallelism;
};

std::shared_ptr<Dataset> buildFromCsv(BuildContext &context, Params &params, const Inputs &)
{
    const nlohmann::json *names = params.raw("filenames");
    if (!names)
        params.fail("filenames", "missing (this parameter is required)");
    auto files = filesInScope(context, params, expandSourceFiles(context, params, "filenames", *names));
    CsvConfig config;
    const std::string delim = params.string("field_delim", ",");
    if (delim.size() != 1 || delim == "\"" || delim == "\n")
        params.fail("field_delim", "must be one character other than a quote or newline, got \"" + delim + "\"");
    config.options.delimiter = delim[0];
    config.options.header = params.boolean("header", true);
    config.naValue = params.string("na_value", "");
    const std::int64_t parallel = params.autotunable("num_parallel_calls", kAutotune);
    const nlohmann::json *defaults = params.raw("column_defaults");
    if (defaults && !defaults->is_object())
        params.fail("column_defaults", "must be an object: column name → value used when the field is empty");

    const nlohmann::json *columns = params.raw("columns");
    if (!columns || !(columns->is_object() || columns->is_array()) || columns->empty())
        params.fail("columns", "must list the columns to read: [\"a\", \"b\"] (float32) or {\"a\": \"float32\", \"label\": \"int64\"}");
    auto addColumn = [&](const std::string &name, const std::string &dtype) {
        auto type = valueTypeFromName(dtype);
        if (!type || !(type->isString || type->dtype == DType::Float32 || type->dtype == DType::Float64 ||
                       type->dtype == DType::Int32 || type->dtype == DType::Int64))
            params.fail("columns." + name, "\"" + dtype + "\": CSV columns are float32, float64, int32, int64 or string");
        CsvColumn column{name, *type, std::nullopt};
        if (defaults && defaults->contains(name)) {
            const auto &d = (*defaults)[name];
            if (type->isString ? !d.is_string() : !d.is_number())
                params.fail("column_defaults." + name, "must be a " + type->name() + " value");
            column.defaultValue = d;
        }
        config.columns.push_back(std::move(column));
    };
    if (columns->is_array()) {
        for (const auto &c : *columns) {
            if (!c.is_string())
                params.fail("columns", "must hold column names, got " + c.dump());
            addColumn(c.get<std::string>(), "float32");
        }
    } else {
        for (const auto &[name, dtype] : columns->items()) {
            if (!dtype.is_string())
                params.fail("columns." + name, "must be a dtype name, got " + dtype.dump());
            addColumn(name, dtype.get<std::string>());
        }
    }
    // A default for a column not read would be dropped without a word (a typo): refused, as
    // make_csv_dataset refuses defaults that do not match its columns.
    if (defaults)
        for (const auto &[name, value] : defaults->items())
            if (std::none_of(config.columns.begin(), config.columns.end(), [&](const CsvColumn &c) { return c.name == name; }))
                params.fail("column_defaults." + name, "names no column in \"columns\"");
    // Check the columns against the first file's header now, so a typo is a build error.
    {
        auto reader = CsvReader::open(files.front(), config.options);
        if (!reader.ok())
            params.fail("filenames", reader.error().message());
        for (const auto &c : config.columns)
            if (auto index = reader->columnIndex(c.name); !index.ok())
                params.fail("columns." + c.name, index.error().message());
    }
    ElementSpec spec;
    for (const auto &c : config.columns)
        spec.features.push_back({c.name, c.type, {}});
    StageStats *stats = context.statsFor(params.node());
    const int parallelism = parallel == kAutotune ? context.threads() : int(std::min<std::int64_t>(parallel, 1024));
    stats->async = parallelism > 1;
    return std::make_shared<CsvDataset>(std::move(spec), stats, std::move(files), std::move(config), parallelism);
}

} // namespace

void registerCsvSource(std::vector<OpInfo> &ops)
{
    ops.push_back({"from_csv", "sources",
                   "Rows of CSV files of any size, selected columns as scalar features (tf.data.experimental.CsvDataset / "
                   "make_csv_dataset).",
                   {{"filenames", "path|glob|list", "", "CSV files, read one after another", true},
                    {"columns", "columns", "", "column name → dtype (float32, float64, int32, int64, string), or names (float32)", true},
                    {"header", "bool", "true", "the first row names the columns"},
                    {"field_delim", "string", ",", "field delimiter"},
                    {"na_value", "string", "", "a field equal to this counts as missing (absent: only empty fields are missing)"},
                    {"column_defaults", "object", "", "column name → value for missing fields (absent: a missing field is an error)"},
                    {"num_parallel_calls", "int|AUTOTUNE", "AUTOTUNE",
                     "chunks of the files (cut at line ends) parsed at once; the rows keep their order (1: one thread)"}},
                   0, 0, buildFromCsv});
}

} // namespace sluice::pipeline
