#pragma once
// GRU and LSTM as Keras defines them (weights in Keras's layout: kernel (F, k*U),
// recurrent_kernel (U, k*U), bias; gate order z, r, h for GRU with reset_after=True, i, f, c, o
// for LSTM), with back-propagation through time.

#include "io/error.h"
#include "train/layer.h"

#include <memory>

namespace sluice::train {

Result<std::unique_ptr<Layer>> createGru(const std::string &name, const nlohmann::json &config);
Result<std::unique_ptr<Layer>> createLstm(const std::string &name, const nlohmann::json &config);

} // namespace sluice::train
