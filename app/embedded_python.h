#pragma once
// Python functions in projects run by the `sluice` executable (CLI and workbench): the first
// pipeline that names one starts an embedded interpreter (the system's Python, its numpy) and the
// same host as the `sluice` Python package (python/src/python_host.h). Projects without Python
// functions never start it.

namespace sluice::app {

void offerEmbeddedPython();

} // namespace sluice::app
