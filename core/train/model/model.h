#pragma once
// A Keras-style functional model built from a project's "model" object against the pipeline's
// element spec. Immutable once built: replicas share it and keep their own activations
// (train/loop/replica.h). Weights live outside, in one flat buffer laid out by parameters().
//
// JSON (docs/training.md has the reference):
//   {"inputs":  [{"name": "x", "feature": "x"}, ...],
//    "layers":  [{"class_name": "Dense", "name": "d1", "inputs": ["x"], "units": 64, ...}, ...],
//    "outputs": [{"name": "y", "layer": "d3", "target": "y", "loss": "mse", "loss_weight": 1,
//                 "metrics": ["mae"], "from_logits": false}, ...]}
// A layer without "inputs" takes the previous layer's output (the first layer: the only input),
// so a Sequential stack needs no wiring. Inputs of a layer must be defined before it.

#include "io/error.h"
#include "train/model/float_range.h"
#include "train/model/layer.h"
#include "train/objectives/loss.h"
#include "train/objectives/metrics.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sluice::pipeline {
struct ElementSpec;
}

namespace sluice::train {

// One trainable array in the flat weight buffer, exported as `name` ("<layer>/<param>").
struct ParameterEntry
{
    std::string name;
    Shape shape;
    std::string initializer;
    std::size_t offset = 0;
    std::size_t count = 0;
    bool trainable = true; // false: state its layer updates (ParamSpec::trainable), after every trainable array
    bool rowSparse = false;     // ParamSpec::rowSparse: a table whose gradient holds only the rows a batch used
    bool sparseUpdates = false; // ParamSpec::sparseUpdates: the optimizer updates only those rows
    std::int64_t rowSize = 0;   // rowSparse: floats per row (the table's shape after its first axis)
    int node = -1;              // the node whose layer owns it (its LayerState lists the used rows)
};


struct ModelInput
{
    std::string name;
    std::string feature;
    std::size_t featureIndex = 0; // in the pipeline's element spec
    Shape shape;                  // per sample
};

struct ModelOutput
{
    std::string name;
    std::string layer;
    std::string target;
    // The target's feature; kNoTarget in a model built for predictions whose pipeline has no
    // such feature (ModelBuildOptions::targetsOptional).
    static constexpr std::size_t kNoTarget = std::size_t(-1);
    std::size_t targetIndex = 0;
    Shape targetShape; // per sample (empty without a target)
    bool hasTarget() const { return targetIndex != kNoTarget; }
    std::unique_ptr<Loss> loss;
    std::string lossName;
    bool fromLogits = false;
    float lossWeight = 1.0f;
    std::vector<std::string> metrics;
    int node = -1; // index of the layer node producing it
};

// A node of the graph: a model input (layer == nullptr) or a layer applied to earlier nodes.
struct ModelNode
{
    std::string name;
    std::unique_ptr<Layer> layer;
    std::vector<int> inputs;           // node indices
    Shape shape;                       // per-sample output shape
    std::vector<std::size_t> params;   // indices into Model::parameters()
    bool needsGradient = false;        // some parameter is upstream of it
};

struct ModelBuildOptions
{
    // For predictions (sluice predict): an output whose target is not a feature of the spec is
    // kept without one; such a model runs forward only (Replica::predict).
    bool targetsOptional = false;
};

class Model
{
public:
    // `spec` is the pipeline's output element spec: inputs and targets are bound to its features
    // (the batch dimension first). Every problem names the layer, input or output concerned.
    // Errors name the entry (Error::layer: "inputs[0]", "layers[2]", "outputs[1]") and the key
    // in it (Error::key) besides saying so in words.
    static Result<std::unique_ptr<Model>> build(const nlohmann::json &modelJson, const pipeline::ElementSpec &spec, ModelBuildOptions options = {});

    const std::vector<ModelNode> &nodes() const { return m_nodes; }
    const std::vector<ModelInput> &inputs() const { return m_inputs; } // node i < inputs().size() is input i
    const std::vector<ModelOutput> &outputs() const { return m_outputs; }
    const std::vector<ParameterEntry> &parameters() const { return m_parameters; }
    std::size_t parameterCount() const { return m_parameterCount; } // floats in the flat buffer
    // The optimizer's part of the buffer, [0, trainableParameterCount()); the rest holds the
    // non-trainable state, updated by adding its reduced "gradient" (applyStateUpdates).
    std::size_t trainableParameterCount() const { return m_trainableCount; }
    // The parameters whose gradient is row-sparse (ParameterEntry::rowSparse), by index, and the
    // rest of the buffer as ranges: what replicas zero and all-reduce densely.
    const std::vector<std::size_t> &rowSparseParameters() const { return m_rowSparse; }
    const std::vector<FloatRange> &denseRanges() const { return m_denseRanges; }

    // Seeded initial weights (Keras initializers).
    Result<std::vector<float>> initialWeights(std::uint64_t seed) const;
    // Reads every parameter from an .npz written by saveWeights (or by numpy with the same
    // names and shapes); missing, extra-shaped or non-float arrays are errors naming the array.
    Status loadWeights(const std::string &path, std::span<float> weights) const;
    Status saveWeights(const std::string &path, std::span<const float> weights) const;

    std::string summary() const; // Keras-like table: layer, class, output shape, parameters

private:
    static Result<std::unique_ptr<Model>> buildEntries(const nlohmann::json &json, const pipeline::ElementSpec &spec, ModelBuildOptions options,
                                                       std::string &reading);
    std::vector<ModelNode> m_nodes;
    std::vector<ModelInput> m_inputs;
    std::vector<ModelOutput> m_outputs;
    std::vector<ParameterEntry> m_parameters;
    std::size_t m_parameterCount = 0;
    std::size_t m_trainableCount = 0;
    std::vector<std::size_t> m_rowSparse;
    std::vector<FloatRange> m_denseRanges;
};

// Adds the summed updates of the non-trainable state to it and zeroes them, so that clipping and
// the optimizer see only the trainable gradients.
void applyStateUpdates(const Model &model, std::span<float> weights, std::span<float> grads);

} // namespace sluice::train
