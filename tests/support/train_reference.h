#pragma once
// Reference data for the training tests: the JSON files under tests/data/train that the
// make_*_reference.py scripts there write from PyTorch and Keras 3, and the tensors inside them.

#include "train/model/float_tensor.h"

#include <nlohmann/json.hpp>

#include <string>

namespace sluice::test {

// tests/data/train/<file>, parsed on first use.
const nlohmann::json &trainReference(const std::string &file);

// {"shape": [...], "data": [...]} as a tensor.
train::FloatTensor tensorFrom(const nlohmann::json &j);

// |got - want| <= tolerance * max(1, |want|).
bool closeTo(double got, double want, double tolerance);

} // namespace sluice::test
