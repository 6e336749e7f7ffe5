#pragma once
// Reading CSV files of any size row by row from a mapping (RFC 4180: a header row, fields
// separated by a delimiter, optionally quoted with "" as an escaped quote, quoted fields may
// hold delimiters and newlines; \n or \r\n line ends). Pages are released behind the scan,
// so resident memory stays bounded on files larger than RAM.
//
// Threading: one reader per thread; the fields next() returns are valid until the next call.

#include "io/error.h"
#include "io/storage/mapped_file.h"

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

    // Limits the reader to the rows in bytes [begin, end) of the file, `begin` being the start of
    // a row on (1-based) line `line`, outside quotes: one chunk of a file parsed in parallel.
    // Pages of the chunk are released once it has been read to its end.
    void restrict(std::size_t begin, std::size_t end, std::uint64_t line);
    // Where the rows start (after the header and any byte-order mark), and on which line.
    std::size_t dataBegin() const { return m_dataBegin; }
    std::uint64_t dataBeginLine() const { return m_dataBeginLine; }

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
    std::size_t m_end = 0; // rows are read up to here (the file's size unless restricted)
    std::size_t m_released = 0;
    std::size_t m_dataBegin = 0;
    std::uint64_t m_dataBeginLine = 1;
    std::uint64_t m_line = 0, m_nextLine = 1, m_rows = 0;
    std::vector<std::string_view> m_fields;
    std::vector<std::string> m_unescaped; // storage for quoted fields that held ""
};

// Chunks of CSV for parallel parsing. Given that byte `begin` of `data` starts a row outside
// quotes, the chunk ends at the first line end at or after begin + bytes that is outside
// quotes (a quoted field may hold newlines), or at the end of the data. `lines` counts the line
// ends inside the chunk, so the next chunk knows its first line for messages.
struct CsvChunkEnd
{
    std::size_t end = 0;
    std::uint64_t lines = 0;
};
CsvChunkEnd nextCsvChunk(std::span<const std::byte> data, std::size_t begin, std::size_t bytes);

// Numbers as CSV holds them: surrounding spaces allowed, "nan"/"inf" (any case) accepted for
// floats, the empty field is no number.
std::optional<double> parseCsvDouble(std::string_view field);
std::optional<std::int64_t> parseCsvInt(std::string_view field);

} // namespace sluice
