#pragma once
// Reading CSV files of any size row by row from a mapping (RFC 4180: a header row, fields
// separated by a delimiter, optionally quoted with "" as an escaped quote, quoted fields may
// hold delimiters and newlines; \n or \r\n line ends). Pages are released behind the scan,
// so resident memory stays bounded on files larger than RAM.
//
// Threading: one reader per thread; the fields next() returns are valid until the next call.

#include "io/error.h"
#include "io/mapped_file.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

struct CsvOptions
{
    char delimiter = ',';
    bool header = true; // the first row names the columns (else they are "0", "1", …)
};

class CsvReader
{
public:
    static Result<CsvReader> open(const std::string &path, CsvOptions options = {});

    const std::vector<std::string> &columns() const { return m_columns; }
    // The column's index, or an error listing the known columns.
    Result<std::size_t> columnIndex(const std::string &name) const;

    // The next row's fields; nothing at the end of the file; an error naming the line when
    // the row has the wrong number of fields or a quote is not closed.
    Result<std::optional<std::span<const std::string_view>>> next();

    std::uint64_t line() const { return m_line; } // 1-based line of the row last returned
    std::uint64_t rowsRead() const { return m_rows; }
    std::uint64_t fileSize() const { return m_file->size(); }
    const std::string &path() const { return m_file->path(); }

private:
    CsvReader() = default;
    // Splits the row at m_pos into m_fields; false at end of file.
    Result<bool> splitRow();

    std::shared_ptr<const MappedFile> m_file;
    CsvOptions m_options;
    std::vector<std::string> m_columns;
    std::size_t m_pos = 0;
    std::size_t m_released = 0;
    std::uint64_t m_line = 0, m_nextLine = 1, m_rows = 0;
    std::vector<std::string_view> m_fields;
    std::vector<std::string> m_unescaped; // storage for quoted fields that held ""
};

// Numbers as CSV holds them: surrounding spaces allowed, "nan"/"inf" (any case) accepted for
// floats, the empty field is no number.
std::optional<double> parseCsvDouble(std::string_view field);
std::optional<std::int64_t> parseCsvInt(std::string_view field);

} // namespace sluice
