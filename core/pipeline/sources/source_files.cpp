#include "pipeline/sources/source_files.h"

namespace sluice::pipeline {
namespace {
std::vector<std::string> expandOnce(BuildContext &context, Params &params, const std::string &param, const nlohmann::json &value);
} // namespace

const std::vector<std::string> &expandSourceFiles(BuildContext &context, Params &params, const std::string &param, const nlohmann::json &value)
{
    // Once per node and parameter: an interleave's per-file copies of the source all need it.
    return *context.buildOnce<std::vector<std::string>>(params.node().id, "files " + param + " " + value.dump(),
                                                         [&] { return expandOnce(context, params, param, value); });
}

namespace {
std::vector<std::string> expandOnce(BuildContext &context, Params &params, const std::string &param, const nlohmann::json &value)
{
    std::vector<std::string> patterns;
    if (value.is_string()) {
        patterns.push_back(value.get<std::string>());
    } else if (value.is_array() && !value.empty()) {
        for (const auto &item : value) {
            if (!item.is_string())
                params.fail(param, "must hold only paths (strings), got " + item.dump());
            patterns.push_back(item.get<std::string>());
        }
    } else {
        params.fail(param, "must be a path, a glob pattern or a non-empty list of them");
    }
    std::vector<std::string> files;
    for (const auto &pattern : patterns) {
        auto expanded = context.project().expandFiles(pattern);
        if (!expanded.ok())
            params.fail(param, expanded.error().message());
        files.insert(files.end(), expanded->begin(), expanded->end());
    }
    return files;
}
} // namespace

std::vector<std::string> filesInScope(BuildContext &context, Params &params, const std::vector<std::string> &files)
{
    context.noteFiles(params.node().id, files.size());
    if (auto f = context.fileFilter())
        return {files.at(*f)};
    return files;
}

} // namespace sluice::pipeline
