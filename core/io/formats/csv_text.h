#pragma once
// CSV as Sluice writes it (metrics.csv) and reads it back: RFC 4180 fields, quoted when they
// hold the delimiter, a quote, a line end or surrounding spaces, so that any output or metric
// name survives the round trip. Reading goes through CsvReader, the reader sources use.
//
// Threading: pure functions; readCsvTable reads a file.

#include <cstdint>
#include "io/error.h"

#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// `field` as one CSV field: bare when it can be, else in quotes with quotes doubled.
std::string csvField(std::string_view field);
// Fields joined with commas, each through csvField, and a line end.
std::string csvLine(const std::vector<std::string> &fields);

struct CsvTable
{
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows; // each as long as `columns`
    std::vector<std::uint64_t> lines;           // each row's (1-based) line in the file, for messages
};

// A whole CSV file with a header row: the error names the file and line of a row whose field
// count differs from the header's, or a quote that is not closed. An empty file: no columns.
Result<CsvTable> readCsvTable(const std::string &path);

} // namespace sluice
