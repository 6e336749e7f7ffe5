#include "io/formats/csv_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace sluice {
namespace {

constexpr std::size_t kReleaseWindow = 32u << 20; // pages behind the scan are released in steps of this

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return (x | 0x20) == (y | 0x20); });
}

} // namespace

std::optional<double> parseCsvDouble(std::string_view field)
{
    field = trim(field);
    if (field.empty())
        return std::nullopt;
    std::string_view body = field;
    const bool negative = body.front() == '-';
    if (body.front() == '+' || body.front() == '-')
        body.remove_prefix(1);
    if (iequals(body, "nan"))
        return std::nan("");
    if (iequals(body, "inf") || iequals(body, "infinity"))
        return negative ? -HUGE_VAL : HUGE_VAL;
    if (field.front() == '+')
        field.remove_prefix(1); // from_chars does not take a leading '+'
    double v = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || end != field.data() + field.size())
        return std::nullopt;
    return v;
}

std::optional<std::int64_t> parseCsvInt(std::string_view field)
{
    field = trim(field);
    if (!field.empty() && field.front() == '+')
        field.remove_prefix(1);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (field.empty() || ec != std::errc() || end != field.data() + field.size())
        return std::nullopt;
    return v;
}

Result<CsvReader> CsvReader::open(const std::string &path, CsvOptions options)
{
    auto mapped = MappedFile::open(path);
    if (!mapped)
        return mapped.error();
    CsvReader r;
    r.m_file = std::move(mapped).value();
    r.m_options = options;
    r.m_end = r.m_file->size();
    r.m_file->adviseAccess(MappedFile::Access::Sequential);
    // A UTF-8 byte-order mark (spreadsheets write one) is not part of the first column's name.
    const auto bytes = r.m_file->bytes();
    const bool bom = bytes.size() >= 3 && std::to_integer<unsigned>(bytes[0]) == 0xef &&
                     std::to_integer<unsigned>(bytes[1]) == 0xbb && std::to_integer<unsigned>(bytes[2]) == 0xbf;
    r.m_pos = bom ? 3 : 0;
    auto first = r.splitRow();
    if (!first)
        return first.error();
    if (!*first)
        return Error::corrupt(path, "file is empty (no header row)");
    if (options.header) {
        for (std::string_view f : r.m_fields)
            r.m_columns.emplace_back(trim(f));
        for (std::size_t i = 0; i < r.m_columns.size(); ++i)
            for (std::size_t j = 0; j < i; ++j)
                if (r.m_columns[i] == r.m_columns[j])
                    return Error::corrupt(path, "line 1: column name '" + r.m_columns[i] + "' appears twice");
    } else {
        for (std::size_t i = 0; i < r.m_fields.size(); ++i)
            r.m_columns.push_back(std::to_string(i));
        r.m_pos = bom ? 3 : 0; // the first row is data: read it again
        r.m_nextLine = 1;
    }
    r.m_dataBegin = r.m_pos;
    r.m_dataBeginLine = r.m_nextLine;
    return r;
}

Result<std::size_t> CsvReader::columnIndex(const std::string &name) const
{
    for (std::size_t i = 0; i < m_columns.size(); ++i)
        if (m_columns[i] == name)
            return i;
    std::string known;
    for (const auto &c : m_columns)
        known += (known.empty() ? "" : ", ") + c;
    return Error::invalid(path(), "no column '" + name + "' (columns: " + known + ")");
}

void CsvReader::restrict(std::size_t begin, std::size_t end, std::uint64_t line)
{
    m_pos = begin;
    m_released = begin;
    m_end = std::min(end, m_file->size());
    m_nextLine = line;
}

CsvChunkEnd nextCsvChunk(std::span<const std::byte> bytes, std::size_t begin, std::size_t length)
{
    const char *data = reinterpret_cast<const char *>(bytes.data());
    const std::size_t size = bytes.size();
    const std::size_t target = std::min(size, begin + length);
    // Quote parity up to the target tells whether it falls inside a quoted field ("" escapes
    // count twice and keep the parity).
    bool quoted = std::count(data + begin, data + target, '"') % 2 != 0;
    CsvChunkEnd chunk{target, std::uint64_t(std::count(data + begin, data + target, '\n'))};
    for (std::size_t p = target; p < size; ++p) {
        if (data[p] == '"') {
            quoted = !quoted;
        } else if (data[p] == '\n') {
            ++chunk.lines;
            if (!quoted) {
                chunk.end = p + 1;
                return chunk;
            }
        }
    }
    chunk.end = size;
    return chunk;
}

Result<bool> CsvReader::splitRow()
{
    const auto bytes = m_file->bytes();
    const char *data = reinterpret_cast<const char *>(bytes.data());
    const std::size_t size = m_end;
    m_fields.clear();
    m_unescaped.clear();
    // Blank lines between rows are skipped, as pandas and numpy do.
    while (m_pos < size && (data[m_pos] == '\n' || data[m_pos] == '\r')) {
        if (data[m_pos] == '\n')
            ++m_nextLine;
        ++m_pos;
    }
    if (m_pos >= size)
        return false;
    m_line = m_nextLine;
    const char delim = m_options.delimiter;
    for (;;) {
        // One field starting at m_pos.
        if (m_pos < size && data[m_pos] == '"') {
            const std::size_t start = ++m_pos;
            bool escaped = false;
            for (;;) {
                if (m_pos >= size)
                    return Error::corrupt(path(), "line " + std::to_string(m_line) + ": quoted field is not closed");
                if (data[m_pos] == '"') {
                    if (m_pos + 1 < size && data[m_pos + 1] == '"') {
                        escaped = true;
                        m_pos += 2;
                        continue;
                    }
                    break;
                }
                if (data[m_pos] == '\n')
                    ++m_nextLine;
                ++m_pos;
            }
            std::string_view field(data + start, m_pos - start);
            ++m_pos; // closing quote
            if (escaped) {
                std::string s;
                for (std::size_t i = 0; i < field.size(); ++i) {
                    s.push_back(field[i]);
                    if (field[i] == '"')
                        ++i; // "" → "
                }
                m_unescaped.push_back(std::move(s));
            }
            // An escaped field is a null view for now, pointed at its unescaped copy once
            // m_unescaped stops growing (below).
            m_fields.push_back(escaped ? std::string_view() : field);
            if (m_pos < size && data[m_pos] != delim && data[m_pos] != '\n' && data[m_pos] != '\r')
                return Error::corrupt(path(), "line " + std::to_string(m_line) + ": text after a closing quote");
        } else {
            const std::size_t start = m_pos;
            while (m_pos < size && data[m_pos] != delim && data[m_pos] != '\n' && data[m_pos] != '\r')
                ++m_pos;
            m_fields.emplace_back(data + start, m_pos - start);
        }
        if (m_pos < size && data[m_pos] == delim) {
            ++m_pos;
            continue;
        }
        break; // end of line or file
    }
    if (m_pos < size && data[m_pos] == '\r')
        ++m_pos;
    if (m_pos < size && data[m_pos] == '\n') {
        ++m_pos;
        ++m_nextLine;
    }
    std::size_t u = 0;
    for (auto &f : m_fields)
        if (f.data() == nullptr)
            f = m_unescaped[u++];
    return true;
}

Result<std::optional<std::span<const std::string_view>>> CsvReader::next()
{
    using Out = std::optional<std::span<const std::string_view>>;
    auto more = splitRow();
    if (!more)
        return more.error();
    if (!*more) {
        if (m_end < m_file->size() && m_end > m_released) // a chunk read to its end
            m_file->release(m_released, m_end - m_released);
        return Out{};
    }
    if (m_fields.size() != m_columns.size())
        return Error::corrupt(path(), "line " + std::to_string(m_line) + ": " + std::to_string(m_fields.size()) + " fields, the header has " +
                                          std::to_string(m_columns.size()));
    ++m_rows;
    if (m_pos >= m_released + 2 * kReleaseWindow) { // bounded resident memory on huge files
        m_file->release(m_released, kReleaseWindow);
        m_released += kReleaseWindow;
    }
    return Out{std::span<const std::string_view>(m_fields)};
}

} // namespace sluice
