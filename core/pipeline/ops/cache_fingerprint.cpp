#include "pipeline/ops/cache_fingerprint.h"

#include "io/crc32c.h"
#include "io/writers/shard_writer.h"
#include "pipeline/ops/host_ops.h"
#include "pipeline/engine/op_registry.h"
#include "pipeline/engine/element.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace sluice::pipeline {
namespace {

constexpr std::size_t kSampleBytes = 64 * 1024;

// Path, size, modification time and a checksum of the first and last 64 KiB: a file rewritten
// with the same size (regenerated data) changes its time and, almost surely, its content.
std::string fileFact(const std::string &path)
{
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec)
        return "file " + path + "\tmissing";
    const auto mtime = std::filesystem::last_write_time(path, ec).time_since_epoch().count();
    std::uint32_t crc = 0;
    std::ifstream in(path, std::ios::binary);
    std::vector<char> buffer(kSampleBytes);
    auto sample = [&](std::uint64_t offset) {
        in.clear();
        in.seekg(std::streamoff(offset));
        in.read(buffer.data(), std::streamsize(buffer.size()));
        crc = crc32c(std::as_bytes(std::span(buffer.data(), std::size_t(in.gcount()))), crc);
    };
    sample(0);
    if (size > kSampleBytes)
        sample(std::max<std::uint64_t>(kSampleBytes, size - kSampleBytes));
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", crc);
    return "file " + path + "\t" + std::to_string(size) + " " + std::to_string(mtime) + " " + hex;
}

// The file paths a stage's parameters name: paths, globs and lists of them, and from_npy's
// feature → path(s) object.
void collectPaths(const nlohmann::json &value, std::vector<std::string> &out)
{
    if (value.is_string())
        out.push_back(value.get<std::string>());
    else if (value.is_array() || value.is_object())
        for (const auto &item : value)
            collectPaths(item, out);
}

// A fact line is "<kind> <name>\t<value>": what it is about, and what it says.
std::pair<std::string, std::string> splitFact(const std::string &line)
{
    const auto tab = line.find('\t');
    if (tab == std::string::npos)
        return {line, ""};
    return {line.substr(0, tab), line.substr(tab + 1)};
}

std::string sizeOf(const std::string &facts)
{
    const auto space = facts.find(' ');
    return facts.substr(0, space);
}

} // namespace

std::vector<std::string> cacheFingerprint(BuildContext &context, const std::string &cacheNodeId, const ElementSpec &spec)
{
    const Project &project = context.project();
    std::vector<std::string> lines{"spec\t" + spec.text()};
    std::set<std::string> files;
    for (const std::string &id : project.upstreamOf(cacheNodeId)) { // the facts are sorted below: any order
        const PipelineNode *node = project.findNode(id);
        if (!node)
            continue;
        // The seed is a fact of its own (the one drawn, set or not), so a new seed reads as such.
        nlohmann::json params = node->params;
        if (params.is_object())
            params.erase("seed");
        lines.push_back("stage " + id + "\t" + node->op + " " + params.dump());
        const OpInfo *op = findOp(node->op);
        if (!op)
            continue;
        for (const ParamInfo &p : op->params) {
            if (p.name == "seed") {
                std::optional<std::int64_t> own;
                if (node->params.contains("seed") && node->params["seed"].is_number_integer())
                    own = node->params["seed"].get<std::int64_t>();
                lines.push_back("seed " + id + "\t" + std::to_string(context.seedFor(*node, own)));
            }
            const bool names = p.type == "path" || p.type == "path|glob|list" || p.type == "features";
            if (!names || !node->params.contains(p.name))
                continue;
            std::vector<std::string> patterns;
            collectPaths(node->params[p.name], patterns);
            for (const auto &pattern : patterns)
                if (auto expanded = project.expandFiles(pattern); expanded.ok())
                    for (const auto &file : *expanded)
                        // load names dataset folders: each is known by its manifest, which
                        // every save of it rewrites.
                        files.insert(node->op == "load" && std::filesystem::is_directory(file)
                                         ? (std::filesystem::path(file) / kDatasetManifestName).string()
                                         : file);
        }
        if (const auto function = describeHostFunction(project, *node); function && !function->file.empty())
            files.insert(function->file);
    }
    for (const auto &f : files)
        lines.push_back(fileFact(f));
    std::sort(lines.begin() + 1, lines.end());
    return lines;
}

std::string fingerprintDifference(const std::vector<std::string> &written, const std::vector<std::string> &now)
{
    std::map<std::string, std::string> was, is;
    for (const auto &l : written)
        was.insert(splitFact(l));
    for (const auto &l : now)
        is.insert(splitFact(l));
    auto say = [](const std::string &key, const std::string *before, const std::string *after) -> std::string {
        const std::string kind = key.substr(0, key.find(' '));
        const std::string name = key.find(' ') == std::string::npos ? "" : key.substr(key.find(' ') + 1);
        if (kind == "spec")
            return "its elements differ (were " + (before ? *before : "?") + ", now " + (after ? *after : "?") + ")";
        if (kind == "stage")
            return !before ? "stage '" + name + "' was added upstream"
                   : !after ? "stage '" + name + "' was removed upstream"
                            : "stage '" + name + "' changed its op or parameters";
        if (kind == "seed")
            return "stage '" + name + "' draws another seed (" + (before ? *before : "none") + " → " + (after ? *after : "none") + ")";
        if (kind == "file") {
            if (!before)
                return "stages upstream now read " + name;
            if (!after)
                return "stages upstream no longer read " + name;
            if (*after == "missing")
                return "source file " + name + " is gone";
            if (sizeOf(*before) != sizeOf(*after))
                return "source file " + name + " changed (size " + sizeOf(*before) + " → " + sizeOf(*after) + " bytes)";
            return "source file " + name + " changed (rewritten since the cache was written)";
        }
        return "what it was written from changed (" + key + ")";
    };
    // The spec first (the plainest reason), then stages, seeds and files in order.
    for (const char *kind : {"spec", "stage", "seed", "file", ""}) {
        for (const auto &[key, value] : is) {
            if (std::string(kind).size() && key.rfind(kind, 0) != 0)
                continue;
            const auto it = was.find(key);
            if (it == was.end())
                return say(key, nullptr, &value);
            if (it->second != value)
                return say(key, &it->second, &value);
        }
        for (const auto &[key, value] : was)
            if ((!std::string(kind).size() || key.rfind(kind, 0) == 0) && !is.count(key))
                return say(key, &value, nullptr);
    }
    return {};
}

} // namespace sluice::pipeline
