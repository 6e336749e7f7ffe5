#pragma once
// Keras 3 models into Sluice: a `.keras` archive (config.json + model.weights.h5) or a
// `model.to_json()` file with an optional `.weights.h5` becomes a project's "model" section and
// its weights by Sluice's names ("<layer>/<weight>").
//
// The config: a Sequential or functional model; each layer keeps Keras's own config (Sluice's
// layer reader takes it as Keras writes it: train/layers/keras_config.h), inputs are named after
// Keras's input layers and bound to features of the same name, outputs after the output layers
// with the compiled loss where Keras saved one Sluice has. Shared layers, layers called with
// keyword arguments and layers with several outputs are refused by name.
//
// The weights: Keras 3 stores a layer's variables under "layers/<snake_case class name>[_k]/vars/<i>"
// (k counting layers of one class, in the config's order; a GRU's and an LSTM's under
// ".../cell/vars", a TimeDistributed's under ".../layer/vars"), in the order Sluice's layers
// declare theirs (kernel, bias; gamma, beta, moving_mean, moving_variance; ...).
//
// Threading: pure functions (the HDF5 file is opened and closed inside).

#include "io/error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::train {

struct ImportedWeight
{
    std::string name; // "<layer>/<weight>", as weights.npz names it
    std::vector<std::int64_t> shape;
    std::vector<float> values;
};

struct KerasLayerWeights
{
    std::string layer;             // the Sluice (and Keras) layer name
    std::string group;             // where Keras keeps its variables, "layers/dense_1/vars"
    std::vector<std::string> names; // Sluice's names of those variables, in Keras's order
};

struct KerasModelConfig
{
    nlohmann::json model;                        // the project's "model" section
    std::vector<nlohmann::json> inputShapes;     // per model input: its shape without the batch (null entries: unknown)
    std::vector<KerasLayerWeights> weightGroups; // where each layer's weights are in the .weights.h5
    std::vector<std::string> notes;              // what a user should know (a loss assumed, ...)
};

struct KerasImport
{
    KerasModelConfig config;
    std::vector<ImportedWeight> weights; // empty when imported without weights
    std::string source;                  // the file read
};

// The layer classes and losses Sluice has, by name (from the layer and loss registries; the
// fuzz target over kerasModelConfig supplies its own lists).
const std::vector<std::string> &kerasSupportedLayers();
const std::vector<std::string> &kerasSupportedLosses();

// keras.src.utils.naming.to_snake_case: "BatchNormalization" -> "batch_normalization", the name
// of a layer's place in a Keras weights file (with _1, _2, ... for later layers of the class).
std::string kerasSnakeCase(const std::string &className);

// config.json's document (or model.to_json()'s) as Sluice's model; errors name the layer and key
// (train/interchange/keras_model_config.cpp).
Result<KerasModelConfig> kerasModelConfig(const nlohmann::json &document);

// `path`: a .keras archive, or a JSON file from model.to_json(); `weightsPath`: a .weights.h5
// (optional for JSON files; a .keras archive carries its own).
Result<KerasImport> importKerasModel(const std::string &path, const std::string &weightsPath = {});

} // namespace sluice::train
