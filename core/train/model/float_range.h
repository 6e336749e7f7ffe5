#pragma once
// A run of floats in a model's flat weight or gradient buffer (train/model/model.h lays them out):
// what reducers, clipping and optimizers are given when only part of the buffer takes part in
// a step (row-sparse tables).

#include <cstddef>

namespace sluice::train {

struct FloatRange
{
    std::size_t offset = 0;
    std::size_t count = 0;
};

} // namespace sluice::train
