// libFuzzer target: any bytes given as a Keras model's config.json become Sluice's model section
// or an error, never a crash; a config that converts has as many input shapes as inputs, every
// layer a name and a class Sluice has, and its weight groups name layers of the model.
#include "train/interchange/keras_import.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace sluice::train {
// The registries' names as this version has them (the fuzz build links no registry).
const std::vector<std::string> &kerasSupportedLayers()
{
    static const std::vector<std::string> names{"Activation", "AveragePooling1D", "AveragePooling2D", "BatchNormalization", "Concatenate",
                                                "Conv1D", "Conv2D", "Dense", "Dropout", "Embedding", "Flatten", "GRU",
                                                "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D",
                                                "LSTM", "LayerNormalization", "MaxPooling1D", "MaxPooling2D", "RepeatVector", "Reshape",
                                                "TimeDistributed"};
    return names;
}
const std::vector<std::string> &kerasSupportedLosses()
{
    static const std::vector<std::string> names{"mse", "mean_squared_error", "mae", "binary_crossentropy", "categorical_crossentropy",
                                                "sparse_categorical_crossentropy", "huber"};
    return names;
}
} // namespace sluice::train

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const auto document = nlohmann::json::parse(data, data + size, nullptr, false);
    if (document.is_discarded())
        return 0;
    auto converted = sluice::train::kerasModelConfig(document);
    if (!converted.ok())
        return 0;
    const auto &model = converted->model;
    if (!model["inputs"].is_array() || !model["layers"].is_array() || !model["outputs"].is_array())
        std::abort();
    if (converted->inputShapes.size() != model["inputs"].size())
        std::abort();
    std::set<std::string> layers;
    const auto &known = sluice::train::kerasSupportedLayers();
    for (const auto &layer : model["layers"]) {
        if (!layer["name"].is_string() || !layer["class_name"].is_string())
            std::abort();
        if (std::find(known.begin(), known.end(), layer["class_name"].get<std::string>()) == known.end())
            std::abort();
        layers.insert(layer["name"].get<std::string>());
    }
    for (const auto &group : converted->weightGroups)
        if (!layers.count(group.layer) || group.names.empty())
            std::abort();
    return 0;
}
