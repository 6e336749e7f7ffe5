#pragma once
// Reading a layer's JSON parameters for the registry (train/layer_registry.cpp): typed getters
// whose errors name the layer (Error::what), its class and the parameter, and say what type
// was expected. Getters report a bad value by throwing LayerConfigFailure, which createLayer
// turns into the Error it returns (errors stay values outside this file pair).

#include "io/error.h"
#include "train/activations.h"
#include "train/float_tensor.h"
#include "train/layer_registry.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::train::detail {

struct LayerConfigFailure
{
    Error error;
};

// The parameters of a layer's JSON as one object: the top-level keys plus those of a nested
// Keras "config" object, without Keras's bookkeeping keys, which are checked and dropped
// ("name"; "trainable", which must be true; "dtype", which must be float32).
Result<nlohmann::json> flattenLayerConfig(const std::string &className, const std::string &layerName, const nlohmann::json &config);

class LayerConfig
{
public:
    LayerConfig(std::string className, std::string layerName, const nlohmann::json &params);

    const std::string &layerName() const { return m_layer; }
    // Null when absent or JSON null.
    const nlohmann::json *raw(const std::string &key) const;

    std::int64_t integer(const std::string &key, std::optional<std::int64_t> fallback, std::int64_t minimum, std::int64_t maximum = INT64_MAX) const;
    std::optional<std::int64_t> optionalInteger(const std::string &key, std::int64_t minimum) const; // absent or null: nullopt
    double number(const std::string &key, std::optional<double> fallback) const;
    bool boolean(const std::string &key, std::optional<bool> fallback) const;
    std::string string(const std::string &key, std::optional<std::string> fallback) const;
    ActivationKind activation(const std::string &key, std::optional<std::string> fallback) const; // null: linear
    std::string initializer(const std::string &key, const std::string &fallback) const;          // a known name
    Shape integers(const std::string &key) const;                                                  // a required list of integers
    const nlohmann::json &object(const std::string &key) const;                                    // a required object

    [[noreturn]] void fail(const std::string &key, const std::string &reason) const;
    // Fails on the first key that is not documented, listing those that are.
    void checkKnown(const std::vector<LayerParamDoc> &known) const;

private:
    const nlohmann::json &require(const std::string &key) const;
    std::string m_class, m_layer;
    const nlohmann::json &m_params;
};

// "a, b, c".
std::string joinNames(const std::vector<std::string> &names);

} // namespace sluice::train::detail
