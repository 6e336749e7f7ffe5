#pragma once
// Reading a layer's JSON parameters for the registry (train/model/layer_registry.cpp): SpecReader's
// typed getters, with errors that name the layer (Error::what), its class and the parameter.
// Getters report a bad value by throwing LayerConfigFailure, which createLayer turns into the
// Error it returns (errors stay values outside this file pair).

#include "io/error.h"
#include "train/model/activations.h"
#include "train/model/float_tensor.h"
#include "train/model/layer_registry.h"
#include "train/model/spec_reader.h"

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
// ("name"; "trainable", which must be true; "dtype", which must be float32; the rest of what
// Keras 3 writes: train/layers/keras_config.h).
Result<nlohmann::json> flattenLayerConfig(const std::string &className, const std::string &layerName, const nlohmann::json &config);

// A layer's parameters, read by a SpecReader; the first problem throws LayerConfigFailure with an
// Error that names the layer: "d: Dense parameter 'units': expected a whole number at least 1, got 0".
class LayerConfig
{
public:
    LayerConfig(std::string className, std::string layerName, const nlohmann::json &params);

    const std::string &layerName() const { return m_layer; }
    // Null when absent or JSON null.
    const nlohmann::json *raw(const std::string &key) { return m_reader.find(key); }
    // Given as JSON null, which the getters take as absent; Keras writes a linear activation so.
    bool isNull(const std::string &key) const { return m_params.contains(key) && m_params[key].is_null(); }

    // The getters of SpecReader (train/model/spec_reader.h), throwing on a bad value.
    std::int64_t integer(const std::string &key, std::optional<std::int64_t> fallback, std::int64_t minimum, std::int64_t maximum = INT64_MAX)
    {
        return checked(m_reader.integer(key, fallback, minimum, maximum));
    }
    std::optional<std::int64_t> optionalInteger(const std::string &key, std::int64_t minimum) { return checked(m_reader.optionalInteger(key, minimum)); }
    double number(const std::string &key, std::optional<double> fallback, Interval range = {}) { return checked(m_reader.number(key, fallback, range)); }
    bool boolean(const std::string &key, std::optional<bool> fallback) { return checked(m_reader.boolean(key, fallback)); }
    std::string string(const std::string &key, std::optional<std::string> fallback) { return checked(m_reader.string(key, std::move(fallback))); }
    Shape integers(const std::string &key) { return checked(m_reader.integers(key)); } // a required list
    // Keras's "int or tuple" parameters (kernel_size, strides, ...): a whole number, repeated
    // `count` times, or a list of `count` of them, each at least `minimum`; `fallback` when absent
    // or null (required without one).
    Shape integerTuple(const std::string &key, std::optional<std::int64_t> fallback, std::size_t count, std::int64_t minimum);

    ActivationKind activation(const std::string &key, std::optional<std::string> fallback); // null: linear
    std::string initializer(const std::string &key, const std::string &fallback);          // a known name
    const nlohmann::json &object(const std::string &key);                                   // a required object

    [[noreturn]] void fail(const std::string &key, const std::string &reason) const;
    // Fails on the first key that is not documented, listing those that are.
    void checkKnown(const std::vector<LayerParamDoc> &known);

private:
    template <typename T>
    T checked(T value) const
    {
        throwIfFailed();
        return value;
    }
    void throwIfFailed() const;

    std::string m_class, m_layer;
    const nlohmann::json &m_params;
    SpecReader m_reader;
};

} // namespace sluice::train::detail
