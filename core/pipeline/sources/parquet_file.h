#pragma once
// One Apache Parquet file as from_parquet reads it: its columns as Sluice features and its row
// groups as chunks of columns (row_chunks.h). Built on Apache Arrow's C++ reader where the build
// has it (SLUICE_HAVE_PARQUET); without it, open() says so. Arrow's types stay behind this
// header so that the rest of the pipeline never sees them.

#include "io/error.h"
#include "pipeline/engine/element.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::pipeline {

// A top-level column: readable as a feature (numbers, booleans, strings, lists of numbers of
// one length), or not, and why.
struct ParquetColumn
{
    std::string name;
    std::string parquetType;        // Arrow's name for it: "double", "list<element: float>"
    std::optional<ValueType> type;  // empty when Sluice cannot read the column
    Shape rowShape;                 // () for scalars, (n) for lists of n numbers
    std::string unsupportedReason;  // why not, when type is empty
    bool isList = false;            // a list column: its length is found in its first row
};

// What a null (missing) value of a scalar column becomes; without one a null is an error.
struct ParquetDefault
{
    bool present = false;
    double number = 0;         // floating-point and boolean columns
    std::int64_t integer = 0;  // integer columns, exactly
    std::string text;
};

class ParquetFile
{
public:
    // True where this build reads Parquet.
    static bool available();
    // Opens `path` and reads its footer (schema, row groups).
    static Result<std::shared_ptr<const ParquetFile>> open(const std::string &path);
    virtual ~ParquetFile() = default;

    const std::string &path() const { return m_path; }
    const std::vector<ParquetColumn> &columns() const { return m_columns; }
    int rowGroups() const { return int(m_groupRows.size()); }
    std::int64_t rowGroupRows(int group) const { return m_groupRows.at(std::size_t(group)); }
    std::int64_t rows() const;

    // The length of list column `column`: the length of its first row (reads one page).
    virtual Result<std::int64_t> listLength(std::size_t column) const = 0;
    // Row group `group` as a chunk: one tensor per entry of `columns` (indices into columns()),
    // its leading dimension the group's rows, of the types and row shapes in `spec` (the
    // features in the same order). A null without a default, or a list of another length, ends
    // the chunk's rows at that row with an error naming the file, column and row.
    virtual Result<Element> readRowGroup(int group, const std::vector<std::size_t> &columns, const ElementSpec &spec,
                                         const std::vector<ParquetDefault> &defaults) const = 0;

protected:
    std::string m_path;
    std::vector<ParquetColumn> m_columns;
    std::vector<std::int64_t> m_groupRows;
};

} // namespace sluice::pipeline
