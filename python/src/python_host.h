#pragma once
// The Python host of pipeline host functions (core/pipeline/functions/host_functions.h): Python callables
// in map, filter and from_generator, run in the interpreter that imported sluice. Names are
// resolved by sluice._resolve_callable (python/sluice/__init__.py), which also knows functions
// handed over as objects (lambdas) and reloads modules changed since they were imported.

#include "pipeline/functions/host_functions.h"

#include <memory>
#include <string>

namespace sluice::python {

// A host whose names are resolved by calling `module`.`function`(name, search_path) (the code of
// python/sluice/_functions.py). The interpreter must be running.
std::shared_ptr<pipeline::HostFunctions> makePythonHost(std::string module, std::string function);

// The package's host (at import of sluice._sluice): resolves through sluice._functions.
void installPythonHost();

} // namespace sluice::python
