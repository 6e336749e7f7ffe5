#pragma once
// A Keras layer of the CPU backend. Layers are created from their Keras class name and config
// (train/layer_registry.h), built once with the per-sample shapes of their inputs, and are
// immutable afterwards: every replica runs the same Layer objects with its own activations and
// LayerState, so forward/backward are const and may run concurrently on different replicas.
//
// Shapes given to build() have no batch dimension; tensors given to forward/backward have the
// batch first ([B, ...per-sample shape]).

#include "io/error.h"
#include "train/activations.h"
#include "train/float_tensor.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sluice::train {

// A trainable array of a layer. Exported as "<layer>/<name>" in weights .npz files.
struct ParamSpec
{
    std::string name;        // "kernel", "bias", "recurrent_kernel", "gamma", "beta"
    Shape shape;             // Keras's layout for the same layer, so weights can be exchanged
    std::string initializer; // "glorot_uniform", "he_normal", "orthogonal", "zeros", "ones", ...
};

// What a forward/backward pass needs to know besides tensors.
struct PassContext
{
    bool training = true;             // Dropout is the identity when false
    std::uint64_t seed = 0;           // the run's seed
    std::uint64_t step = 0;           // the global step: dropout masks differ per step
    // Row r of this replica's slice is row globalRowOffset + r * globalRowStride of the global
    // batch (the stride is the number of MPI workers when they share batches element by
    // element), so that random masks depend on the sample, not on the replica or process.
    std::int64_t globalRowOffset = 0;
    std::int64_t globalRowStride = 1;
};

// Scratch a layer keeps between its forward and backward pass, owned by one replica.
struct LayerState
{
    std::vector<FloatTensor> saved;
};

// What the CUDA backend (train/gpu/) needs to run a layer with its own kernels: the layer's
// kind and its options. Layers that keep the default (Kind::None) are refused on a GPU with
// their name and class, never run wrongly.
struct LayerKernelSpec
{
    enum class Kind { None, Dense, Activation, Dropout, LayerNormalization, Reshape, Concatenate, RepeatVector, Gru, Lstm };
    Kind kind = Kind::None;
    std::int64_t units = 0;                            // Dense, GRU, LSTM
    ActivationKind activation = ActivationKind::Linear; // Dense, Activation; GRU, LSTM: tanh or sigmoid
    ActivationKind recurrentActivation = ActivationKind::Sigmoid; // GRU, LSTM
    bool useBias = true;                               // Dense, GRU, LSTM
    bool returnSequences = false;                      // GRU, LSTM
    std::int64_t repeats = 0;                          // RepeatVector
    double rate = 0;                                   // Dropout
    std::optional<std::uint64_t> seed;                 // Dropout
    double epsilon = 1e-3;                             // LayerNormalization
    bool center = true, scale = true;                  // LayerNormalization
};

class Layer
{
public:
    explicit Layer(std::string name) : m_name(std::move(name)) {}
    virtual ~Layer() = default;
    Layer(const Layer &) = delete;
    Layer &operator=(const Layer &) = delete;

    const std::string &name() const { return m_name; }
    virtual std::string className() const = 0;

    // Checks the inputs' per-sample shapes and returns the output's; an error names the layer
    // (Error::what = layer name) and says what does not fit.
    virtual Result<Shape> build(const std::vector<Shape> &inputShapes) = 0;

    // How the CUDA backend runs this layer (valid after build()); Kind::None: it cannot.
    virtual LayerKernelSpec kernelSpec() const { return {}; }

    // The layer's weights, in a fixed order, valid after build().
    virtual std::vector<ParamSpec> params() const { return {}; }

    // params[i] points at the values of params()[i]. Resizes `output`.
    virtual void forward(const PassContext &ctx, std::span<const float *const> params, std::span<const FloatTensor *const> inputs,
                         FloatTensor &output, LayerState &state) const = 0;

    // Given dLoss/dOutput: ADDS dLoss/dParam into grads[i] (sized like params()[i]) and WRITES
    // dLoss/dInput into dInputs[j] (resized by the layer) where dInputs[j] is not null (null:
    // that input needs no gradient, e.g. a model input). `output` is what forward produced.
    virtual void backward(const PassContext &ctx, std::span<const float *const> params, std::span<const FloatTensor *const> inputs,
                          const FloatTensor &output, const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs,
                          std::span<float *const> grads, LayerState &state) const = 0;

private:
    std::string m_name;
};

} // namespace sluice::train
