#include "io/array_report.h"

#include "io/array_stats.h"
#include "io/formats/npy_file.h"
#include "io/formats/csv_reader.h"
#include "io/formats/npz_file.h"
#include "io/formats/tf_example.h"
#include "io/formats/tfrecord_reader.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

namespace sluice {
namespace {

nlohmann::json extremeJson(const ArrayStats::Extreme &e)
{
    if (const auto *d = std::get_if<double>(&e))
        return std::isfinite(*d) ? nlohmann::json(*d) : nlohmann::json(std::isnan(*d) ? "nan" : (*d > 0 ? "inf" : "-inf"));
    if (const auto *i = std::get_if<std::int64_t>(&e))
        return *i;
    if (const auto *u = std::get_if<std::uint64_t>(&e))
        return *u;
    return nullptr;
}

// JSON has no infinities: they are written as strings, as numpy's repr spells them.
nlohmann::json numberJson(double v)
{
    if (std::isfinite(v))
        return v;
    return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

// Reads the first bytes of `path` to tell .npy from .zip; empty when unreadable.
std::string sniff(const std::string &path)
{
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f)
        return {};
    char head[6] = {};
    const std::size_t n = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
    if (n >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0)
        return "npy";
    if (n >= 4 && std::memcmp(head, "PK", 2) == 0)
        return "npz";
    return {};
}

bool looksLikeTfRecordName(const std::string &path)
{
    for (const char *ext : {".tfrecord", ".tfrecords", ".tfrec", ".tfrecord.gz", ".tfrecords.gz"})
        if (path.ends_with(ext))
            return true;
    return false;
}

// Reads every record (CRCs checked) and describes the tf.train.Example features found:
// dtype as tf.io names it, and the shortest and longest value list.
Result<nlohmann::json> inspectTfRecord(const std::string &path, TfRecordReader::Compression compression)
{
    auto reader = TfRecordReader::open(path, compression);
    if (!reader)
        return reader.error();
    struct Seen
    {
        std::string dtype;
        std::size_t minLength = SIZE_MAX, maxLength = 0;
        std::uint64_t records = 0;
    };
    std::map<std::string, Seen> seen;
    for (;;) {
        auto record = reader->next();
        if (!record)
            return record.error();
        if (!*record)
            break;
        auto example = parseExample(**record, path + ": record " + std::to_string(reader->recordsRead() - 1));
        if (!example)
            return example.error();
        for (const auto &[name, f] : *example) {
            Seen &s = seen[name];
            const std::string dtype = exampleKindName(f.kind);
            if (f.kind != ExampleFeature::Kind::Empty)
                s.dtype = s.dtype.empty() || s.dtype == dtype ? dtype : "mixed";
            s.minLength = std::min(s.minLength, f.size());
            s.maxLength = std::max(s.maxLength, f.size());
            ++s.records;
        }
    }
    nlohmann::json features = nlohmann::json::object();
    for (const auto &[name, s] : seen)
        features[name] = {{"dtype", s.dtype.empty() ? "empty" : s.dtype},
                          {"min_length", s.minLength},
                          {"max_length", s.maxLength},
                          {"records", s.records}};
    return nlohmann::json{{"file", path},
                          {"format", "tfrecord"},
                          {"compression", compression == TfRecordReader::Compression::Gzip ? "GZIP" : ""},
                          {"nbytes", reader->fileSize()},
                          {"records", reader->recordsRead()},
                          {"features", std::move(features)}};
}

// Reads every row and describes each column: the narrowest dtype that holds all its
// non-empty fields (int64, float64, else string), empty fields, and with stats the numeric
// summary (empty fields and "nan" count as NaN).
Result<nlohmann::json> inspectCsv(const std::string &path, const InspectOptions &options)
{
    CsvOptions csv;
    if (path.ends_with(".tsv"))
        csv.delimiter = '\t';
    auto reader = CsvReader::open(path, csv);
    if (!reader)
        return reader.error();
    struct Column
    {
        bool allInt = true, allNumber = true;
        std::uint64_t empty = 0, nan = 0, seen = 0;
        double sum = 0, lo = HUGE_VAL, hi = -HUGE_VAL;
    };
    std::vector<Column> cols(reader->columns().size());
    for (;;) {
        auto row = reader->next();
        if (!row)
            return row.error();
        if (!*row)
            break;
        for (std::size_t i = 0; i < cols.size(); ++i) {
            const std::string_view field = (**row)[i];
            Column &c = cols[i];
            if (field.find_first_not_of(" \t") == std::string_view::npos) {
                ++c.empty;
                continue;
            }
            if (c.allInt && !parseCsvInt(field))
                c.allInt = false;
            if (!c.allNumber)
                continue;
            const auto v = parseCsvDouble(field);
            if (!v) {
                c.allNumber = false;
                continue;
            }
            if (std::isnan(*v)) {
                ++c.nan;
                continue;
            }
            ++c.seen;
            c.sum += *v;
            c.lo = std::min(c.lo, *v);
            c.hi = std::max(c.hi, *v);
        }
    }
    nlohmann::json columns = nlohmann::json::array();
    for (std::size_t i = 0; i < cols.size(); ++i) {
        const Column &c = cols[i];
        const bool numeric = c.allNumber && c.seen + c.nan > 0;
        const char *dtype = !numeric ? "string" : (c.allInt && c.nan == 0 ? "int64" : "float64");
        nlohmann::json j{{"name", reader->columns()[i]}, {"dtype", dtype}, {"empty", c.empty}};
        if (options.stats && numeric)
            j["stats"] = {{"min", c.seen ? numberJson(c.lo) : nlohmann::json(nullptr)},
                          {"max", c.seen ? numberJson(c.hi) : nlohmann::json(nullptr)},
                          {"sum", numberJson(c.sum)},
                          {"mean", c.seen ? numberJson(c.sum / double(c.seen)) : nlohmann::json(nullptr)},
                          {"nan_count", c.nan + c.empty}};
        columns.push_back(std::move(j));
    }
    return nlohmann::json{{"file", path}, {"format", "csv"}, {"nbytes", reader->fileSize()}, {"rows", reader->rowsRead()},
                          {"columns", std::move(columns)}};
}

} // namespace

nlohmann::json describeArray(const NdArray &array, const InspectOptions &options)
{
    nlohmann::json j;
    j["format_version"] = array.header().versionString();
    j["dtype"] = array.descr().str();
    j["shape"] = array.shape();
    j["fortran_order"] = array.header().fortranOrder;
    j["nbytes"] = array.nbytes();
    j["storage"] = storageName(array.storage());
    if (options.stats) {
        const ArrayStats s = computeStats(array, options.threads);
        j["stats"] = {
            {"min", extremeJson(s.min)},
            {"max", extremeJson(s.max)},
            {"sum", numberJson(s.sum)},
            {"mean", s.mean ? numberJson(*s.mean) : nlohmann::json(nullptr)},
            {"nan_count", s.nanCount},
        };
    }
    return j;
}

Result<nlohmann::json> inspectFile(const std::string &path, const InspectOptions &options)
{
    std::string format = sniff(path);
    if (format.empty() && (path.ends_with(".csv") || path.ends_with(".tsv")))
        return inspectCsv(path, options);
    if (format.empty()) {
        if (const auto compression = TfRecordReader::sniff(path))
            return inspectTfRecord(path, *compression);
        if (looksLikeTfRecordName(path)) // let the reader say what is wrong with it
            return inspectTfRecord(path, path.ends_with(".gz") ? TfRecordReader::Compression::Gzip : TfRecordReader::Compression::None);
        // Let the .npy/.npz readers produce the precise reason (missing file, empty, wrong magic).
        format = path.ends_with(".npz") ? "npz" : "npy";
    }
    if (format == "npy") {
        auto array = openNpy(path);
        if (!array)
            return array.error();
        nlohmann::json j{{"file", path}, {"format", "npy"}};
        j.update(describeArray(*array, options));
        return j;
    }
    auto npz = NpzFile::open(path);
    if (!npz)
        return npz.error();
    nlohmann::json arrays = nlohmann::json::object();
    for (const auto &member : npz->members()) {
        auto array = npz->load(member);
        if (!array)
            return array.error();
        if (options.stats)
            if (auto verified = npz->verify(member); !verified)
                return verified.error();
        nlohmann::json m = describeArray(*array, options);
        m["compressed"] = member.compressed();
        arrays[member.name] = std::move(m);
    }
    return nlohmann::json{{"file", path}, {"format", "npz"}, {"nbytes", npz->size()}, {"arrays", std::move(arrays)}};
}

} // namespace sluice
