#include "train/layers/layer_config.h"

#include "train/initializers.h"

#include <algorithm>
#include <cmath>

namespace sluice::train::detail {
namespace {

using nlohmann::json;

std::string jsonText(const json &value)
{
    std::string s = value.dump();
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

bool asInteger(const json &v, std::int64_t &out)
{
    if (v.is_number_integer()) {
        out = v.get<std::int64_t>();
        return true;
    }
    // 64.0 as Python's json may write it.
    if (v.is_number_float() && std::trunc(v.get<double>()) == v.get<double>() && std::abs(v.get<double>()) < 9e18) {
        out = std::int64_t(v.get<double>());
        return true;
    }
    return false;
}

} // namespace

std::string joinNames(const std::vector<std::string> &names)
{
    std::string s;
    for (const auto &n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

Result<json> flattenLayerConfig(const std::string &className, const std::string &layerName, const json &config)
{
    auto bad = [&](const std::string &reason) { return Error::invalid(layerName, className + " " + reason); };
    if (config.is_null())
        return json::object();
    if (!config.is_object())
        return bad("parameters must be a JSON object, got " + jsonText(config));
    json params = json::object();
    auto add = [&](const std::string &key, const json &value) -> Status {
        if (params.contains(key))
            return bad("parameter '" + key + "' is given twice (at top level and in \"config\")");
        if (key == "name") {
            if (!value.is_string() && !value.is_null())
                return bad("parameter 'name' expects a string, got " + jsonText(value));
            return Status::success();
        }
        if (key == "trainable") {
            if (!value.is_boolean())
                return bad("parameter 'trainable' expects a boolean, got " + jsonText(value));
            if (!value.get<bool>())
                return Error::unsupported(layerName, className + " parameter 'trainable': frozen layers (false) are not supported");
            return Status::success();
        }
        if (key == "dtype") {
            // "float32", or Keras 3's {"class_name": "DTypePolicy", "config": {"name": "float32"}}.
            const json *name = &value;
            if (value.is_object() && value.contains("config") && value["config"].is_object() && value["config"].contains("name"))
                name = &value["config"]["name"];
            if (!value.is_null() && !(name->is_string() && name->get<std::string>() == "float32"))
                return Error::unsupported(layerName, className + " parameter 'dtype': only float32 is supported, got " + jsonText(value));
            return Status::success();
        }
        params[key] = value;
        return Status::success();
    };
    for (const auto &[key, value] : config.items()) {
        if (key != "config") {
            if (auto s = add(key, value); !s)
                return s.error();
            continue;
        }
        if (!value.is_object())
            return bad("parameter 'config' expects an object of parameters, got " + jsonText(value));
        for (const auto &[k, v] : value.items())
            if (auto s = add(k, v); !s)
                return s.error();
    }
    return params;
}

LayerConfig::LayerConfig(std::string className, std::string layerName, const json &params)
    : m_class(std::move(className)), m_layer(std::move(layerName)), m_params(params)
{
}

void LayerConfig::fail(const std::string &key, const std::string &reason) const
{
    throw LayerConfigFailure{Error::invalid(m_layer, m_class + " parameter '" + key + "' " + reason)};
}

const json *LayerConfig::raw(const std::string &key) const
{
    const auto it = m_params.find(key);
    return it == m_params.end() || it->is_null() ? nullptr : &*it;
}

const json &LayerConfig::require(const std::string &key) const
{
    const json *v = raw(key);
    if (!v)
        fail(key, "is required");
    return *v;
}

std::int64_t LayerConfig::integer(const std::string &key, std::optional<std::int64_t> fallback, std::int64_t minimum, std::int64_t maximum) const
{
    const json *v = raw(key);
    if (!v && fallback)
        return *fallback;
    const json &value = v ? *v : require(key);
    std::int64_t n = 0;
    if (!asInteger(value, n))
        fail(key, "expects an integer, got " + jsonText(value));
    if (n < minimum)
        fail(key, "must be at least " + std::to_string(minimum) + ", got " + std::to_string(n));
    if (n > maximum)
        fail(key, "must be at most " + std::to_string(maximum) + ", got " + std::to_string(n));
    return n;
}

std::optional<std::int64_t> LayerConfig::optionalInteger(const std::string &key, std::int64_t minimum) const
{
    if (!raw(key))
        return std::nullopt;
    return integer(key, std::nullopt, minimum);
}

double LayerConfig::number(const std::string &key, std::optional<double> fallback) const
{
    const json *v = raw(key);
    if (!v && fallback)
        return *fallback;
    const json &value = v ? *v : require(key);
    if (!value.is_number())
        fail(key, "expects a number, got " + jsonText(value));
    return value.get<double>();
}

bool LayerConfig::boolean(const std::string &key, std::optional<bool> fallback) const
{
    const json *v = raw(key);
    if (!v && fallback)
        return *fallback;
    const json &value = v ? *v : require(key);
    if (!value.is_boolean())
        fail(key, "expects a boolean (true or false), got " + jsonText(value));
    return value.get<bool>();
}

std::string LayerConfig::string(const std::string &key, std::optional<std::string> fallback) const
{
    const json *v = raw(key);
    if (!v && fallback)
        return *fallback;
    const json &value = v ? *v : require(key);
    if (!value.is_string())
        fail(key, "expects a string, got " + jsonText(value));
    return value.get<std::string>();
}

ActivationKind LayerConfig::activation(const std::string &key, std::optional<std::string> fallback) const
{
    // Keras writes a missing activation as null: linear.
    const std::string name = m_params.contains(key) && m_params[key].is_null() ? std::string("linear") : string(key, std::move(fallback));
    auto kind = parseActivation(name);
    if (!kind)
        fail(key, kind.error().reason);
    return *kind;
}

std::string LayerConfig::initializer(const std::string &key, const std::string &fallback) const
{
    std::string name = string(key, fallback);
    const auto &known = knownInitializers();
    if (std::find(known.begin(), known.end(), name) == known.end())
        fail(key, "names an unknown initializer '" + name + "' (known: " + joinNames(known) + ")");
    return name;
}

Shape LayerConfig::integers(const std::string &key) const
{
    const json &value = require(key);
    if (!value.is_array())
        fail(key, "expects a list of integers, got " + jsonText(value));
    Shape out;
    for (const auto &item : value) {
        std::int64_t n = 0;
        if (!asInteger(item, n))
            fail(key, "expects a list of integers, got " + jsonText(value));
        out.push_back(n);
    }
    return out;
}

const json &LayerConfig::object(const std::string &key) const
{
    const json &value = require(key);
    if (!value.is_object())
        fail(key, "expects an object, got " + jsonText(value));
    return value;
}

void LayerConfig::checkKnown(const std::vector<LayerParamDoc> &known) const
{
    for (const auto &[key, value] : m_params.items()) {
        if (std::any_of(known.begin(), known.end(), [&](const LayerParamDoc &d) { return d.name == key; }))
            continue;
        std::vector<std::string> names;
        for (const auto &d : known)
            names.push_back(d.name);
        fail(key, "is not a parameter of " + m_class + " (known: " + (names.empty() ? std::string("none") : joinNames(names)) + ")");
    }
}

} // namespace sluice::train::detail
