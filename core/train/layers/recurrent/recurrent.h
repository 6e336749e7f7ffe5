#pragma once
// GRU and LSTM as Keras defines them (weights in Keras's layout: kernel (F, k*U),
// recurrent_kernel (U, k*U), bias; gate order z, r, h for GRU with reset_after=True, i, f, c, o
// for LSTM), with back-propagation through time, made from already-checked options (the
// registry, train/model/layer_registry.h, reads them from JSON as it does for the other layers).
//
// Threading: as the other layers (train/layers/basic_layers.h): immutable after build().

#include "train/model/layer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace sluice::train {

// The only activations the recurrent layers take (Keras's defaults and their swap).
enum class GateActivation { Tanh, Sigmoid };

struct RecurrentOptions
{
    std::int64_t units = 1;
    GateActivation activation = GateActivation::Tanh;             // candidate (and LSTM cell output)
    GateActivation recurrentActivation = GateActivation::Sigmoid; // gates
    bool useBias = true;
    bool returnSequences = false;
    // LSTM only: the forget gate's bias starts at 1; needs biasInitializer "zeros" or "ones"
    // (the registry checks it).
    bool unitForgetBias = true;
    std::string kernelInitializer = "glorot_uniform";
    std::string recurrentInitializer = "orthogonal";
    std::string biasInitializer = "zeros";
};

std::unique_ptr<Layer> makeGru(std::string name, RecurrentOptions options);
std::unique_ptr<Layer> makeLstm(std::string name, RecurrentOptions options);

} // namespace sluice::train
