#pragma once
// The pipeline side of host functions (host_functions.h): `map` with "function": "python",
// `filter` with a "predicate", and the `from_generator` source. Names of callables resolve
// against the project's folder and its "python_path" key.

#include "pipeline/engine/build_context.h"
#include "pipeline/functions/map_functions.h"
#include "pipeline/engine/op_registry.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::pipeline {

// map's "python" function: the callable from "callable", its output spec from "output_signature"
// or, without one, from calling it once on zeros shaped as the input.
std::unique_ptr<MapFunction> makeHostMapFunction(BuildContext &context, Params &params, const Dataset &input);
// filter with "predicate": the elements for which the callable returns true.
std::shared_ptr<Dataset> buildHostFilter(BuildContext &context, Params &params, DatasetPtr input);

// Where "module:function" names are looked for: the project's folder, then its "python_path".
Result<std::vector<std::string>> hostSearchPath(const Project &project);
// The parameter of `node` that names a host function ("callable", "predicate", "generator"), or "".
std::string hostCallableParam(const PipelineNode &node);

// What the workbench shows of a node's host function.
struct HostFunctionInfo
{
    std::string param;    // the parameter naming it
    std::string callable; // "module:function"
    std::string doc;      // its docstring; empty when it has none
    std::string file;     // the file defining it; empty when not known
};
// Resolves the function `node` names (importing its module, or reloading it when its file
// changed); nothing when the node names none or it does not resolve (the build says why).
std::optional<HostFunctionInfo> describeHostFunction(const Project &project, const PipelineNode &node);

} // namespace sluice::pipeline
