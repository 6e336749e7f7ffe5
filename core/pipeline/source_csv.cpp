// from_csv: rows of CSV files of any size (read from the mapping, pages released behind the
// scan), selected columns parsed into scalar features, as tf.data.experimental.CsvDataset /
// make_csv_dataset do.
#include "pipeline/source_files.h"

#include "io/csv_reader.h"

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
                auto reader = CsvReader::open(m_files[m_file++], m_config.options);
                if (!reader.ok())
                    return reader.error();
                m_reader.emplace(std::move(reader).value());
                m_indices.clear();
                for (const auto &c : m_config.columns) {
                    auto index = m_reader->columnIndex(c.name);
                    if (!index.ok())
                        return index.error();
                    m_indices.push_back(*index);
                }
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
                auto t = parse(m_config.columns[i], (**row)[m_indices[i]]);
                if (!t.ok())
                    return t.error();
                out.tensors.push_back(std::move(t).value());
            }
            return Poll::Ready;
        }
    }

private:
    Result<Tensor> parse(const CsvColumn &c, std::string_view field) const
    {
        const bool missing = field.empty() || (!m_config.naValue.empty() && field == m_config.naValue);
        const std::string where = m_reader->path() + ": line " + std::to_string(m_reader->line());
        if (c.type.isString)
            return Tensor::strings({}, {missing && c.defaultValue ? c.defaultValue->get<std::string>() : std::string(field)});
        if (missing) {
            if (!c.defaultValue)
                return Error::corrupt(where, "column \"" + c.name + "\" is empty and has no default in column_defaults");
            return store(c.type.dtype, c.defaultValue->get<double>());
        }
        if (isFloating(c.type.dtype)) {
            auto v = parseCsvDouble(field);
            if (!v)
                return Error::corrupt(where, "column \"" + c.name + "\": \"" + std::string(field) + "\" is not a number");
            return store(c.type.dtype, *v);
        }
        auto v = parseCsvInt(field);
        if (!v)
            return Error::corrupt(where, "column \"" + c.name + "\": \"" + std::string(field) + "\" is not an integer");
        if (c.type.dtype == DType::Int32 && (*v < INT32_MIN || *v > INT32_MAX))
            return Error::corrupt(where, "column \"" + c.name + "\": " + std::string(field) + " does not fit in int32");
        return store(c.type.dtype, double(*v), *v);
    }

    static Tensor store(DType dtype, double value, std::int64_t exact = 0)
    {
        switch (dtype) {
        case DType::Float32: return Tensor::scalar<float>(float(value));
        case DType::Float64: return Tensor::scalar<double>(value);
        case DType::Int32: return Tensor::scalar<std::int32_t>(std::int32_t(exact ? exact : std::int64_t(value)));
        default: return Tensor::scalar<std::int64_t>(exact ? exact : std::int64_t(value));
        }
    }

    std::vector<std::string> m_files;
    std::size_t m_file = 0;
    const CsvConfig &m_config;
    std::optional<CsvReader> m_reader;
    std::vector<std::size_t> m_indices;
};

class CsvDataset final : public Dataset
{
public:
    CsvDataset(ElementSpec spec, StageStats *stats, std::vector<std::string> files, CsvConfig config)
        : Dataset(std::move(spec), stats), m_files(std::move(files)), m_config(std::move(config))
    {
    }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &) const override
    {
        return std::make_unique<CsvIterator>(m_files, m_config);
    }

private:
    std::vector<std::string> m_files;
    CsvConfig m_config;
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
    return std::make_shared<CsvDataset>(std::move(spec), context.statsFor(params.node()), std::move(files), std::move(config));
}

} // namespace

void registerCsvSource(std::vector<OpInfo> &ops)
{
    ops.push_back({"from_csv", "sources",
                   "Rows of CSV files of any size, selected columns as scalar features (tf.data.experimental.CsvDataset / "
                   "make_csv_dataset).",
                   {{"filenames", "path|glob|list", "", "CSV files, read one after another", true},
                    {"columns", "object|list", "", "column name → dtype (float32, float64, int32, int64, string), or names (float32)", true},
                    {"header", "bool", "true", "the first row names the columns"},
                    {"field_delim", "string", ",", "field delimiter"},
                    {"na_value", "string", "", "a field equal to this counts as missing (absent: only empty fields are missing)"},
                    {"column_defaults", "object", "", "column name → value for missing fields (absent: a missing field is an error)"}},
                   0, 0, buildFromCsv});
}

} // namespace sluice::pipeline
