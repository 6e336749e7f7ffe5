#include "io/formats/csv_text.h"

#include "io/formats/csv_reader.h"

#include <filesystem>

namespace sluice {

std::string csvField(std::string_view field)
{
    const bool quote = field.find_first_of(",\"\r\n") != std::string_view::npos ||
                       (!field.empty() && (field.front() == ' ' || field.back() == ' '));
    if (!quote)
        return std::string(field);
    std::string out = "\"";
    for (char c : field) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + '"';
}

std::string csvLine(const std::vector<std::string> &fields)
{
    std::string line;
    for (std::size_t i = 0; i < fields.size(); ++i)
        line += (i ? "," : "") + csvField(fields[i]);
    return line + "\n";
}

Result<CsvTable> readCsvTable(const std::string &path)
{
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) == 0 && !ec)
        return CsvTable{};
    auto reader = CsvReader::open(path, CsvOptions{});
    if (!reader)
        return reader.error();
    CsvTable table;
    table.columns = reader->columns();
    for (;;) {
        auto row = reader->next();
        if (!row)
            return row.error();
        if (!*row)
            break;
        table.rows.emplace_back((*row)->begin(), (*row)->end());
        table.lines.push_back(reader->line());
    }
    return table;
}

} // namespace sluice
