#include "train/layers/layer_config.h"

#include "train/model/initializers.h"
#include "train/layers/keras_config.h"

#include <algorithm>

namespace sluice::train::detail {

using nlohmann::json;

Result<json> flattenLayerConfig(const std::string &className, const std::string &layerName, const json &config)
{
    auto bad = [&](const std::string &reason, const std::string &key = {}) {
        Error e = Error::invalid(layerName, className + " " + reason);
        e.key = key;
        return e;
    };
    if (config.is_null())
        return json::object();
    if (!config.is_object())
        return bad("parameters must be a JSON object, got " + shortJson(config));
    json params = json::object();
    auto add = [&](const std::string &key, const json &value) -> Status {
        if (params.contains(key))
            return bad("parameter '" + key + "': given twice (at top level and in \"config\")", key);
        if (key == "name") {
            if (!value.is_string() && !value.is_null())
                return bad("parameter 'name': expected a string, got " + shortJson(value), "name");
            return Status::success();
        }
        if (key == "trainable") {
            if (!value.is_boolean())
                return bad("parameter 'trainable': expected true or false, got " + shortJson(value), "trainable");
            if (!value.get<bool>())
                return Error::unsupported(layerName, className + " parameter 'trainable': frozen layers (false) are not supported").inLayer({}, "trainable");
            return Status::success();
        }
        if (key == "dtype") {
            // "float32", or Keras 3's {"class_name": "DTypePolicy", "config": {"name": "float32"}}.
            const json *name = &value;
            if (value.is_object() && value.contains("config") && value["config"].is_object() && value["config"].contains("name"))
                name = &value["config"]["name"];
            if (!value.is_null() && !(name->is_string() && name->get<std::string>() == "float32"))
                return Error::unsupported(layerName, className + " parameter 'dtype': only float32 is supported, got " + shortJson(value)).inLayer({}, "dtype");
            return Status::success();
        }
        json copy = value;
        auto keras = kerasKey(className, layerName, key, copy);
        if (!keras)
            return keras.error();
        if (*keras == KerasKey::Keep)
            params[key] = std::move(copy);
        return Status::success();
    };
    for (const auto &[key, value] : config.items()) {
        if (key != "config") {
            if (auto s = add(key, value); !s)
                return s.error();
            continue;
        }
        if (!value.is_object())
            return bad("parameter 'config': expected an object of parameters, got " + shortJson(value), "config");
        for (const auto &[k, v] : value.items())
            if (auto s = add(k, v); !s)
                return s.error();
    }
    return params;
}

LayerConfig::LayerConfig(std::string className, std::string layerName, const json &params)
    : m_class(std::move(className)), m_layer(std::move(layerName)), m_params(params), m_reader(params, m_layer)
{
}

void LayerConfig::fail(const std::string &key, const std::string &reason) const
{
    Error e = Error::invalid(m_layer, m_class + " parameter '" + key + "': " + reason);
    e.key = key;
    throw LayerConfigFailure{e};
}

void LayerConfig::throwIfFailed() const
{
    if (const auto &f = m_reader.failure())
        fail(f->key, f->reason);
}

ActivationKind LayerConfig::activation(const std::string &key, std::optional<std::string> fallback)
{
    // Keras writes a missing activation as null: linear.
    auto kind = parseActivation(isNull(key) ? std::string("linear") : string(key, std::move(fallback)));
    if (!kind)
        fail(key, kind.error().reason);
    return *kind;
}

std::string LayerConfig::initializer(const std::string &key, const std::string &fallback)
{
    std::string name = string(key, fallback);
    const auto &known = knownInitializers();
    if (std::find(known.begin(), known.end(), name) == known.end())
        fail(key, "unknown initializer '" + name + "' (known: " + joinNames(known) + ")");
    return name;
}

Shape LayerConfig::integerTuple(const std::string &key, std::optional<std::int64_t> fallback, std::size_t count, std::int64_t minimum)
{
    const std::string expected = "a whole number at least " + std::to_string(minimum) + " or a list of " + std::to_string(count) +
                                 (count == 1 ? " such number" : " such numbers");
    const json *value = raw(key);
    if (!value) {
        if (!fallback)
            fail(key, "missing (" + expected + ")");
        return Shape(count, *fallback);
    }
    if (!value->is_array())
        return Shape(count, integer(key, std::nullopt, minimum));
    Shape values = integers(key);
    if (values.size() != count || std::any_of(values.begin(), values.end(), [&](std::int64_t v) { return v < minimum; }))
        fail(key, "expected " + expected + ", got " + shortJson(*value));
    return values;
}

const json &LayerConfig::object(const std::string &key)
{
    const json *value = raw(key);
    if (!value)
        fail(key, "missing (an object)");
    if (!value->is_object())
        fail(key, "expected an object, got " + shortJson(*value));
    return *value;
}

void LayerConfig::checkKnown(const std::vector<LayerParamDoc> &known)
{
    for (const auto &d : known)
        m_reader.accept(d.name);
    m_reader.rejectUnknown(m_class);
    throwIfFailed();
}

} // namespace sluice::train::detail
