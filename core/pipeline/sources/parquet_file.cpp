// ParquetFile on Apache Arrow's C++ reader (parquet::arrow). Numeric columns without nulls are
// handed on without a copy: the tensor views the decoded Arrow buffer and keeps its array alive.
// Arrow reports most errors as Status values but the Parquet layer throws, so every call into
// it is wrapped and its message becomes an Error naming the file.
#include "pipeline/sources/parquet_file.h"

#include "pipeline/engine/dtype_dispatch.h"
#include "pipeline/sources/row_chunks.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <cstring>
#include <numeric>

namespace sluice::pipeline {
namespace {

std::optional<DType> numericDType(arrow::Type::type id)
{
    switch (id) {
    case arrow::Type::BOOL: return DType::Bool;
    case arrow::Type::INT8: return DType::Int8;
    case arrow::Type::INT16: return DType::Int16;
    case arrow::Type::INT32: return DType::Int32;
    case arrow::Type::INT64: return DType::Int64;
    case arrow::Type::UINT8: return DType::UInt8;
    case arrow::Type::UINT16: return DType::UInt16;
    case arrow::Type::UINT32: return DType::UInt32;
    case arrow::Type::UINT64: return DType::UInt64;
    case arrow::Type::HALF_FLOAT: return DType::Float16;
    case arrow::Type::FLOAT: return DType::Float32;
    case arrow::Type::DOUBLE: return DType::Float64;
    default: return std::nullopt;
    }
}

bool isText(arrow::Type::type id)
{
    return id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING || id == arrow::Type::BINARY ||
           id == arrow::Type::LARGE_BINARY;
}

ParquetColumn describe(const arrow::Field &field)
{
    ParquetColumn c;
    c.name = field.name();
    c.parquetType = field.type()->ToString();
    const auto id = field.type()->id();
    if (auto dtype = numericDType(id)) {
        c.type = ValueType{*dtype, false};
    } else if (isText(id)) {
        c.type = ValueType::string();
    } else if (id == arrow::Type::LIST || id == arrow::Type::LARGE_LIST || id == arrow::Type::FIXED_SIZE_LIST) {
        const auto &item = *field.type()->field(0)->type();
        if (auto itemType = numericDType(item.id()); itemType && *itemType != DType::Bool) {
            c.type = ValueType{*itemType, false};
            if (id == arrow::Type::FIXED_SIZE_LIST)
                c.rowShape = {std::int64_t(static_cast<const arrow::FixedSizeListType &>(*field.type()).list_size())};
            else
                c.isList = true;
        } else {
            c.unsupportedReason = "a list of " + item.ToString() + ": list columns are read when they hold numbers";
        }
    } else {
        c.unsupportedReason = c.parquetType +
                              " is not read: from_parquet reads numbers, booleans, strings and lists of numbers of one "
                              "length (cast the column in the file, or leave it out)";
    }
    return c;
}

Error arrowError(const std::string &path, const arrow::Status &status)
{
    if (status.IsIOError() && status.message().find("errno 2") != std::string::npos)
        return Error::notFound(path, "no such file");
    if (status.IsIOError())
        return Error::io(path, status.message());
    if (status.IsOutOfMemory())
        return Error::outOfMemory(path, status.message());
    return Error::corrupt(path, status.message());
}

bool isListType(arrow::Type::type id)
{
    return id == arrow::Type::LIST || id == arrow::Type::LARGE_LIST || id == arrow::Type::FIXED_SIZE_LIST;
}

// Whether `array` holds what `feature` says: its values' type, a list exactly where the feature
// has a row shape.
bool fitsFeature(const arrow::Array &array, const FeatureSpec &feature)
{
    const auto id = array.type_id();
    if (feature.type.isString)
        return isText(id);
    if (isListType(id) != !feature.shape.empty())
        return false;
    const auto valueId = isListType(id) ? array.type()->field(0)->type()->id() : id;
    const auto dtype = numericDType(valueId);
    return dtype && *dtype == feature.type.dtype;
}

// The first row of `array` (rows [0, rows)) that has no value and no default: rows if none.
std::int64_t firstUnfilledNull(const arrow::Array &array, std::int64_t rows, bool hasDefault)
{
    if (hasDefault || array.null_count() == 0)
        return rows;
    for (std::int64_t i = 0; i < rows; ++i)
        if (array.IsNull(i))
            return i;
    return rows;
}

template <typename ListArray>
std::int64_t firstBadList(const ListArray &list, std::int64_t rows, std::int64_t length)
{
    if (list.values()->null_count() > 0) {
        for (std::int64_t i = 0; i < rows; ++i) {
            if (list.IsNull(i))
                return i;
            for (auto k = list.value_offset(i); k < list.value_offset(i) + list.value_length(i); ++k)
                if (list.values()->IsNull(k))
                    return i;
        }
    }
    for (std::int64_t i = 0; i < rows; ++i)
        if (list.IsNull(i) || list.value_length(i) != length)
            return i;
    return rows;
}

class ArrowParquetFile final : public ParquetFile
{
public:
    ArrowParquetFile(std::string path, std::shared_ptr<parquet::FileMetaData> metadata, std::vector<ParquetColumn> columns)
        : m_metadata(std::move(metadata))
    {
        m_path = std::move(path);
        m_columns = std::move(columns);
        for (int g = 0; g < m_metadata->num_row_groups(); ++g)
            m_groupRows.push_back(m_metadata->RowGroup(g)->num_rows());
        m_groupFirstRow.resize(m_groupRows.size());
        std::exclusive_scan(m_groupRows.begin(), m_groupRows.end(), m_groupFirstRow.begin(), std::int64_t(0));
    }

    Result<std::int64_t> listLength(std::size_t column) const override
    {
        try {
            if (rows() == 0)
                return Error::corrupt(m_path, "column \"" + m_columns[column].name + "\": no rows to take the list length from");
            auto reader = reopen(1);
            if (!reader.ok())
                return reader.error();
            const auto leaves = leafColumns(**reader, {column});
            int group = 0;
            while (m_groupRows[std::size_t(group)] == 0)
                ++group;
            auto batches = (*reader)->GetRecordBatchReader({group}, leaves);
            if (!batches.ok())
                return arrowError(m_path, batches.status());
            std::shared_ptr<arrow::RecordBatch> batch;
            if (auto st = (*batches)->ReadNext(&batch); !st.ok())
                return arrowError(m_path, st);
            if (!batch || batch->num_rows() == 0 || batch->column(0)->IsNull(0))
                return Error::corrupt(m_path, "column \"" + m_columns[column].name + "\": its first row has no list to take the length from");
            const auto &array = *batch->column(0);
            if (array.type_id() == arrow::Type::LARGE_LIST)
                return std::int64_t(static_cast<const arrow::LargeListArray &>(array).value_length(0));
            return std::int64_t(static_cast<const arrow::ListArray &>(array).value_length(0));
        } catch (const std::exception &e) {
            return Error::corrupt(m_path, e.what());
        }
    }

    Result<Element> readRowGroup(int group, const std::vector<std::size_t> &columns, const ElementSpec &spec,
                                 const std::vector<ParquetDefault> &defaults) const override
    {
        try {
            return read(group, columns, spec, defaults);
        } catch (const std::exception &e) {
            return Error::corrupt(m_path, std::string("row group ") + std::to_string(group) + ": " + e.what());
        }
    }

private:
    // A reader of its own per call: Arrow's FileReader is not shared between threads, and the
    // footer, parsed once, is handed to each so that opening costs a file descriptor only.
    Result<std::unique_ptr<parquet::arrow::FileReader>> reopen(std::int64_t batchRows) const
    {
        auto file = arrow::io::ReadableFile::Open(m_path);
        if (!file.ok())
            return arrowError(m_path, file.status());
        auto contents = parquet::ParquetFileReader::Open(*file, parquet::default_reader_properties(), m_metadata);
        parquet::ArrowReaderProperties properties;
        properties.set_use_threads(false); // the pipeline's tasks are the threads
        if (batchRows > 0)
            properties.set_batch_size(batchRows);
        auto reader = parquet::arrow::FileReader::Make(arrow::system_memory_pool(), std::move(contents), properties);
        if (!reader.ok())
            return arrowError(m_path, reader.status());
        return std::move(reader).ValueUnsafe();
    }

    // Arrow selects columns by their Parquet leaves: a field's own index would pick another
    // column's leaves once a nested column (a struct, a list) comes before it.
    static void collectLeaves(const parquet::arrow::SchemaField &field, std::vector<int> &leaves)
    {
        if (field.is_leaf())
            leaves.push_back(field.column_index);
        for (const auto &child : field.children)
            collectLeaves(child, leaves);
    }

    static std::vector<int> leafColumns(const parquet::arrow::FileReader &reader, const std::vector<std::size_t> &columns)
    {
        std::vector<int> leaves;
        for (std::size_t c : columns)
            collectLeaves(reader.manifest().schema_fields.at(c), leaves);
        return leaves;
    }

    Result<Element> read(int group, const std::vector<std::size_t> &columns, const ElementSpec &spec,
                         const std::vector<ParquetDefault> &defaults) const
    {
        auto reader = reopen(0);
        if (!reader.ok())
            return reader.error();
        auto read = (*reader)->ReadRowGroup(group, leafColumns(**reader, columns));
        if (!read.ok())
            return arrowError(m_path, read.status());
        auto table = (*read)->CombineChunks(arrow::system_memory_pool());
        if (!table.ok())
            return arrowError(m_path, table.status());
        const std::int64_t rows = (*table)->num_rows();

        // Rows up to the first unreadable one (a null without a default, a list of another
        // length) are delivered; the chunk then carries the error.
        std::vector<std::shared_ptr<arrow::Array>> arrays;
        std::int64_t good = rows;
        std::size_t badColumn = 0;
        for (std::size_t k = 0; k < columns.size(); ++k) {
            const auto &chunked = *(*table)->column(int(k));
            arrays.push_back(chunked.num_chunks() ? chunked.chunk(0) : nullptr);
            if (!arrays.back())
                continue;
            const auto &array = *arrays.back();
            // Each file's columns were checked against the features, so this holds; it is
            // checked again because a wrong guess would read past Arrow's buffers.
            if (!fitsFeature(array, spec.features[k]))
                return Error::corrupt(m_path, "column \"" + m_columns[columns[k]].name + "\" is " + array.type()->ToString() +
                                                  ", not " + spec.features[k].type.name() + " " + shapeText(spec.features[k].shape));
            std::int64_t bad = rows;
            if (array.type_id() == arrow::Type::LIST)
                bad = firstBadList(static_cast<const arrow::ListArray &>(array), rows, spec.features[k].shape.at(0));
            else if (array.type_id() == arrow::Type::LARGE_LIST)
                bad = firstBadList(static_cast<const arrow::LargeListArray &>(array), rows, spec.features[k].shape.at(0));
            else if (array.type_id() == arrow::Type::FIXED_SIZE_LIST)
                bad = firstBadList(static_cast<const arrow::FixedSizeListArray &>(array), rows, spec.features[k].shape.at(0));
            else
                bad = firstUnfilledNull(array, rows, defaults[k].present);
            if (bad < good) {
                good = bad;
                badColumn = k;
            }
        }

        Element chunk;
        for (std::size_t k = 0; k < columns.size(); ++k)
            chunk.tensors.push_back(column(arrays[k], good, spec.features[k], defaults[k]));
        if (good < rows) {
            const auto &c = m_columns[columns[badColumn]];
            const std::int64_t row = m_groupFirstRow[std::size_t(group)] + good;
            const std::string why = spec.features[badColumn].shape.empty() ? "is null and has no default in column_defaults"
                                    : arrays[badColumn]->IsNull(good)   ? "is null (a list column has no default)"
                                                                        : "is not a list of " + std::to_string(spec.features[badColumn].shape.at(0)) +
                                                                              " values without nulls (the length its first row has)";
            attachChunkError(chunk, Error::corrupt(m_path, "column \"" + c.name + "\", row " + std::to_string(row) + " " + why));
        }
        return chunk;
    }

    // Rows [0, rows) of `array` as a column of `feature`'s type and row shape.
    static Tensor column(const std::shared_ptr<arrow::Array> &array, std::int64_t rows, const FeatureSpec &feature,
                         const ParquetDefault &fallback)
    {
        Shape shape{rows};
        shape.insert(shape.end(), feature.shape.begin(), feature.shape.end());
        if (feature.type.isString) {
            std::vector<std::string> values;
            values.reserve(std::size_t(rows));
            for (std::int64_t i = 0; i < rows; ++i) {
                if (array->IsNull(i))
                    values.push_back(fallback.text);
                else if (array->type_id() == arrow::Type::LARGE_STRING || array->type_id() == arrow::Type::LARGE_BINARY)
                    values.emplace_back(static_cast<const arrow::LargeBinaryArray &>(*array).GetView(i));
                else
                    values.emplace_back(static_cast<const arrow::BinaryArray &>(*array).GetView(i));
            }
            return Tensor::strings(std::move(shape), std::move(values));
        }
        const DType dtype = feature.type.dtype;
        const std::size_t item = itemSize(dtype);
        const std::uint64_t count = elementCount(shape);
        if (rows == 0)
            return Tensor::allocate(dtype, std::move(shape));

        // The values and where row 0 starts among them (lists: the child array's values).
        std::shared_ptr<arrow::Array> values = array;
        std::int64_t first = 0;
        if (array->type_id() == arrow::Type::LIST) {
            values = static_cast<const arrow::ListArray &>(*array).values();
            first = static_cast<const arrow::ListArray &>(*array).value_offset(0);
        } else if (array->type_id() == arrow::Type::LARGE_LIST) {
            values = static_cast<const arrow::LargeListArray &>(*array).values();
            first = static_cast<const arrow::LargeListArray &>(*array).value_offset(0);
        } else if (array->type_id() == arrow::Type::FIXED_SIZE_LIST) {
            values = static_cast<const arrow::FixedSizeListArray &>(*array).values();
            first = static_cast<const arrow::FixedSizeListArray &>(*array).value_offset(0);
        }
        if (dtype == DType::Bool) { // Arrow packs booleans in bits; numpy keeps a byte each
            const auto &bits = static_cast<const arrow::BooleanArray &>(*values);
            Tensor t = Tensor::allocate(dtype, std::move(shape));
            auto *out = reinterpret_cast<std::uint8_t *>(t.mutableData());
            for (std::uint64_t i = 0; i < count; ++i)
                out[i] = bits.IsNull(std::int64_t(i)) ? std::uint8_t(fallback.number != 0) : std::uint8_t(bits.Value(std::int64_t(i)));
            return t;
        }
        const auto &data = *values->data();
        const std::byte *base = reinterpret_cast<const std::byte *>(data.buffers[1]->data()) + (data.offset + first) * std::int64_t(item);
        if (values->null_count() == 0) // no copy: the tensor keeps the decoded array alive
            return Tensor::view(dtype, std::move(shape), SharedBytes{values, std::span<const std::byte>(base, count * item)});
        Tensor t = Tensor::allocate(dtype, std::move(shape));
        std::memcpy(t.mutableData(), base, count * item);
        // Nulls of a scalar column take the default (a list column's rows here have no nulls).
        Tensor filler = Tensor::allocate(dtype, {});
        visitDType(dtype, [&](auto zero) {
            using T = decltype(zero);
            T value;
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
                value = T(fallback.integer);
            else
                value = fromDouble<T>(fallback.number);
            std::memcpy(filler.mutableData(), &value, sizeof value);
        });
        for (std::int64_t i = 0; i < rows; ++i)
            if (values->IsNull(first + i))
                std::memcpy(t.mutableData() + std::size_t(i) * item, filler.data(), item);
        return t;
    }

    std::shared_ptr<parquet::FileMetaData> m_metadata;
    std::vector<std::int64_t> m_groupFirstRow;
};

} // namespace

bool ParquetFile::available()
{
    return true;
}

std::int64_t ParquetFile::rows() const
{
    return std::accumulate(m_groupRows.begin(), m_groupRows.end(), std::int64_t(0));
}

Result<std::shared_ptr<const ParquetFile>> ParquetFile::open(const std::string &path)
{
    try {
        auto file = arrow::io::ReadableFile::Open(path);
        if (!file.ok())
            return arrowError(path, file.status());
        auto contents = parquet::ParquetFileReader::Open(*file);
        auto metadata = contents->metadata();
        auto reader = parquet::arrow::FileReader::Make(arrow::system_memory_pool(), std::move(contents));
        if (!reader.ok())
            return arrowError(path, reader.status());
        std::shared_ptr<arrow::Schema> schema;
        if (auto st = (*reader)->GetSchema(&schema); !st.ok())
            return arrowError(path, st);
        std::vector<ParquetColumn> columns;
        for (const auto &field : schema->fields())
            columns.push_back(describe(*field));
        return std::shared_ptr<const ParquetFile>(std::make_shared<ArrowParquetFile>(path, std::move(metadata), std::move(columns)));
    } catch (const std::exception &e) {
        return Error::corrupt(path, std::string("not a readable Parquet file: ") + e.what());
    }
}

} // namespace sluice::pipeline
