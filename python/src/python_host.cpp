// Each call takes the GIL: the time spent waiting for it and the time inside the function are
// charged to the stage, so the profile can say when Python, not the pipeline, is the limit.
// Python objects are released with the GIL held, except while the interpreter shuts down, when
// they are left to it.
#include "python_host.h"

#include "numpy_convert.h"
#include "pipeline/functions/host_functions.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace sluice::python {
namespace {

bool interpreterGone()
{
#if PY_VERSION_HEX >= 0x030D0000
    return !Py_IsInitialized() || Py_IsFinalizing();
#else
    return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

// A Python object that may be dropped on any thread.
class HeldObject
{
public:
    explicit HeldObject(py::object object) : m_object(std::move(object)) {}
    HeldObject(const HeldObject &) = delete;
    HeldObject &operator=(const HeldObject &) = delete;
    ~HeldObject()
    {
        if (interpreterGone()) {
            m_object.release();
            return;
        }
        py::gil_scoped_acquire gil;
        m_object = py::object();
    }
    const py::object &get() const { return m_object; }

private:
    py::object m_object;
};

// The exception being handled, with its traceback, as Python prints it.
std::string describe(py::error_already_set &error)
{
    try {
        py::object lines = py::module_::import("traceback").attr("format_exception")(error.type(), error.value(), error.trace());
        std::string text = py::str("").attr("join")(lines).cast<std::string>();
        while (!text.empty() && text.back() == '\n')
            text.pop_back();
        return "the Python function raised:\n" + text;
    } catch (...) {
        return std::string("the Python function raised: ") + error.what();
    }
}

// Times a call: GIL wait and time inside, charged to `stats` (null: not counted).
class CallTimer
{
public:
    explicit CallTimer(pipeline::StageStats *stats) : m_stats(stats), m_start(pipeline::nowNs()) {}
    void acquired() { m_acquired = pipeline::nowNs(); }
    ~CallTimer()
    {
        if (!m_stats || !m_acquired)
            return;
        m_stats->add(m_stats->hostWaitNs, m_acquired - m_start);
        m_stats->add(m_stats->hostNs, pipeline::nowNs() - m_acquired);
    }

private:
    pipeline::StageStats *m_stats;
    std::int64_t m_start, m_acquired = 0;
};

py::dict toDict(const pipeline::NamedTensors &features)
{
    py::dict d;
    for (const auto &[name, tensor] : features)
        d[py::str(name)] = toNumpy(pipeline::Tensor(tensor));
    return d;
}

Result<pipeline::NamedTensors> fromDict(py::handle value, const char *what)
{
    if (!py::isinstance<py::dict>(value))
        return Error::invalid("", std::string("the Python function ") + what + " a " +
                                      std::string(py::str(value.get_type().attr("__name__"))) + "; it must give a dict of arrays {name: array}");
    pipeline::NamedTensors out;
    for (auto [key, item] : py::reinterpret_borrow<py::dict>(value)) {
        if (!py::isinstance<py::str>(key))
            return Error::invalid("", std::string("the Python function ") + what + " a dict with a key that is not a str: " +
                                          std::string(py::repr(key)));
        const std::string name = key.cast<std::string>();
        auto tensor = fromNumpy(item, name);
        if (!tensor.ok())
            return tensor.error();
        out.emplace_back(name, std::move(tensor).value());
    }
    return out;
}

class PythonGenerator final : public pipeline::HostGenerator
{
public:
    explicit PythonGenerator(py::object iterator) : m_iterator(std::move(iterator)) {}
    Result<std::optional<pipeline::NamedTensors>> next(pipeline::StageStats *stats) override
    {
        CallTimer timer(stats);
        py::gil_scoped_acquire gil;
        timer.acquired();
        try {
            PyObject *item = PyIter_Next(m_iterator.get().ptr());
            if (!item) {
                if (PyErr_Occurred())
                    throw py::error_already_set();
                return std::optional<pipeline::NamedTensors>();
            }
            py::object value = py::reinterpret_steal<py::object>(item);
            auto features = fromDict(value, "yielded");
            if (!features.ok())
                return features.error();
            return std::optional<pipeline::NamedTensors>(std::move(features).value());
        } catch (py::error_already_set &e) {
            return Error::invalid("", describe(e));
        }
    }

private:
    HeldObject m_iterator;
};

class PythonFunction final : public pipeline::HostFunction
{
public:
    explicit PythonFunction(py::object function) : m_function(std::move(function)) {}

    Result<pipeline::NamedTensors> call(const pipeline::NamedTensors &features, pipeline::StageStats *stats) const override
    {
        CallTimer timer(stats);
        py::gil_scoped_acquire gil;
        timer.acquired();
        try {
            py::object result = m_function.get()(toDict(features));
            return fromDict(result, "returned");
        } catch (py::error_already_set &e) {
            return Error::invalid("", describe(e));
        }
    }

    Result<bool> test(const pipeline::NamedTensors &features, pipeline::StageStats *stats) const override
    {
        CallTimer timer(stats);
        py::gil_scoped_acquire gil;
        timer.acquired();
        try {
            py::object result = m_function.get()(toDict(features));
            // A bool, or a numpy bool scalar / 0-d array, as tf.data's predicate returns.
            return bool(py::module_::import("numpy").attr("asarray")(result).attr("item")().cast<bool>());
        } catch (py::error_already_set &e) {
            return Error::invalid("", describe(e));
        } catch (py::cast_error &) {
            return Error::invalid("", "the predicate must return a bool (or a 0-d bool array)");
        }
    }

    Result<std::unique_ptr<pipeline::HostGenerator>> start(pipeline::StageStats *stats) const override
    {
        CallTimer timer(stats);
        py::gil_scoped_acquire gil;
        timer.acquired();
        try {
            py::object iterator = py::iter(m_function.get()());
            return std::unique_ptr<pipeline::HostGenerator>(std::make_unique<PythonGenerator>(std::move(iterator)));
        } catch (py::error_already_set &e) {
            return Error::invalid("", describe(e));
        }
    }

    std::string doc() const override
    {
        py::gil_scoped_acquire gil;
        py::object text = py::module_::import("inspect").attr("getdoc")(m_function.get());
        return text.is_none() ? std::string() : text.cast<std::string>();
    }

    std::string sourceFile() const override
    {
        py::gil_scoped_acquire gil;
        try {
            py::object file = py::module_::import("inspect").attr("getsourcefile")(m_function.get());
            return file.is_none() ? std::string() : file.cast<std::string>();
        } catch (py::error_already_set &) {
            return {}; // a builtin or a C extension's function: no source to open
        }
    }

private:
    HeldObject m_function;
};

class PythonHost final : public pipeline::HostFunctions
{
public:
    PythonHost(std::string module, std::string function) : m_module(std::move(module)), m_function(std::move(function)) {}
    std::string language() const override { return "Python"; }
    Result<std::shared_ptr<const pipeline::HostFunction>> resolve(const std::string &callable, const std::vector<std::string> &searchPath) override
    {
        py::gil_scoped_acquire gil;
        try {
            py::object function = py::module_::import(m_module.c_str()).attr(m_function.c_str())(callable, searchPath);
            return std::shared_ptr<const pipeline::HostFunction>(std::make_shared<PythonFunction>(std::move(function)));
        } catch (py::error_already_set &e) {
            // ImportError, AttributeError, TypeError: the message alone says it (no traceback of sluice's own lookup).
            return Error::invalid("", "\"" + callable + "\": " + std::string(py::str(e.value())));
        }
    }

private:
    std::string m_module, m_function;
};

} // namespace

std::shared_ptr<pipeline::HostFunctions> makePythonHost(std::string module, std::string function)
{
    return std::make_shared<PythonHost>(std::move(module), std::move(function));
}

void installPythonHost() { pipeline::setHostFunctions(makePythonHost("sluice._functions", "_resolve_callable")); }

} // namespace sluice::python
