#pragma once
// Layers created from their Keras class name (style: factories keyed by name). A layer's JSON is
// Keras-like: {"class_name": "Dense", "name": "d1", "units": 64, "activation": "relu", ...} with
// the parameters at top level (a nested "config" object is accepted too). Unknown class names,
// unknown or ill-typed parameters are errors naming the layer and listing what is known.

#include "io/error.h"
#include "train/model/layer.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace sluice::train {

struct LayerParamDoc
{
    std::string name, type, defaultValue, doc;
};

struct LayerInfo
{
    std::string className;
    std::string doc;
    std::vector<LayerParamDoc> params;
};

// `config`: the layer's parameters (without "class_name", "name", "inputs").
Result<std::unique_ptr<Layer>> createLayer(const std::string &className, const std::string &name, const nlohmann::json &config);

const std::vector<LayerInfo> &knownLayers();

} // namespace sluice::train
