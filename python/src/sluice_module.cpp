// sluice._sluice: the extension module under `import sluice` (python/sluice/__init__.py). It
// exposes projects, pipelines over them and the op registry; batches come back as numpy arrays
// that are views of the pipeline's own buffers (no copy), kept alive by the arrays themselves.
// Documents and statistics cross as JSON text, which the Python side parses: one format for
// the project file, `sluice run --json` and Python.
//
// Threading: the GIL is released while a pipeline is waited on; every call comes from Python.
#include "numpy_convert.h"
#include "python_host.h"

#include "pipeline/engine/op_registry.h"
#include "pipeline/engine/pipeline.h"
#include "project/project.h"
#include "train/loop/trainer.h"
#include "train/loop/training_config.h"

#include <atomic>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace sluice::python {
namespace {

// Errors as the CLI words them, as the Python exception a user expects for their kind.
[[noreturn]] void raise(const Error &error)
{
    PyObject *type = PyExc_ValueError;
    if (error.kind == Error::Kind::NotFound)
        type = PyExc_FileNotFoundError;
    else if (error.kind == Error::Kind::IoError)
        type = PyExc_OSError;
    PyErr_SetString(type, error.message().c_str());
    throw py::error_already_set();
}

template <typename T> T valueOrRaise(Result<T> result)
{
    if (!result.ok())
        raise(result.error());
    return std::move(result).value();
}

class PythonPipeline
{
public:
    PythonPipeline(const Project &project, std::optional<std::string> node, std::optional<std::uint64_t> seed, int threads)
    {
        pipeline::PipelineOptions options;
        options.outputNode = std::move(node);
        options.seed = seed;
        options.threads = threads;
        // Without the GIL: Python functions in the pipeline are called (traced) while it is built.
        Result<std::unique_ptr<pipeline::Pipeline>> built = Error::invalid("pipeline", "not built");
        {
            py::gil_scoped_release release;
            built = pipeline::Pipeline::build(project, std::move(options));
        }
        m_pipeline = valueOrRaise(std::move(built));
        for (const auto &f : m_pipeline->elementSpec().features)
            m_names.push_back(f.name);
    }

    // The next element as {feature: array}, or None at the end of the pass. Waits without the
    // GIL; Ctrl-C (or any signal handler that raises) cancels the pipeline and re-raises.
    py::object next()
    {
        std::optional<py::error_already_set> interrupted;
        Result<std::optional<pipeline::Element>> r = Error::invalid("pipeline", "not run");
        {
            py::gil_scoped_release release;
            r = m_pipeline->next([&interrupted] {
                py::gil_scoped_acquire acquire;
                if (PyErr_CheckSignals() != 0) {
                    interrupted.emplace();
                    return true;
                }
                return false;
            });
        }
        if (interrupted)
            throw std::move(*interrupted);
        if (!r.ok())
            raise(r.error());
        if (!*r)
            return py::none();
        py::dict out;
        for (std::size_t i = 0; i < m_names.size(); ++i)
            out[py::str(m_names[i])] = toNumpy(std::move((**r).tensors[i]));
        return out;
    }

    // The pipeline's tasks may be waiting for the GIL to call a Python function: stopping them
    // (restart, destruction) happens without it.
    ~PythonPipeline()
    {
        py::gil_scoped_release release;
        m_pipeline.reset();
    }
    void restart()
    {
        py::gil_scoped_release release;
        m_pipeline->restart();
    }
    void setConsumerAttached(bool attached) { m_pipeline->setConsumerAttached(attached); }
    std::string snapshotJson() const { return m_pipeline->snapshot().toJson().dump(); }
    std::vector<std::string> featureNames() const { return m_names; }
    std::string elementSpec() const { return m_pipeline->elementSpec().text(); }
    std::int64_t cardinality() const { return m_pipeline->cardinality(); }
    // (name, dtype, shape with -1 where a size is not known ahead) per feature.
    std::vector<std::tuple<std::string, std::string, std::vector<std::int64_t>>> featureSpecs() const
    {
        std::vector<std::tuple<std::string, std::string, std::vector<std::int64_t>>> specs;
        for (const auto &f : m_pipeline->elementSpec().features)
            specs.emplace_back(f.name, f.type.name(), std::vector<std::int64_t>(f.shape.begin(), f.shape.end()));
        return specs;
    }

private:
    std::unique_ptr<pipeline::Pipeline> m_pipeline;
    std::vector<std::string> m_names;
};

// The op registry, for the Python chain API: name, group, parameters in order.
std::string opsJson()
{
    nlohmann::json ops = nlohmann::json::array();
    for (const auto &op : pipeline::allOps()) {
        nlohmann::json params = nlohmann::json::array();
        for (const auto &p : op.params)
            params.push_back({{"name", p.name}, {"type", p.type}, {"default", p.defaultValue}, {"required", p.required}});
        ops.push_back({{"name", op.name}, {"group", op.group}, {"summary", op.summary}, {"params", params},
                       {"min_inputs", op.minInputs}, {"max_inputs", op.maxInputs}});
    }
    return ops.dump();
}

// Trains the project as `sluice run` does, with `overrides` applied as its --set would, each
// event handed to `onEvent` (the JSON of `sluice run --json`, as text) on this thread with the
// GIL held. A Python exception in the callback, or Ctrl-C, stops the run between steps and is
// raised here; a run that fails raises RuntimeError with its message.
py::dict train(const Project &project, const std::vector<std::string> &overrides, std::optional<std::uint64_t> seed,
               std::optional<int> threads, std::optional<int> epochs, py::object onEvent)
{
    nlohmann::json document = project.toJson();
    for (const auto &assignment : overrides)
        if (auto s = train::applySetting(document, assignment); !s.ok())
            raise(s.error());
    Project edited = valueOrRaise(Project::fromJson(document, project.folder(), project.path().empty() ? "project" : project.path()));
    train::TrainingConfig config = valueOrRaise(train::parseTrainingConfig(edited));
    if (seed)
        config.seed = *seed;
    if (threads)
        config.threads = *threads;
    if (epochs)
        config.epochs = *epochs;

    std::atomic<bool> cancel{false};
    std::optional<py::error_already_set> pythonError;
    auto stopWith = [&](py::error_already_set &&e) {
        if (!pythonError)
            pythonError.emplace(std::move(e));
        cancel = true;
    };
    train::TrainerOptions options;
    options.cancelFlag = &cancel;
    options.onEvent = [&](const events::Event &e) {
        if (onEvent.is_none())
            return;
        const std::string text = events::toJson(e).dump();
        py::gil_scoped_acquire acquire;
        try {
            onEvent(text);
        } catch (py::error_already_set &error) {
            stopWith(std::move(error));
        }
    };
    options.betweenSteps = [&] {
        py::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0)
            stopWith(py::error_already_set());
    };
    train::RunOutcome outcome;
    std::optional<Error> refused;
    {
        py::gil_scoped_release release; // the pipeline's Python functions run on its threads
        auto created = train::Trainer::create(edited, config, options);
        if (created.ok()) {
            auto trainer = std::move(created).value();
            outcome = trainer->run();
        } else {
            refused = created.error();
        } // the trainer's threads and the pipeline are gone before Python goes on
    }
    if (refused)
        raise(*refused);
    if (pythonError)
        throw std::move(*pythonError);
    if (outcome.status == train::RunStatus::Failed)
        throw std::runtime_error(outcome.error ? outcome.error->message() : std::string("the run failed"));
    py::dict result;
    result["status"] = train::runStatusName(outcome.status);
    result["steps"] = outcome.steps;
    result["epochs"] = outcome.epochs;
    return result;
}

} // namespace
} // namespace sluice::python

PYBIND11_MODULE(_sluice, m)
{
    using namespace sluice;
    using sluice::python::PythonPipeline;
    using sluice::python::valueOrRaise;
    m.doc() = "Sluice's core: projects, pipelines and the op registry (use the `sluice` package).";
    sluice::python::installPythonHost();
    // numpy 2 changed the array descriptor's layout; pybind11 reads it correctly from 2.12 on.
    m.attr("pybind11_version") = py::make_tuple(PYBIND11_VERSION_MAJOR, PYBIND11_VERSION_MINOR);

    py::class_<Project>(m, "Project")
        .def_static("load", [](const std::string &path) { return valueOrRaise(Project::load(path)); }, py::arg("path"))
        .def_static("from_json", [](const std::string &text, const std::string &folder) {
            return valueOrRaise(Project::fromText(text, folder, "<project>"));
        }, py::arg("text"), py::arg("folder"))
        .def("to_json", [](const Project &p) { return p.toJson().dump(); })
        .def("save", [](Project &p, const std::string &path) {
            if (auto s = p.save(path); !s.ok())
                sluice::python::raise(s.error());
        }, py::arg("path"))
        .def_property_readonly("path", &Project::path)
        .def_property_readonly("folder", &Project::folder);

    py::class_<PythonPipeline>(m, "Pipeline")
        .def(py::init<const Project &, std::optional<std::string>, std::optional<std::uint64_t>, int>(), py::arg("project"),
             py::arg("node"), py::arg("seed"), py::arg("threads"))
        .def("next", &PythonPipeline::next)
        .def("restart", &PythonPipeline::restart)
        .def("set_consumer_attached", &PythonPipeline::setConsumerAttached)
        .def("snapshot_json", &PythonPipeline::snapshotJson)
        .def("feature_names", &PythonPipeline::featureNames)
        .def("element_spec", &PythonPipeline::elementSpec)
        .def("feature_specs", &PythonPipeline::featureSpecs)
        .def("cardinality", &PythonPipeline::cardinality);

    m.def("ops_json", &sluice::python::opsJson);
    m.def("train", &sluice::python::train, py::arg("project"), py::arg("overrides"), py::arg("seed"), py::arg("threads"),
          py::arg("epochs"), py::arg("on_event"));
}
