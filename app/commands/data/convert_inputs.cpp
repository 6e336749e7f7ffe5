#include "commands/data/convert_inputs.h"

#include "io/array_report.h"
#include "io/formats/npy_file.h"
#include "io/formats/tfrecord_reader.h"
#include "pipeline/sources/parquet_file.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

namespace sluice::commands {
namespace {

namespace fs = std::filesystem;

enum class Kind { Csv, TfRecord, Npy, Parquet, Images };

const char *kindName(Kind kind)
{
    switch (kind) {
    case Kind::Csv: return "CSV";
    case Kind::TfRecord: return "TFRecord";
    case Kind::Npy: return ".npy";
    case Kind::Parquet: return "Parquet";
    case Kind::Images: return "image folder";
    }
    return "?";
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

Result<Kind> kindOf(const std::string &path)
{
    std::error_code ec;
    if (!fs::exists(path, ec))
        return Error::notFound(path, "no such file or folder");
    if (fs::is_directory(path, ec))
        return Kind::Images;
    const std::string name = lower(path);
    if (name.ends_with(".csv") || name.ends_with(".tsv"))
        return Kind::Csv;
    if (name.ends_with(".npy"))
        return Kind::Npy;
    if (name.ends_with(".parquet") || name.ends_with(".pq"))
        return Kind::Parquet;
    if (TfRecordReader::sniff(path))
        return Kind::TfRecord;
    for (const char *ext : {".tfrecord", ".tfrecords", ".tfrec", ".tfrecord.gz", ".tfrecords.gz"})
        if (name.ends_with(ext))
            return Kind::TfRecord; // damaged: from_tfrecord will say how
    return Error::unsupported(path, "not a CSV (.csv, .tsv), TFRecord, .npy or Parquet (.parquet) file, nor an image folder");
}

std::string joined(const std::vector<std::string> &names)
{
    std::string s;
    for (const auto &n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

// --features checked against what the input has; the input's own list when none is given.
Result<std::vector<std::string>> chosen(const std::vector<std::string> &selected, const std::vector<std::string> &available,
                                        const std::vector<std::string> &byDefault)
{
    if (selected.empty())
        return byDefault;
    std::set<std::string> seen;
    for (const auto &name : selected) {
        if (std::find(available.begin(), available.end(), name) == available.end())
            return Error::invalid("--features", "'" + name + "' is not a feature of the input (it has: " + joined(available) + ")");
        if (!seen.insert(name).second)
            return Error::invalid("--features", "'" + name + "' is named twice");
    }
    return selected;
}

// Column types as `sluice inspect` infers them over every file: whole numbers int64, other
// numbers float32 (make_csv_dataset's choice for floats), anything else string. An empty field
// reads as NaN in a numeric column (as pandas reads it; the column is then float32) and as ""
// in a string one.
Result<ConvertSource> csvSource(const std::vector<std::string> &inputs, const std::vector<std::string> &selected)
{
    ConvertSource source;
    struct Column
    {
        std::string dtype;
        std::uint64_t empty = 0;
    };
    std::vector<std::string> names;
    std::map<std::string, Column> columns;
    const bool tsv = lower(inputs.front()).ends_with(".tsv");
    std::uint64_t rows = 0;
    for (const auto &path : inputs) {
        if (lower(path).ends_with(".tsv") != tsv)
            return Error::invalid(path, "mixes tab- and comma-separated files; convert them one kind at a time");
        auto report = inspectFile(path, {});
        if (!report)
            return report.error();
        std::vector<std::string> fileNames;
        for (const auto &c : (*report)["columns"]) {
            const std::string name = c["name"].get<std::string>();
            fileNames.push_back(name);
            Column &column = columns[name];
            const std::string dtype = c["dtype"].get<std::string>();
            // The widest type any file needs: string over float over int.
            if (column.dtype.empty() || dtype == "string" || (dtype == "float64" && column.dtype == "int64"))
                column.dtype = dtype;
            column.empty += c["empty"].get<std::uint64_t>();
        }
        if (names.empty())
            names = fileNames;
        else if (fileNames != names)
            return Error::invalid(path, "has the columns " + joined(fileNames) + " where " + inputs.front() + " has " + joined(names));
        const std::uint64_t fileRows = (*report)["rows"].get<std::uint64_t>();
        source.files.push_back(path);
        source.fileRows.push_back(fileRows);
        rows += fileRows;
    }
    auto features = chosen(selected, names, names);
    if (!features)
        return features.error();
    nlohmann::json types = nlohmann::json::object(), defaults = nlohmann::json::object();
    for (const auto &name : *features) {
        const Column &c = columns[name];
        const bool isString = c.dtype == "string";
        types[name] = isString ? "string" : c.empty > 0 || c.dtype == "float64" ? "float32" : "int64";
        if (c.empty > 0)
            defaults[name] = isString ? nlohmann::json("") : nlohmann::json(std::numeric_limits<double>::quiet_NaN());
    }
    source.node.params = {{"filenames", inputs}, {"columns", types}};
    if (!defaults.empty())
        source.node.params["column_defaults"] = defaults;
    if (tsv)
        source.node.params["field_delim"] = "\t";
    source.node.op = "from_csv";
    source.features = *features;
    source.fileParam = "filenames";
    source.rows = rows;
    return source;
}

// The feature spec as `sluice inspect` finds it in every record of every file: a feature with
// the same number of values in every record is fixed-length (one value: a scalar).
Result<ConvertSource> tfrecordSource(const std::vector<std::string> &inputs, const std::vector<std::string> &selected)
{
    ConvertSource source;
    struct Feature
    {
        std::string dtype;
        std::uint64_t minLength = std::numeric_limits<std::uint64_t>::max(), maxLength = 0, records = 0;
        std::string firstFile;
    };
    std::map<std::string, Feature> found;
    std::string compression;
    std::uint64_t rows = 0;
    for (const auto &path : inputs) {
        auto report = inspectFile(path, {});
        if (!report)
            return report.error();
        const std::string fileCompression = (*report)["compression"].get<std::string>();
        if (path == inputs.front())
            compression = fileCompression;
        else if (fileCompression != compression)
            return Error::invalid(path, "is " + std::string(fileCompression.empty() ? "not compressed" : "GZIP-compressed") + " where " +
                                            inputs.front() + " is " + (compression.empty() ? "not" : "GZIP-compressed") +
                                            "; convert them one kind at a time");
        for (const auto &[name, f] : (*report)["features"].items()) {
            Feature &feature = found[name];
            const std::string dtype = f["dtype"].get<std::string>();
            if (feature.firstFile.empty())
                feature = {dtype, feature.minLength, 0, 0, path};
            else if (feature.dtype != dtype)
                feature.dtype = "mixed";
            feature.minLength = std::min(feature.minLength, f["min_length"].get<std::uint64_t>());
            feature.maxLength = std::max(feature.maxLength, f["max_length"].get<std::uint64_t>());
            feature.records += f["records"].get<std::uint64_t>();
        }
        const std::uint64_t fileRows = (*report)["records"].get<std::uint64_t>();
        source.files.push_back(path);
        source.fileRows.push_back(fileRows);
        rows += fileRows;
    }
    std::vector<std::string> names;
    for (const auto &[name, f] : found)
        names.push_back(name);
    auto features = chosen(selected, names, names);
    if (!features)
        return features.error();
    if (features->empty())
        return Error::invalid(inputs.front(), "its records hold no features");
    nlohmann::json spec = nlohmann::json::object();
    for (const auto &name : *features) {
        const Feature &f = found[name];
        const std::string what = "TFRecord feature '" + name + "'";
        if (f.dtype != "float32" && f.dtype != "int64" && f.dtype != "string")
            return Error::unsupported(what, "holds " + std::string(f.dtype == "mixed" ? "different kinds of values in different records"
                                                                                       : "no values in any record") +
                                                "; leave it out with --features");
        if (f.records != rows || f.minLength != f.maxLength)
            return Error::unsupported(what, "has " + std::to_string(f.minLength) + " to " + std::to_string(f.maxLength) + " values in " +
                                                std::to_string(f.records) + " of " + std::to_string(rows) +
                                                " records; convert reads features with the same number of values in every record (leave it "
                                                "out with --features)");
        spec[name] = {{"dtype", f.dtype}, {"shape", f.minLength == 1 ? nlohmann::json::array() : nlohmann::json::array({f.minLength})}};
    }
    source.node.op = "from_tfrecord";
    source.node.params = {{"filenames", inputs}, {"features", spec}};
    if (!compression.empty())
        source.node.params["compression_type"] = compression;
    source.features = *features;
    source.fileParam = "filenames";
    source.rows = rows;
    return source;
}

Result<ConvertSource> npySource(const std::vector<std::string> &inputs, const std::vector<std::string> &selected)
{
    ConvertSource source;
    std::vector<std::string> names;
    nlohmann::json files = nlohmann::json::object();
    std::optional<std::uint64_t> rows;
    for (const auto &path : inputs) {
        const std::string name = fs::path(path).stem().string();
        if (files.contains(name))
            return Error::invalid(path, "names the feature '" + name + "' a second time (each .npy file is the feature named after it)");
        auto array = openNpy(path);
        if (!array)
            return array.error();
        if (array->ndim() == 0)
            return Error::unsupported(path, "is a 0-d array: a feature needs rows (a first dimension)");
        if (rows && array->rowCount() != *rows)
            return Error::invalid(path, std::to_string(array->rowCount()) + " rows where " + inputs.front() + " has " + std::to_string(*rows));
        rows = array->rowCount();
        files[name] = path;
        names.push_back(name);
    }
    auto features = chosen(selected, names, names);
    if (!features)
        return features.error();
    // Only the files of the chosen features are read.
    nlohmann::json used = nlohmann::json::object();
    for (const auto &name : *features)
        used[name] = files[name];
    source.node.op = "from_npy";
    source.node.params = {{"features", used}};
    source.features = *features;
    source.rows = rows;
    return source;
}

// The columns from_parquet reads (numbers, booleans, strings, lists of numbers), as the first
// file's footer gives them; every later file must have the chosen ones with the same types. The
// rows come from the footers, so nothing is read twice. A null becomes NaN in a floating-point
// column and "" in a string one (as convert reads an empty CSV field); in other columns it stops
// the run naming the row.
Result<ConvertSource> parquetSource(const std::vector<std::string> &inputs, const std::vector<std::string> &selected)
{
    ConvertSource source;
    std::vector<pipeline::ParquetColumn> columns;
    std::vector<std::string> names, readable;
    std::uint64_t rows = 0;
    std::vector<std::string> features;
    for (const auto &path : inputs) {
        auto file = pipeline::ParquetFile::open(path);
        if (!file)
            return file.error();
        if (path == inputs.front()) {
            columns = (*file)->columns();
            for (const auto &c : columns) {
                names.push_back(c.name);
                if (c.type)
                    readable.push_back(c.name);
            }
            auto chosenNames = chosen(selected, names, readable);
            if (!chosenNames)
                return chosenNames.error();
            features = *chosenNames;
            if (features.empty())
                return Error::unsupported(path, "has no column convert can read (numbers, booleans, strings, lists of numbers)");
            for (const auto &name : features) {
                const auto &c = *std::find_if(columns.begin(), columns.end(), [&](const auto &column) { return column.name == name; });
                if (!c.type)
                    return Error::invalid("--features", "'" + name + "': " + c.unsupportedReason);
            }
        } else {
            for (const auto &name : features) {
                const auto &first = *std::find_if(columns.begin(), columns.end(), [&](const auto &column) { return column.name == name; });
                auto it = std::find_if((*file)->columns().begin(), (*file)->columns().end(), [&](const auto &column) { return column.name == name; });
                if (it == (*file)->columns().end())
                    return Error::invalid(path, "has no column '" + name + "' (" + inputs.front() + " has it)");
                if (it->parquetType != first.parquetType)
                    return Error::invalid(path, "column '" + name + "' is " + it->parquetType + " where " + inputs.front() + " has " + first.parquetType);
            }
        }
        source.files.push_back(path);
        source.fileRows.push_back(std::uint64_t((*file)->rows()));
        rows += std::uint64_t((*file)->rows());
    }
    nlohmann::json defaults = nlohmann::json::object();
    for (const auto &name : features) {
        const auto &c = *std::find_if(columns.begin(), columns.end(), [&](const auto &column) { return column.name == name; });
        if (c.type->isString)
            defaults[name] = "";
        else if (isFloating(c.type->dtype) && c.rowShape.empty() && !c.isList)
            defaults[name] = std::numeric_limits<double>::quiet_NaN();
    }
    source.node.op = "from_parquet";
    source.node.params = {{"filenames", inputs}, {"columns", features}};
    if (!defaults.empty())
        source.node.params["column_defaults"] = defaults;
    source.features = features;
    source.fileParam = "filenames";
    source.rows = rows;
    return source;
}

bool isImageName(const fs::path &path)
{
    const std::string ext = lower(path.extension().string());
    return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

// The pictures' encoded bytes, as from_files gives them: no decoding, so the dataset is as
// small as the folder and decode_image reads it back (TFRecord's image/encoded convention).
Result<ConvertSource> imageSource(const std::string &folder, const std::vector<std::string> &selected)
{
    ConvertSource source;
    source.node.op = "from_files";
    std::error_code ec;
    bool classFolders = false;
    std::vector<std::string> images;
    for (const auto &entry : fs::directory_iterator(folder, ec)) {
        if (entry.is_directory(ec))
            classFolders = true;
        else if (isImageName(entry.path()))
            images.push_back(entry.path().string());
    }
    if (ec)
        return Error::io(folder, "cannot list the folder: " + ec.message());
    std::vector<std::string> names{"image", "path"};
    std::vector<std::string> byDefault{"image"};
    if (classFolders) {
        // keras' image_dataset_from_directory layout: a sub-folder per class, labels inferred.
        source.node.params = {{"directory", folder}};
        names = {"image", "label", "path"};
        byDefault = {"image", "label"};
    } else {
        if (images.empty())
            return Error::invalid(folder, "holds no .jpg, .jpeg or .png files and no class sub-folders");
        std::sort(images.begin(), images.end());
        source.node.params = {{"files", images}};
        source.rows = images.size();
    }
    auto features = chosen(selected, names, byDefault);
    if (!features)
        return features.error();
    source.features = *features;
    return source;
}

} // namespace

Result<ConvertSource> convertSource(const std::vector<std::string> &inputs, const std::vector<std::string> &selected)
{
    if (inputs.empty())
        return Error::invalid("IN", "no input given");
    std::optional<Kind> kind;
    for (const auto &path : inputs) {
        auto k = kindOf(path);
        if (!k)
            return k.error();
        if (kind && *k != *kind)
            return Error::invalid(path, std::string("is a ") + kindName(*k) + " input where " + inputs.front() + " is a " + kindName(*kind) +
                                            " one; convert one kind at a time");
        kind = *k;
    }
    if (*kind == Kind::Images && inputs.size() > 1)
        return Error::invalid(inputs[1], "convert reads one image folder at a time");
    Result<ConvertSource> source = *kind == Kind::Csv        ? csvSource(inputs, selected)
                                   : *kind == Kind::TfRecord ? tfrecordSource(inputs, selected)
                                   : *kind == Kind::Npy      ? npySource(inputs, selected)
                                   : *kind == Kind::Parquet  ? parquetSource(inputs, selected)
                                                             : imageSource(inputs.front(), selected);
    if (source) {
        source->node.id = "source";
        source->kind = kindName(*kind);
    }
    return source;
}

} // namespace sluice::commands
