#include "embedded_python.h"

#include "python_functions_source.h" // generated from python/sluice/_functions.py
#include "python_host.h"

#include <pybind11/embed.h>

#include <stdexcept>

namespace py = pybind11;

namespace sluice::app {
namespace {

// The host of a process whose interpreter did not start (no standard library of the Python it
// was built with, a PYTHONHOME pointing elsewhere): every function is refused with the reason,
// where Python itself would have ended the process.
class UnavailablePython final : public pipeline::HostFunctions
{
public:
    explicit UnavailablePython(std::string reason) : m_reason(std::move(reason)) {}
    std::string language() const override { return "Python"; }
    Result<std::shared_ptr<const pipeline::HostFunction>> resolve(const std::string &callable, const std::vector<std::string> &) override
    {
        return Error::invalid("", "\"" + callable + "\": the Python embedded in sluice (Python " PY_VERSION
                                  ") could not start: " + m_reason + ". It needs that Python's standard library and numpy "
                                  "installed on this machine; or run the project from Python with the sluice package");
    }

private:
    std::string m_reason;
};

} // namespace

void offerEmbeddedPython()
{
    pipeline::setHostFunctionsProvider([]() -> std::shared_ptr<pipeline::HostFunctions> {
        // Started from a configuration rather than Py_Initialize, so that a Python that cannot
        // start reports why instead of ending the process. Without Python's own signal handlers:
        // Ctrl-C stays the command line's (a checkpoint, then stop).
        PyConfig config;
        PyConfig_InitPythonConfig(&config);
        config.install_signal_handlers = 0;
        config.parse_argv = 0;
        try {
            py::initialize_interpreter(&config, 0, nullptr, false);
        } catch (const std::exception &e) {
            return std::make_shared<UnavailablePython>(e.what());
        }
        std::string failure;
        try {
            // The resolver as a module of its own: the package itself (and its extension, a second
            // copy of the core) is not imported.
            py::object module = py::module_::import("types").attr("ModuleType")("_sluice_functions");
            py::exec(kPythonFunctionsSource, module.attr("__dict__"));
            py::module_::import("sys").attr("modules")["_sluice_functions"] = module;
        } catch (py::error_already_set &e) {
            failure = e.what(); // the exception goes with the GIL still held
        }
        // Pipeline tasks take the GIL for each call; this thread holds it no longer. The interpreter
        // is never finalised: it ends with the process.
        PyEval_SaveThread();
        if (!failure.empty())
            return std::make_shared<UnavailablePython>(failure);
        return python::makePythonHost("_sluice_functions", "_resolve_callable");
    });
}

} // namespace sluice::app
