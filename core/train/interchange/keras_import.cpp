#include "train/interchange/keras_import.h"

#include "io/formats/hdf5_file.h"
#include "io/formats/zip_reader.h"
#include "train/model/layer_registry.h"
#include "train/objectives/loss.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>

namespace sluice::train {

const std::vector<std::string> &kerasSupportedLayers()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const auto &l : knownLayers())
            n.push_back(l.className);
        return n;
    }();
    return names;
}

const std::vector<std::string> &kerasSupportedLosses() { return knownLosses(); }

namespace {

using nlohmann::json;

Result<std::vector<std::byte>> readWhole(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error::notFound(path, "no such file");
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        return Error::io(path, "cannot be read");
    std::vector<std::byte> bytes(chars.size());
    std::memcpy(bytes.data(), chars.data(), chars.size());
    return bytes;
}

Result<json> parseJson(std::span<const std::byte> bytes, const std::string &what)
{
    json document = json::parse(reinterpret_cast<const char *>(bytes.data()), reinterpret_cast<const char *>(bytes.data()) + bytes.size(), nullptr, false);
    if (document.is_discarded())
        return Error::corrupt(what, "is not JSON");
    return document;
}

Result<std::vector<std::byte>> zipMember(std::span<const std::byte> zip, const std::vector<ZipEntry> &entries, const std::string &name,
                                         const std::string &archive)
{
    const auto it = std::find_if(entries.begin(), entries.end(), [&](const ZipEntry &e) { return e.name == name; });
    if (it == entries.end())
        return Error::corrupt(archive, "has no " + name + ": not a Keras 3 .keras archive");
    if (it->method == ZipEntry::Method::Deflated)
        return inflateZipEntry(zip, *it, archive + ":" + name);
    const auto part = zip.subspan(it->dataOffset, it->uncompressedSize);
    if (zipCrc32(part) != it->crc32)
        return Error::corrupt(archive + ":" + name, "CRC-32 mismatch (the archive is damaged)");
    return std::vector<std::byte>(part.begin(), part.end());
}

Result<std::vector<ImportedWeight>> readWeights(const Hdf5File &h5, const KerasModelConfig &config)
{
    if (!h5.isGroup("layers"))
        return Error::corrupt(h5.what(), "is not a Keras 3 weights file (it has no \"layers\" group)");
    std::vector<ImportedWeight> weights;
    for (const auto &g : config.weightGroups) {
        auto members = h5.members(g.group);
        if (!members) {
            Error e = Error::corrupt(h5.what(), "has no weights for layer '" + g.layer + "' (no " + g.group + "): are they this model's?");
            e.layer = g.layer;
            return e;
        }
        if (members->size() != g.names.size()) {
            Error e = Error::corrupt(h5.what(), "layer '" + g.layer + "' has " + std::to_string(members->size()) + " arrays in " + g.group +
                                                    ", its config needs " + std::to_string(g.names.size()));
            e.layer = g.layer;
            return e;
        }
        for (std::size_t i = 0; i < g.names.size(); ++i) {
            auto array = h5.readFloats(g.group + "/" + std::to_string(i));
            if (!array)
                return array.error();
            weights.push_back({g.layer + "/" + g.names[i], std::move(array->shape), std::move(array->values)});
        }
    }
    return weights;
}

} // namespace

Result<KerasImport> importKerasModel(const std::string &path, const std::string &weightsPath)
{
    auto bytes = readWhole(path);
    if (!bytes)
        return bytes.error();
    KerasImport result;
    result.source = path;
    const bool archive = bytes->size() >= 4 && (*bytes)[0] == std::byte('P') && (*bytes)[1] == std::byte('K');
    std::optional<Hdf5File> h5;
    if (archive) {
        auto entries = readZipDirectory(*bytes, path);
        if (!entries)
            return entries.error();
        auto configBytes = zipMember(*bytes, *entries, "config.json", path);
        if (!configBytes)
            return configBytes.error();
        auto document = parseJson(*configBytes, path + ":config.json");
        if (!document)
            return document.error();
        auto config = kerasModelConfig(*document);
        if (!config)
            return config.error();
        result.config = std::move(config).value();
        if (weightsPath.empty()) {
            auto image = zipMember(*bytes, *entries, "model.weights.h5", path);
            if (!image)
                return image.error();
            auto opened = Hdf5File::openImage(std::move(image).value(), path + ":model.weights.h5");
            if (!opened)
                return opened.error();
            h5 = std::move(opened).value();
        }
    } else {
        auto document = parseJson(*bytes, path);
        if (!document)
            return Error::corrupt(path, "is neither a .keras archive nor the JSON of model.to_json()");
        auto config = kerasModelConfig(*document);
        if (!config)
            return config.error();
        result.config = std::move(config).value();
    }
    if (!weightsPath.empty()) {
        auto opened = Hdf5File::open(weightsPath);
        if (!opened)
            return opened.error();
        h5 = std::move(opened).value();
    }
    if (h5) {
        auto weights = readWeights(*h5, result.config);
        if (!weights)
            return weights.error();
        result.weights = std::move(weights).value();
    }
    return result;
}

} // namespace sluice::train
