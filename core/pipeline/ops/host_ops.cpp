// Host (Python) functions in pipelines: map's "python" function, filter's predicate and the
// from_generator source, as tf.data's map(py_function), filter(predicate) and from_generator.
// Results are checked against the output signature with the node and feature named, so a
// function returning the wrong dtype or shape fails where it happened, not in a later stage.
#include "pipeline/ops/host_ops.h"

#include "pipeline/functions/host_functions.h"
#include "pipeline/engine/runtime.h"

#include <algorithm>
#include <cstring>

namespace sluice::pipeline {
namespace {

// A host's error (a Python traceback) as the node's.
Error atNode(const Error &error, const std::string &where) { return Error::make(error.kind, where, error.message()); }

std::vector<std::string> searchPath(const BuildContext &context)
{
    auto path = hostSearchPath(context.project());
    if (!path.ok())
        throw BuildFailure{path.error()};
    return std::move(path).value();
}

std::shared_ptr<const HostFunction> resolveCallable(BuildContext &context, Params &params, const std::string &param)
{
    const std::string name = params.string(param, std::nullopt);
    const auto colon = name.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == name.size())
        params.fail(param, "\"" + name + "\" is not of the form \"module:function\"");
    const auto host = hostFunctions();
    if (!host)
        params.fail(param, "Python functions run where Sluice is used from Python (import sluice), or by a sluice executable built "
                           "with Python embedded; this process has no Python");
    auto resolved = host->resolve(name, searchPath(context));
    if (!resolved.ok())
        params.fail(param, resolved.error().message());
    return std::move(resolved).value();
}

// {"x": {"dtype": "float32", "shape": [28, 28]}, ...}; null or -1 in a shape: not known ahead.
ElementSpec parseSignature(Params &params, const std::string &param)
{
    const nlohmann::json *raw = params.raw(param);
    if (!raw || !raw->is_object() || raw->empty())
        params.fail(param, "must map each feature's name to {\"dtype\": ..., \"shape\": [...]}");
    ElementSpec spec;
    for (const auto &[name, entry] : raw->items()) {
        const std::string at = "feature \"" + name + "\": ";
        if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string())
            params.fail(param, at + "needs a \"dtype\" (float32, int64, string, ...)");
        const auto type = valueTypeFromName(entry["dtype"].get<std::string>());
        if (!type)
            params.fail(param, at + "unknown dtype \"" + entry["dtype"].get<std::string>() + "\"");
        Shape shape;
        const nlohmann::json dims = entry.value("shape", nlohmann::json::array());
        if (!dims.is_array())
            params.fail(param, at + "\"shape\" must be a list of sizes");
        for (const auto &d : dims) {
            if (d.is_null())
                shape.push_back(-1);
            else if (d.is_number_integer() && d.get<std::int64_t>() >= -1)
                shape.push_back(d.get<std::int64_t>());
            else
                params.fail(param, at + "\"shape\" must hold sizes (null or -1 where unknown), not " + d.dump());
        }
        spec.features.push_back({name, *type, std::move(shape)});
    }
    return spec;
}

// The function's result as an element of `spec`: every feature present, of its dtype and shape.
Result<Element> toElement(NamedTensors &&values, const ElementSpec &spec, const std::string &where, const std::string &what)
{
    auto names = [&values] {
        std::string s;
        for (const auto &v : values)
            s += (s.empty() ? "" : ", ") + v.first;
        return s.empty() ? std::string("nothing") : s;
    };
    for (const auto &v : values)
        if (!spec.find(v.first))
            return Error::invalid(where, what + " feature \"" + v.first + "\", which the output signature lacks (it has: " + spec.names() + ")");
    Element element;
    element.tensors.resize(spec.features.size());
    for (std::size_t i = 0; i < spec.features.size(); ++i) {
        const FeatureSpec &f = spec.features[i];
        auto found = std::find_if(values.begin(), values.end(), [&f](const auto &v) { return v.first == f.name; });
        if (found == values.end())
            return Error::invalid(where, what + " no feature \"" + f.name + "\" (it " + what.substr(0, what.find(' ')) + ": " + names() + ")");
        const Tensor &t = found->second;
        bool shapeOk = t.shape().size() == f.shape.size();
        for (std::size_t d = 0; shapeOk && d < f.shape.size(); ++d)
            shapeOk = f.shape[d] < 0 || f.shape[d] == t.shape()[d];
        if (t.type() != f.type || !shapeOk)
            return Error::invalid(where, "feature \"" + f.name + "\" is " + t.type().name() + " " + shapeText(t.shape()) + "; the output signature says " +
                                             f.type.name() + " " + shapeText(f.shape));
        element.tensors[i] = std::move(found->second);
    }
    return element;
}

NamedTensors namedTensors(const ElementSpec &spec, Element &&element)
{
    NamedTensors named;
    named.reserve(spec.features.size());
    for (std::size_t i = 0; i < spec.features.size(); ++i)
        named.emplace_back(spec.features[i].name, std::move(element.tensors[i]));
    return named;
}

// Zeros shaped as the input (unknown sizes taken as 1): what the function is traced with.
NamedTensors zerosLike(const ElementSpec &spec)
{
    NamedTensors named;
    for (const auto &f : spec.features) {
        Shape shape = f.shape;
        for (auto &d : shape)
            d = d < 0 ? 1 : d;
        if (f.type.isString) {
            named.emplace_back(f.name, Tensor::strings(shape, std::vector<std::string>(std::size_t(elementCount(shape)))));
        } else {
            Tensor t = Tensor::allocate(f.type.dtype, shape);
            std::memset(t.mutableData(), 0, std::size_t(t.nbytes()));
            named.emplace_back(f.name, std::move(t));
        }
    }
    return named;
}

class HostMapFunction final : public MapFunction
{
public:
    HostMapFunction(BuildContext &context, Params &params, const Dataset &input)
        : m_input(input.spec()), m_where(params.where()), m_stats(context.statsFor(params.node()))
    {
        m_function = resolveCallable(context, params, "callable");
        if (params.has("output_signature")) {
            m_output = parseSignature(params, "output_signature");
            return;
        }
        // As tf.data traces a function: called once, on zeros, to learn what it returns. A
        // batch's unknown first size stays unknown in what comes out.
        auto traced = m_function->call(zerosLike(m_input), nullptr);
        if (!traced.ok())
            params.fail("callable", "failed when called on zeros shaped as its input to learn its output (give \"output_signature\" "
                                    "to skip this): " + traced.error().message());
        const bool batchUnknown = !m_input.features.empty() && !m_input.features[0].shape.empty() && m_input.features[0].shape[0] < 0;
        for (auto &[name, tensor] : traced.value()) {
            Shape shape = tensor.shape();
            if (batchUnknown && !shape.empty())
                shape[0] = -1;
            m_output.features.push_back({name, tensor.type(), std::move(shape)});
        }
        if (m_output.features.empty())
            params.fail("callable", "returned no features (it must return a dict of arrays)");
    }
    Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t) const override
    {
        auto result = m_function->call(namedTensors(m_input, std::move(element)), m_stats);
        if (!result.ok())
            return atNode(result.error(), m_where);
        return toElement(std::move(result).value(), m_output, m_where, "returned");
    }

private:
    ElementSpec m_input;
    std::string m_where;
    StageStats *m_stats;
    std::shared_ptr<const HostFunction> m_function;
};

class HostDataset final : public Dataset
{
public:
    using Make = std::function<std::unique_ptr<Iterator>(const IteratorContext &)>;
    HostDataset(ElementSpec spec, StageStats *stats, Make make) : Dataset(std::move(spec), stats), m_make(std::move(make)) {}

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override { return m_make(context); }

private:
    Make m_make;
};

class PredicateIterator final : public Iterator
{
public:
    PredicateIterator(const IteratorContext &context, std::unique_ptr<Iterator> input, ElementSpec spec,
                      std::shared_ptr<const HostFunction> predicate, std::string where, StageStats *stats)
        : m_runtime(context.runtime), m_input(std::move(input)), m_spec(std::move(spec)), m_predicate(std::move(predicate)),
          m_where(std::move(where)), m_stats(stats)
    {
    }
    Result<Poll> next(Element &out) override
    {
        for (;;) {
            if (m_runtime->cancelled())
                return cancelledError();
            auto r = m_input->next(out);
            if (!r.ok() || *r != Poll::Ready)
                return r;
            NamedTensors named;
            for (std::size_t i = 0; i < m_spec.features.size(); ++i)
                named.emplace_back(m_spec.features[i].name, out.tensors[i]); // shared: read-only in Python
            auto keep = m_predicate->test(named, m_stats);
            if (!keep.ok())
                return atNode(keep.error(), m_where);
            if (*keep)
                return r;
        }
    }

private:
    Runtime *m_runtime;
    std::unique_ptr<Iterator> m_input;
    ElementSpec m_spec;
    std::shared_ptr<const HostFunction> m_predicate;
    std::string m_where;
    StageStats *m_stats;
};

class GeneratorIterator final : public Iterator
{
public:
    GeneratorIterator(const IteratorContext &context, std::shared_ptr<const HostFunction> function, ElementSpec spec, std::string where,
                      StageStats *stats)
        : m_runtime(context.runtime), m_function(std::move(function)), m_spec(std::move(spec)), m_where(std::move(where)), m_stats(stats)
    {
    }
    Result<Poll> next(Element &out) override
    {
        if (m_runtime->cancelled())
            return cancelledError();
        if (!m_generator) {
            auto started = m_function->start(m_stats);
            if (!started.ok())
                return atNode(started.error(), m_where);
            m_generator = std::move(started).value();
        }
        auto value = m_generator->next(m_stats);
        if (!value.ok())
            return atNode(value.error(), m_where);
        if (!*value)
            return Poll::End;
        auto element = toElement(std::move(**value), m_spec, m_where, "yielded");
        if (!element.ok())
            return element.error();
        out = std::move(element).value();
        return Poll::Ready;
    }

private:
    Runtime *m_runtime;
    std::shared_ptr<const HostFunction> m_function;
    ElementSpec m_spec;
    std::string m_where;
    StageStats *m_stats;
    std::unique_ptr<HostGenerator> m_generator;
};

std::shared_ptr<Dataset> buildFromGenerator(BuildContext &context, Params &params, const Inputs &)
{
    params.checkKnown({"generator", "output_signature"});
    auto function = resolveCallable(context, params, "generator");
    ElementSpec spec = parseSignature(params, "output_signature");
    StageStats *stats = context.statsFor(params.node());
    const std::string where = params.where();
    return std::make_shared<HostDataset>(spec, stats, [function, spec, where, stats](const IteratorContext &c) {
        return std::make_unique<GeneratorIterator>(c, function, spec, where, stats);
    });
}

} // namespace

std::unique_ptr<MapFunction> makeHostMapFunction(BuildContext &context, Params &params, const Dataset &input)
{
    return std::make_unique<HostMapFunction>(context, params, input);
}

std::shared_ptr<Dataset> buildHostFilter(BuildContext &context, Params &params, DatasetPtr input)
{
    params.checkKnown({"predicate"});
    auto predicate = resolveCallable(context, params, "predicate");
    StageStats *stats = context.statsFor(params.node());
    const std::string where = params.where();
    const ElementSpec spec = input->spec();
    return std::make_shared<HostDataset>(spec, stats, [input, spec, predicate, where, stats](const IteratorContext &c) {
        return std::make_unique<PredicateIterator>(c, input->makeIterator(c), spec, predicate, where, stats);
    });
}

Result<std::vector<std::string>> hostSearchPath(const Project &project)
{
    // The project's folder, then its "python_path" entries (a folder or a list of them).
    std::vector<std::string> path{project.folder()};
    const nlohmann::json document = project.toJson();
    const auto it = document.find("python_path");
    if (it == document.end())
        return path;
    const nlohmann::json entries = it->is_string() ? nlohmann::json::array({*it}) : *it;
    if (!entries.is_array())
        return Error::invalid("project: python_path", "must be a folder or a list of folders");
    for (const auto &entry : entries) {
        if (!entry.is_string())
            return Error::invalid("project: python_path", "must be a folder or a list of folders, not " + entry.dump());
        path.push_back(project.resolvePath(entry.get<std::string>()));
    }
    return path;
}

std::string hostCallableParam(const PipelineNode &node)
{
    if (node.op == "map" && node.params.value("function", nlohmann::json()) == "python")
        return "callable";
    if (node.op == "filter" && node.params.contains("predicate"))
        return "predicate";
    if (node.op == "from_generator")
        return "generator";
    return {};
}

std::optional<HostFunctionInfo> describeHostFunction(const Project &project, const PipelineNode &node)
{
    HostFunctionInfo info;
    info.param = hostCallableParam(node);
    const auto name = node.params.find(info.param);
    if (info.param.empty() || name == node.params.end() || !name->is_string())
        return std::nullopt;
    info.callable = name->get<std::string>();
    const auto host = hostFunctions();
    auto path = hostSearchPath(project);
    if (!host || !path.ok())
        return std::nullopt;
    auto function = host->resolve(info.callable, *path);
    if (!function.ok())
        return std::nullopt;
    info.doc = (*function)->doc();
    info.file = (*function)->sourceFile();
    return info;
}

void registerHostOps(std::vector<OpInfo> &ops)
{
    ops.push_back({"from_generator", "sources",
                   "Elements yielded by a Python generator function, checked against output_signature (tf.data.Dataset.from_generator). "
                   "Runs where Sluice is used from Python.",
                   {{"generator", "callable", "", "\"module:function\": a function returning an iterable of dicts of arrays", true},
                    {"output_signature", "object", "", "each feature's {\"dtype\", \"shape\"} (null or -1: a size not known ahead)", true}},
                   0, 0, buildFromGenerator});
}

} // namespace sluice::pipeline
