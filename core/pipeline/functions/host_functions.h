#pragma once
// Functions that a host language supplies to pipelines: Python callables named "module:function"
// in `map` ("function": "python"), `filter` ("predicate") and `from_generator`. The core knows them
// only through this interface, so it stays free of Python: the `sluice` Python package installs
// the host (the caller's interpreter). In a process without one, such nodes are refused at build
// time with the node named.
//
// Threading: a host serialises calls itself (Python's GIL); call() and test() may be called from
// many tasks at once and charge their time to the stage's StageStats (time inside the function,
// time waiting for the interpreter).

#include "io/error.h"
#include "pipeline/engine/element.h"
#include "pipeline/profile/stage_stats.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::pipeline {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// One element after another from a host generator; nothing at its end.
class HostGenerator
{
public:
    virtual ~HostGenerator() = default;
    virtual Result<std::optional<NamedTensors>> next(StageStats *stats) = 0;
};

class HostFunction
{
public:
    virtual ~HostFunction() = default;
    // map: the features in, the function's dict of features out.
    virtual Result<NamedTensors> call(const NamedTensors &features, StageStats *stats) const = 0;
    // filter: the predicate's truth for the features.
    virtual Result<bool> test(const NamedTensors &features, StageStats *stats) const = 0;
    // from_generator: a fresh generator (one per pass).
    virtual Result<std::unique_ptr<HostGenerator>> start(StageStats *stats) const = 0;
    virtual std::string doc() const = 0;        // the function's docstring, for the workbench
    virtual std::string sourceFile() const = 0; // the file defining it ("" when not known), for the workbench
};

class HostFunctions
{
public:
    virtual ~HostFunctions() = default;
    virtual std::string language() const = 0; // "Python"
    // Resolves "module:function", importing the module with `searchPath` first on its path.
    virtual Result<std::shared_ptr<const HostFunction>> resolve(const std::string &callable, const std::vector<std::string> &searchPath) = 0;
};

// The process's host, or null. Set once, by the host itself, before pipelines that use it are built.
void setHostFunctions(std::shared_ptr<HostFunctions> host);
// Or a way to start one the first time a pipeline needs it (the `sluice` executable starts its
// embedded interpreter only for projects that name Python functions).
void setHostFunctionsProvider(std::function<std::shared_ptr<HostFunctions>()> provider);
std::shared_ptr<HostFunctions> hostFunctions();

} // namespace sluice::pipeline
