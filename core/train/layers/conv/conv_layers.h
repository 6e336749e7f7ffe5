#pragma once
// The Keras convolution and pooling layers of the CPU backend, made from already-checked
// options (the registry, train/model/layer_registry.h, turns JSON configs into these). Channels-last
// only: 1-D layers take [B, steps, channels], 2-D layers [B, height, width, channels]. Output
// sizes and "same" padding follow TensorFlow (what Keras runs on): out = ceil(in / stride),
// padded by max((out - 1) * stride + window - in, 0), the smaller half before.
//
// Threading: as basic_layers.h. Results do not depend on the number of threads.

#include "train/model/activations.h"
#include "train/model/layer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace sluice::train {

enum class ConvPadding { Valid, Same };

struct ConvOptions
{
    int rank = 2; // spatial axes: 1 (Conv1D) or 2 (Conv2D)
    std::int64_t filters = 1;
    Shape kernelSize{1, 1}; // one entry per spatial axis, like strides and dilationRate
    Shape strides{1, 1};
    Shape dilationRate{1, 1}; // > 1 only with strides of 1, as Keras requires
    ConvPadding padding = ConvPadding::Valid;
    ActivationKind activation = ActivationKind::Linear;
    bool useBias = true;
    std::string kernelInitializer = "glorot_uniform";
    std::string biasInitializer = "zeros";
};

// Conv1D / Conv2D: activation(conv(x, kernel) + bias); kernel (k, C, filters) or
// (kh, kw, C, filters) as Keras lays it out, bias (filters,).
std::unique_ptr<Layer> makeConv(std::string name, ConvOptions options);

enum class PoolKind { Max, Average };

struct PoolingOptions
{
    int rank = 2;
    PoolKind kind = PoolKind::Max;
    Shape poolSize{2, 2}; // one entry per spatial axis
    Shape strides{2, 2};
    ConvPadding padding = ConvPadding::Valid;
};

// MaxPooling1D/2D, AveragePooling1D/2D. Max pooling ignores padded positions and sends the
// gradient to the first maximal element in window order; average pooling divides by the
// number of non-padded elements of each window (as TensorFlow does).
std::unique_ptr<Layer> makePooling(std::string name, PoolingOptions options);

struct GlobalPoolingOptions
{
    int rank = 2;
    PoolKind kind = PoolKind::Average;
    bool keepdims = false; // [B, 1, C] / [B, 1, 1, C] rather than [B, C]
};

// GlobalAveragePooling1D/2D, GlobalMaxPooling1D/2D: the mean or the maximum over the spatial axes.
std::unique_ptr<Layer> makeGlobalPooling(std::string name, GlobalPoolingOptions options);

} // namespace sluice::train
