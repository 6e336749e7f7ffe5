#pragma once
// The pipeline side of host functions (host_functions.h): `map` with "function": "python",
// `filter` with a "predicate", and the `from_generator` source. Names of callables resolve
// against the project's folder and its "python_path" key.

#include "pipeline/build_context.h"
#include "pipeline/map_functions.h"
#include "pipeline/op_registry.h"

#include <memory>

namespace sluice::pipeline {

// map's "python" function: the callable from "callable", its output spec from "output_signature"
// or, without one, from calling it once on zeros shaped as the input.
std::unique_ptr<MapFunction> makeHostMapFunction(BuildContext &context, Params &params, const Dataset &input);
// filter with "predicate": the elements for which the callable returns true.
std::shared_ptr<Dataset> buildHostFilter(BuildContext &context, Params &params, DatasetPtr input);

} // namespace sluice::pipeline
