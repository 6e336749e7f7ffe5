#pragma once
// The Python host of pipeline host functions (core/pipeline/host_functions.h): Python callables
// in map, filter and from_generator, run in the interpreter that imported sluice. Names are
// resolved by sluice._resolve_callable (python/sluice/__init__.py), which also knows functions
// handed over as objects (lambdas) and reloads modules changed since they were imported.

namespace sluice::python {

// Installs the host for this process (at import of sluice._sluice).
void installPythonHost();

} // namespace sluice::python
