// libFuzzer target: any bytes read as a CSV file (header or not, ',' or ';' or tab as the
// delimiter, chosen by the first byte) give rows or an error naming the line, never a crash;
// the chunks parallel parsing cuts lie inside the file, in order, and reading each chunk on its
// own gives the rows the whole-file reader gives.
#include "io/formats/csv_reader.h"

#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

// One file per process, rewritten for each input (CsvReader reads files, through a mapping).
const std::string &scratchFile()
{
    static const std::string path = [] {
        char name[] = "/tmp/sluice-fuzz-csv-XXXXXX";
        const int fd = ::mkstemp(name);
        if (fd < 0)
            std::abort();
        ::close(fd);
        return std::string(name);
    }();
    return path;
}

std::size_t countRows(sluice::CsvReader &reader)
{
    std::size_t rows = 0;
    for (;;) {
        auto row = reader.next();
        if (!row.ok() || !*row)
            return row.ok() ? rows : std::size_t(-1);
        for (std::string_view field : **row) {
            (void)sluice::parseCsvDouble(field);
            (void)sluice::parseCsvInt(field);
        }
        ++rows;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size == 0)
        return 0;
    sluice::CsvOptions options;
    options.header = (data[0] & 1) != 0;
    options.delimiter = "\t,;|"[(data[0] >> 1) & 3];
    const std::string &path = scratchFile();
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f)
        std::abort();
    std::fwrite(data + 1, 1, size - 1, f);
    std::fclose(f);

    auto reader = sluice::CsvReader::open(path, options);
    if (!reader.ok())
        return 0;
    const std::size_t whole = countRows(*reader);

    // The chunks of parallel parsing: inside the file, in order; their rows add up.
    auto first = sluice::CsvReader::open(path, options);
    if (!first.ok())
        std::abort(); // it opened a moment ago
    const std::size_t fileSize = first->fileSize();
    std::size_t begin = first->dataBegin(), rows = 0;
    std::uint64_t line = first->dataBeginLine();
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte *>(data + 1), size - 1);
    bool failed = false;
    while (begin < fileSize) {
        const sluice::CsvChunkEnd end = sluice::nextCsvChunk(bytes, begin, 7);
        if (end.end <= begin || end.end > fileSize)
            std::abort();
        auto chunk = sluice::CsvReader::open(path, options);
        if (!chunk.ok())
            std::abort();
        chunk->restrict(begin, end.end, line);
        const std::size_t n = countRows(*chunk);
        failed = failed || n == std::size_t(-1);
        rows += failed ? 0 : n;
        begin = end.end;
        line += end.lines;
    }
    // A file the whole reader reads without error reads the same, chunk by chunk.
    if (whole != std::size_t(-1) && !failed && rows != whole)
        std::abort();
    return 0;
}
