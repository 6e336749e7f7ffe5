// The dataset manifest (manifest.json) of shard_writer.h: its JSON form, written by
// ShardedDatasetWriter::commit() and checked on reading, since a reader opens the files it
// names.
#include "io/writers/shard_writer.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace sluice {
namespace {

constexpr const char *kFormatTag = "sluice-dataset";
constexpr int kVersion = 1;

// The Feature list kind a column is stored as in a tf.train.Example.
const char *tfDtype(const DatasetFeature &f) { return f.isString ? "string" : isFloating(f.dtype) ? "float32" : "int64"; }

// Reads a required field of `object`; on a missing or mistyped one, sets `error` (first only).
template <typename Check>
const nlohmann::json *field(const nlohmann::json &object, const char *key, Check isRightType, const char *expected, const std::string &where,
                            std::optional<Error> &error)
{
    const auto it = object.find(key);
    if (it != object.end() && isRightType(*it))
        return &*it;
    if (!error)
        error = Error::corrupt(where, std::string("\"") + key + "\" must be " + expected);
    return nullptr;
}

bool isString(const nlohmann::json &j) { return j.is_string(); }
bool isArray(const nlohmann::json &j) { return j.is_array(); }
bool isObject(const nlohmann::json &j) { return j.is_object(); }
bool isCount(const nlohmann::json &j) { return j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0); }

} // namespace

bool isDatasetFileName(const std::string &name)
{
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos && name.find('\0') == std::string::npos;
}

std::uint64_t DatasetManifest::records() const
{
    std::uint64_t n = 0;
    for (const Shard &s : shards)
        n += s.records;
    return n;
}

nlohmann::json manifestToJson(const DatasetManifest &m)
{
    const bool npy = m.format == DatasetFormat::Npy;
    nlohmann::json j;
    j["format"] = kFormatTag;
    j["version"] = kVersion;
    j["file_format"] = datasetFormatName(m.format);
    if (!npy)
        j["compression"] = m.compression == TfRecordWriter::Compression::Gzip ? "GZIP" : "";
    nlohmann::json features = nlohmann::json::array();
    for (const DatasetFeature &f : m.features) {
        nlohmann::json fj{{"name", f.name}, {"dtype", f.typeName()}};
        fj["shape"] = f.variableLength ? nlohmann::json(nullptr) : nlohmann::json(f.rowShape);
        if (!npy)
            fj["tf_dtype"] = tfDtype(f);
        features.push_back(std::move(fj));
    }
    j["features"] = std::move(features);
    nlohmann::json shards = nlohmann::json::array();
    for (const DatasetManifest::Shard &s : m.shards) {
        nlohmann::json sj{{"records", s.records}};
        if (npy) {
            nlohmann::json files = nlohmann::json::object();
            for (std::size_t i = 0; i < s.files.size() && i < m.features.size(); ++i)
                files[m.features[i].name] = s.files[i];
            sj["files"] = std::move(files);
        } else {
            sj["file"] = s.files.empty() ? std::string() : s.files.front();
        }
        shards.push_back(std::move(sj));
    }
    j["shards"] = std::move(shards);
    j["records"] = m.records();
    return j;
}

Result<DatasetManifest> manifestFromJson(const nlohmann::json &j, const std::string &what)
{
    if (!j.is_object() || !j.contains("format") || j["format"] != kFormatTag)
        return Error::corrupt(what, std::string("not a dataset manifest (\"format\" is not \"") + kFormatTag + "\")");
    std::optional<Error> error;
    if (const auto *v = field(j, "version", isCount, "a whole number", what, error); v && v->get<std::uint64_t>() > std::uint64_t(kVersion))
        return Error::unsupported(what, "written by a newer Sluice (manifest version " + std::to_string(v->get<std::uint64_t>()) + ")");
    DatasetManifest m;
    if (const auto *v = field(j, "file_format", isString, "\"tfrecord\" or \"npy\"", what, error)) {
        auto format = parseDatasetFormat(v->get<std::string>());
        if (!format)
            return Error::corrupt(what, format.error().reason);
        m.format = *format;
    }
    if (error)
        return *error;
    const bool npy = m.format == DatasetFormat::Npy;
    if (!npy && j.contains("compression")) {
        auto c = j["compression"].is_string() ? TfRecordReader::parseCompression(j["compression"].get<std::string>())
                                              : Result<TfRecordReader::Compression>(Error::invalid("", "\"compression\" must be a string"));
        if (!c)
            return Error::corrupt(what, "\"compression\": " + c.error().reason);
        m.compression = *c;
    }

    const auto *features = field(j, "features", isArray, "a list", what, error);
    if (!features)
        return *error;
    std::set<std::string> names;
    for (const auto &fj : *features) {
        const std::string where = what + ": feature " + std::to_string(m.features.size());
        if (!fj.is_object())
            return Error::corrupt(where, "must be an object");
        DatasetFeature f;
        if (const auto *v = field(fj, "name", isString, "a string", where, error))
            f.name = v->get<std::string>();
        if (const auto *v = field(fj, "dtype", isString, "a dtype name", where, error)) {
            const std::string type = v->get<std::string>();
            if (type == "string") {
                f.isString = true;
                f.dtype = DType::UInt8;
            } else if (auto d = dtypeFromName(type)) {
                f.dtype = *d;
            } else if (!error) {
                error = Error::corrupt(where, "unknown dtype '" + type + "'");
            }
        }
        if (error)
            return *error;
        if (f.name.empty() || !names.insert(f.name).second)
            return Error::corrupt(where, "a feature name must be given, once");
        const auto shape = fj.find("shape");
        if (shape == fj.end() || shape->is_null()) {
            f.variableLength = true;
        } else {
            if (!shape->is_array())
                return Error::corrupt(where, "\"shape\" must be a list of sizes, or null for variable length");
            for (const auto &d : *shape) {
                if (!isCount(d))
                    return Error::corrupt(where, "\"shape\" must be a list of sizes, or null for variable length");
                f.rowShape.push_back(d.get<std::uint64_t>());
            }
        }
        m.features.push_back(std::move(f));
    }

    const auto *shards = field(j, "shards", isArray, "a list", what, error);
    if (!shards)
        return *error;
    for (const auto &sj : *shards) {
        const std::string where = what + ": shard " + std::to_string(m.shards.size());
        if (!sj.is_object())
            return Error::corrupt(where, "must be an object");
        DatasetManifest::Shard s;
        if (const auto *v = field(sj, "records", isCount, "a whole number", where, error))
            s.records = v->get<std::uint64_t>();
        if (npy) {
            if (const auto *files = field(sj, "files", isObject, "an object naming a file per feature", where, error)) {
                for (const DatasetFeature &f : m.features) {
                    const auto it = files->find(f.name);
                    if (it == files->end() || !it->is_string())
                        return Error::corrupt(where, "no file for feature '" + f.name + "'");
                    s.files.push_back(it->get<std::string>());
                }
            }
        } else if (const auto *v = field(sj, "file", isString, "a file name", where, error)) {
            s.files.push_back(v->get<std::string>());
        }
        if (error)
            return *error;
        // A reader opens these inside the dataset's folder, never elsewhere.
        for (const auto &file : s.files)
            if (!isDatasetFileName(file))
                return Error::corrupt(where, "'" + file + "' is not a file name in the dataset's folder");
        m.shards.push_back(std::move(s));
    }
    if (j.contains("records") && (!isCount(j["records"]) || j["records"].get<std::uint64_t>() != m.records()))
        return Error::corrupt(what, "\"records\" is not the sum of the shards' records (" + std::to_string(m.records()) + ")");
    return m;
}

Result<DatasetManifest> readDatasetManifest(const std::string &folder)
{
    const std::string path = (std::filesystem::path(folder) / kDatasetManifestName).string();
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error::notFound(folder, "no manifest.json: not a dataset, or one still being written (or whose writing failed)");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad())
        return Error::io(path, "cannot read");
    const auto j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded())
        return Error::corrupt(path, "not valid JSON");
    return manifestFromJson(j, path);
}

} // namespace sluice
