#include "embedded_python.h"

#include "python_functions_source.h" // generated from python/sluice/_functions.py
#include "python_host.h"

#include <pybind11/embed.h>

namespace py = pybind11;

namespace sluice::app {

void offerEmbeddedPython()
{
    pipeline::setHostFunctionsProvider([]() -> std::shared_ptr<pipeline::HostFunctions> {
        // Without Python's own signal handlers: Ctrl-C stays the command line's (a checkpoint, then stop).
        py::initialize_interpreter(false);
        {
            // The resolver as a module of its own: the package itself (and its extension, a second
            // copy of the core) is not imported.
            py::object module = py::module_::import("types").attr("ModuleType")("_sluice_functions");
            py::exec(kPythonFunctionsSource, module.attr("__dict__"));
            py::module_::import("sys").attr("modules")["_sluice_functions"] = module;
        }
        // Pipeline tasks take the GIL for each call; this thread holds it no longer. The interpreter
        // is never finalised: it ends with the process.
        PyEval_SaveThread();
        return python::makePythonHost("_sluice_functions", "_resolve_callable");
    });
}

} // namespace sluice::app
