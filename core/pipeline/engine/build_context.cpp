#include "pipeline/engine/build_context.h"

#include "pipeline/engine/op_registry.h"
#include "util/counter_random.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

namespace sluice::pipeline {
namespace {

std::string jsonText(const nlohmann::json &value)
{
    std::string s = value.dump();
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

} // namespace

Params::Params(const PipelineNode &node, std::string where) : m_node(node), m_where(std::move(where)) {}

void Params::fail(const std::string &param, const std::string &reason) const
{
    // The node and the parameter's top-level name as fields ("features.x" concerns `features`),
    // for whoever places the error; the text says the same for whoever reads it.
    throw BuildFailure{Error::invalid("", m_where + (param.empty() ? "" : ": " + param) + ": " + reason).at(m_node.id, param.substr(0, param.find('.')))};
}

bool Params::has(const std::string &name) const
{
    return m_node.params.is_object() && m_node.params.contains(name) && !m_node.params[name].is_null();
}

const nlohmann::json *Params::raw(const std::string &name)
{
    return has(name) ? &m_node.params[name] : nullptr;
}

const nlohmann::json *Params::require(const std::string &name, bool hasFallback)
{
    const nlohmann::json *v = raw(name);
    if (!v && !hasFallback)
        fail(name, "missing (this parameter is required)");
    return v;
}

std::int64_t Params::integer(const std::string &name, std::optional<std::int64_t> fallback, std::int64_t minimum, std::int64_t maximum)
{
    const nlohmann::json *v = require(name, fallback.has_value());
    if (!v)
        return *fallback;
    std::int64_t value = 0;
    if (v->is_number_integer())
        value = v->get<std::int64_t>();
    else if (v->is_number_float() && std::trunc(v->get<double>()) == v->get<double>() && std::abs(v->get<double>()) < 9e18)
        value = std::int64_t(v->get<double>());
    else
        fail(name, "must be an integer, got " + jsonText(*v));
    if (value < minimum)
        fail(name, "must be at least " + std::to_string(minimum) + ", got " + std::to_string(value));
    if (value > maximum)
        fail(name, "must be at most " + std::to_string(maximum) + ", got " + std::to_string(value));
    return value;
}

std::int64_t Params::autotunable(const std::string &name, std::optional<std::int64_t> fallback, std::int64_t minimum)
{
    const nlohmann::json *v = raw(name);
    if (v && ((v->is_string() && v->get<std::string>() == "AUTOTUNE") || (v->is_number_integer() && v->get<std::int64_t>() == -1)))
        return kAutotune;
    if (v && v->is_string())
        fail(name, "must be a number or \"AUTOTUNE\", got " + jsonText(*v));
    return integer(name, fallback, minimum);
}

double Params::number(const std::string &name, std::optional<double> fallback)
{
    const nlohmann::json *v = require(name, fallback.has_value());
    if (!v)
        return *fallback;
    if (!v->is_number())
        fail(name, "must be a number, got " + jsonText(*v));
    return v->get<double>();
}

bool Params::boolean(const std::string &name, std::optional<bool> fallback)
{
    const nlohmann::json *v = require(name, fallback.has_value());
    if (!v)
        return *fallback;
    if (!v->is_boolean())
        fail(name, "must be true or false, got " + jsonText(*v));
    return v->get<bool>();
}

std::string Params::string(const std::string &name, std::optional<std::string> fallback)
{
    const nlohmann::json *v = require(name, fallback.has_value());
    if (!v)
        return *fallback;
    if (!v->is_string())
        fail(name, "must be a string, got " + jsonText(*v));
    return v->get<std::string>();
}

std::string Params::choice(const std::string &name, std::optional<std::string> fallback, const std::vector<std::string> &choices)
{
    const std::string value = string(name, std::move(fallback));
    if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
        std::string known;
        for (const auto &c : choices)
            known += (known.empty() ? "\"" : ", \"") + c + "\"";
        fail(name, "\"" + value + "\" is not one of " + known);
    }
    return value;
}

std::vector<std::string> Params::strings(const std::string &name, std::optional<std::vector<std::string>> fallback)
{
    const nlohmann::json *v = require(name, fallback.has_value());
    if (!v)
        return *fallback;
    if (v->is_string())
        return {v->get<std::string>()};
    if (!v->is_array() || v->empty())
        fail(name, "must be a string or a non-empty list of strings, got " + jsonText(*v));
    std::vector<std::string> out;
    for (const auto &item : *v) {
        if (!item.is_string())
            fail(name, "must hold only strings, got " + jsonText(item));
        out.push_back(item.get<std::string>());
    }
    return out;
}

std::vector<double> Params::numbers(const std::string &name, std::optional<std::vector<double>> fallback)
{
    const nlohmann::json *v = require(name, fallback.has_value());
    if (!v)
        return *fallback;
    if (v->is_number())
        return {v->get<double>()};
    if (!v->is_array() || v->empty())
        fail(name, "must be a number or a non-empty list of numbers, got " + jsonText(*v));
    std::vector<double> out;
    for (const auto &item : *v) {
        if (!item.is_number())
            fail(name, "must hold only numbers, got " + jsonText(item));
        out.push_back(item.get<double>());
    }
    return out;
}

void Params::checkKnown(const std::vector<std::string> &known) const
{
    if (!m_node.params.is_object())
        fail("params", "must be an object");
    for (const auto &[key, value] : m_node.params.items()) {
        if (std::find(known.begin(), known.end(), key) != known.end())
            continue;
        std::string list;
        for (const auto &k : known)
            list += (list.empty() ? "" : ", ") + k;
        fail(key, "unknown parameter (known: " + (list.empty() ? std::string("none") : list) + ")");
    }
}

DatasetPtr Inputs::at(std::size_t i) const { return m_context.build(m_ids.at(i)); }

std::vector<DatasetPtr> Inputs::perFile(std::size_t i) const { return m_context.buildPerFile(m_ids.at(i)); }

BuildContext::BuildContext(const Project &project, std::string what, std::deque<StageStats> &stats, int threads)
    : m_project(project), m_what(std::move(what)), m_stats(stats), m_threads(threads)
{
}

StageStats *BuildContext::statsFor(const PipelineNode &node)
{
    auto it = m_statsById.find(node.id);
    if (it != m_statsById.end())
        return it->second;
    StageStats &s = m_stats.emplace_back();
    s.nodeId = node.id;
    s.op = node.op;
    m_statsById[node.id] = &s;
    return &s;
}

std::shared_ptr<std::atomic<std::uint64_t>> BuildContext::newPassCounter()
{
    m_passCounters.push_back(std::make_shared<std::atomic<std::uint64_t>>(0));
    return m_passCounters.back();
}

std::uint64_t BuildContext::seedFor(const PipelineNode &node, std::optional<std::int64_t> ownSeed) const
{
    if (ownSeed)
        return std::uint64_t(*ownSeed);
    if (m_globalSeed)
        return *m_globalSeed ^ (std::hash<std::string>{}(node.id) * random::kGolden);
    return (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
}

DatasetPtr BuildContext::build(const std::string &id)
{
    const auto key = std::make_pair(id, m_fileFilter ? std::int64_t(*m_fileFilter) : std::int64_t(-1));
    if (auto it = m_built.find(key); it != m_built.end())
        return it->second;
    const PipelineNode *node = m_project.findNode(id);
    if (!node)
        throw BuildFailure{Error::invalid("", "node \"" + id + "\" does not exist")};
    const std::string where = "node \"" + id + "\" (" + node->op + ")";
    if (!m_building.insert(id).second)
        throw BuildFailure{Error::invalid("", where + ": is part of a cycle").at(id)};

    const OpInfo *op = findOp(node->op);
    if (!op)
        throw BuildFailure{Error::invalid("", "node \"" + id + "\": unknown op \"" + node->op + "\" (known: " + knownOpNames() + ")").at(id)};
    const auto inputIds = m_project.inputsOf(id);
    const int n = int(inputIds.size());
    if (n < op->minInputs || (op->maxInputs >= 0 && n > op->maxInputs)) {
        std::string want = op->maxInputs < 0 ? "at least " + std::to_string(op->minInputs)
                                             : (op->minInputs == op->maxInputs ? std::to_string(op->minInputs)
                                                                               : std::to_string(op->minInputs) + " to " +
                                                                                     std::to_string(op->maxInputs));
        throw BuildFailure{Error::invalid("", where + ": takes " + want + " input" + (want == "1" ? "" : "s") + ", has " +
                                                  std::to_string(n))
                               .at(id)};
    }
    Params params(*node, where);
    std::vector<std::string> known;
    for (const auto &p : op->params)
        known.push_back(p.name);
    params.checkKnown(known);

    std::shared_ptr<Dataset> dataset = op->build(*this, params, Inputs(*this, inputIds));
    StageStats *stats = statsFor(*node);
    if (stats->inputs.empty())
        for (const auto &input : inputIds)
            if (const PipelineNode *in = m_project.findNode(input))
                stats->inputs.push_back(statsFor(*in));
    if (!m_files.count(id))
        m_files[id] = inputIds.size() == 1 ? fileCount(inputIds[0]) : 1;
    m_building.erase(id);
    m_built[key] = dataset;
    return dataset;
}

std::size_t BuildContext::fileCount(const std::string &id)
{
    if (!m_files.count(id)) {
        const auto saved = m_fileFilter;
        m_fileFilter.reset();
        build(id);
        m_fileFilter = saved;
    }
    return m_files[id];
}

std::vector<DatasetPtr> BuildContext::buildPerFile(const std::string &id)
{
    if (m_fileFilter)
        throw BuildFailure{Error::invalid("", "node \"" + id + "\": an interleave inside another interleave's sub-pipeline is not supported")};
    const std::size_t files = fileCount(id);
    if (files <= 1)
        return {build(id)}; // one file (or a zip / range chain): the chain itself is the only sub-pipeline
    std::vector<DatasetPtr> out;
    for (std::size_t i = 0; i < files; ++i) {
        m_fileFilter = i;
        try {
            out.push_back(build(id));
        } catch (...) {
            m_fileFilter.reset();
            throw;
        }
    }
    m_fileFilter.reset();
    return out;
}

} // namespace sluice::pipeline
