#pragma once
// What file-reading sources share: turning a parameter (a path, a glob pattern, or a list of
// them) into files, and turning io errors into build errors that name the node and parameter.

#include "pipeline/engine/build_context.h"
#include "pipeline/engine/op_registry.h"

#include <string>
#include <vector>

namespace sluice::pipeline {

// Every file `value` names, in order (each pattern's matches sorted); fails naming the pattern
// that matches nothing or the path that does not exist. Expanded once per node and parameter;
// the list lives as long as the build context.
const std::vector<std::string> &expandSourceFiles(BuildContext &context, Params &params, const std::string &param, const nlohmann::json &value);

// The files a sequential source reads: all of them, or the one an interleave's sub-pipeline keeps.
std::vector<std::string> filesInScope(BuildContext &context, Params &params, const std::vector<std::string> &files);

template <typename T>
T valueOrFail(Params &params, const std::string &param, Result<T> result)
{
    if (!result.ok())
        params.fail(param, result.error().message());
    return std::move(result).value();
}

void registerTfRecordSource(std::vector<OpInfo> &ops);
void registerCsvSource(std::vector<OpInfo> &ops);
void registerParquetSource(std::vector<OpInfo> &ops); // source_parquet.cpp
void registerFilesSource(std::vector<OpInfo> &ops);

} // namespace sluice::pipeline
