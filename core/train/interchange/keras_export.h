#pragma once
// A built model and its weights as the files of a Keras 3 `.keras` archive, which
// keras.saving.load_model reads: config.json (a functional model: an InputLayer per model input,
// each layer with its parameters as the project gives them and its inbound tensors), metadata.json,
// and model.weights.h5 in Keras's layout ("layers/<snake_case class>[_k]/vars/<i>", a GRU's and
// an LSTM's under ".../cell/vars", a TimeDistributed's under ".../layer/vars"; train/interchange/keras_import.h
// reads the same layout back).
//
// Threading: a pure function of its arguments.

#include "io/error.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace sluice::train {

class Model;

struct KerasFiles
{
    std::string configJson;
    std::string metadataJson;
    std::vector<std::byte> weightsH5;
};

// `modelJson`: the project's "model" section `model` was built from; `weights`: its flat buffer.
// Errors name the layer whose parameters Keras would not take (Sluice's own options, such as an
// Embedding's sparse_updates, are left out: they change how Sluice trains, not what it computes).
Result<KerasFiles> kerasModelFiles(const Model &model, const nlohmann::json &modelJson, std::span<const float> weights, const std::string &name);

} // namespace sluice::train
