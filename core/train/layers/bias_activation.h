#pragma once
// The elementwise end of the layers that are a matrix product (Dense, Conv1D, Conv2D): bias and
// activation applied in one pass over the product's rows, and their gradients. Rows are U
// values wide; the work is split over oneTBB tasks and no result depends on the split.

#include "train/model/activations.h"

#include <cstdint>

namespace sluice::train::detail {

// y = f(y + bias) in place over R rows (bias may be null). Where `z` is not null (R * U values,
// needed when activationNeedsInput(f)) it receives the pre-activation values y + bias.
void biasActivationForward(ActivationKind f, const float *bias, float *y, float *z, std::int64_t R, std::int64_t U);

// dz = dy * f'(pre-activation) over R rows, from z (the pre-activation values, only read when
// activationNeedsInput(f)) and y = f(z).
void activationGradientRows(ActivationKind f, const float *z, const float *y, const float *dy, float *dz, std::int64_t R, std::int64_t U);

// dBias[u] += the sum over the rows of dz[r, u], each column summed in row order by one task.
void addBiasGradient(const float *dz, std::int64_t R, std::int64_t U, float *dBias);

} // namespace sluice::train::detail
