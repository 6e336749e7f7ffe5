#pragma once
// A Keras layer of the CPU backend. Layers are created from their Keras class name and config
// (train/model/layer_registry.h), built once with the per-sample shapes of their inputs, and are
// immutable afterwards: every replica runs the same Layer objects with its own activations and
// LayerState, so forward/backward are const and may run concurrently on different replicas.
//
// Shapes given to build() have no batch dimension; tensors given to forward/backward have the
// batch first ([B, ...per-sample shape]).

#include "io/error.h"
#include "train/model/activations.h"
#include "train/model/float_tensor.h"

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
    // False for state that no optimizer updates (BatchNormalization's moving statistics): the
    // layer's backward adds the change it wants to its "gradient", and the trainer adds the
    // all-reduced sum to the weight (batch_normalization.cpp says why).
    bool trainable = true;
    // A table whose gradient is row-sparse (Embedding): backward adds only to the rows it lists
    // in LayerState::rows, and the rest of its gradient stays zero. Replicas zero, all-reduce and
    // clip only those rows, so a step costs in proportion to the batch, not to the table.
    bool rowSparse = false;
    // With rowSparse: the optimizer updates only the rows the global batch used (LazyAdam-style;
    // the moments of other rows do not decay). Without it the whole table is updated, as Keras
    // and PyTorch do.
    bool sparseUpdates = false;
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
    // 1 / the global batch's rows (the loss's scale): a replica's share of the batch is its
    // rows times this. 0 outside training steps.
    double lossScale = 0;
};

// Scratch a layer keeps between its forward and backward pass, owned by one replica.
struct LayerState
{
    std::vector<FloatTensor> saved;
    // A layer with a rowSparse parameter: the sorted, distinct rows its last backward added to.
    std::vector<std::int64_t> rows;
    // Set by a forward pass that met input it cannot use (an Embedding id out of range): the
    // replica stops its pass and the step fails with this error instead of computing garbage.
    std::optional<Error> error;
};

// What the CUDA backend (train/gpu/) needs to run a layer with its own kernels: the layer's
// kind and its options. Layers that keep the default (Kind::None) are refused on a GPU with
// their name and class, never run wrongly.
struct LayerKernelSpec
{
    enum class Kind {
        None, Dense, Activation, Dropout, LayerNormalization, Reshape, Concatenate, RepeatVector, Gru, Lstm,
        Conv,              // Conv1D, Conv2D
        Pooling,           // MaxPooling1D/2D, AveragePooling1D/2D
        GlobalPooling,     // GlobalMaxPooling1D/2D, GlobalAveragePooling1D/2D
        BatchNormalization,
        Embedding
    };
    // A window over channels-last samples seen as [H, W, C] (1-D layers: H = 1 and a window 1
    // high), with TensorFlow's output sizes and "same" padding already worked out by the layer
    // (train/layers/conv/conv_geometry.h), so that the kernels need no padding arithmetic of their own.
    struct Window
    {
        std::int64_t inH = 1, inW = 1, channels = 1;
        std::int64_t outH = 1, outW = 1;
        std::int64_t sizeH = 1, sizeW = 1;
        std::int64_t strideH = 1, strideW = 1;
        std::int64_t dilationH = 1, dilationW = 1;
        std::int64_t padTop = 0, padLeft = 0; // padded rows above / columns left of the input
    };

    Kind kind = Kind::None;
    std::int64_t units = 0;                            // Dense, GRU, LSTM; Conv: filters
    ActivationKind activation = ActivationKind::Linear; // Dense, Activation, Conv; GRU, LSTM: tanh or sigmoid
    ActivationKind recurrentActivation = ActivationKind::Sigmoid; // GRU, LSTM
    bool useBias = true;                               // Dense, GRU, LSTM, Conv
    bool returnSequences = false;                      // GRU, LSTM
    std::int64_t repeats = 0;                          // RepeatVector
    double rate = 0;                                   // Dropout
    std::optional<std::uint64_t> seed;                 // Dropout
    double epsilon = 1e-3;                             // LayerNormalization, BatchNormalization
    bool center = true, scale = true;                  // LayerNormalization, BatchNormalization
    double momentum = 0.99;                            // BatchNormalization
    Window window;                                     // Conv, Pooling
    bool maxPooling = false;                           // Pooling, GlobalPooling: max (else average)
    std::int64_t inputDim = 0;                         // Embedding: the table's rows (units: its columns)
    bool sparseUpdates = false;                        // Embedding: refused on GPUs (the CPU backend's LazyAdam)
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

    // Layers that need sums over the whole global batch while training (BatchNormalization with
    // "synchronized": true) split each training pass in two around an all-reduce of
    // syncCount() doubles over every replica and process: the first half writes this replica's
    // sums, the second gets the global ones. Replica::start/resume drive them; forward() and
    // backward() are then used at inference only. 0: an ordinary layer.
    virtual std::size_t syncCount() const { return 0; }
    virtual void forwardSums(std::span<const float *const> /*params*/, std::span<const FloatTensor *const> /*inputs*/,
                             std::span<double> /*sums*/, LayerState & /*state*/) const
    {
    }
    virtual void forwardSynced(const PassContext &ctx, std::span<const float *const> params, std::span<const FloatTensor *const> inputs,
                               std::span<const double> /*sums*/, FloatTensor &output, LayerState &state) const
    {
        forward(ctx, params, inputs, output, state);
    }
    virtual void backwardSums(std::span<const float *const> /*params*/, std::span<const FloatTensor *const> /*inputs*/,
                              const FloatTensor & /*dOutput*/, std::span<double> /*sums*/, LayerState & /*state*/) const
    {
    }
    virtual void backwardSynced(const PassContext &ctx, std::span<const float *const> params, std::span<const FloatTensor *const> inputs,
                                const FloatTensor &output, const FloatTensor &dOutput, std::span<const double> /*sums*/,
                                std::span<FloatTensor *const> dInputs, std::span<float *const> grads, LayerState &state) const
    {
        backward(ctx, params, inputs, output, dOutput, dInputs, grads, state);
    }

private:
    std::string m_name;
};

} // namespace sluice::train
