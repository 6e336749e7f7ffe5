#pragma once
// BatchNormalization over the last (channel) axis on the device, as the CPU layer computes it
// (train/layers/batch_normalization.cpp): training normalises each channel by the mean and
// biased variance of the rows given (every axis but the last), inference by the moving
// statistics; backward adds dGamma, dBeta and the moving statistics' updates
//   share * (batch statistic - moving statistic),  share = rows * lossScale * (1 - momentum)
// to their gradients (the trainer adds the reduced sum to those weights), and writes dx.
// Per-channel sums are taken in double over fixed chunks of rows (column_reduce.cuh), the
// elementwise arithmetic in the CPU's order with no fused multiply-add. Plain C++ header;
// defined in batch_norm_kernels.cu.

#include "train/cuda/runtime.h"

#include <cstdint>

namespace sluice::train::cuda {

// Per channel statistics as the CPU layer keeps them between its passes: stats[c] = mean,
// stats[C + c] = inv = 1 / sqrt(variance + epsilon), stats[2C + c] = variance (3 * C floats).
// y = (x - mean) * inv * gamma + beta over `rows` rows of `channels` values, folded as the CPU
// layer folds it: y = x * a + b, a = gamma * inv, b = beta - mean * a (gamma, beta may be null:
// scale / center off). `training` with rows > 0: the rows' statistics; otherwise the moving ones.
void batchNormForward(Stream stream, const float *x, const float *gamma, const float *beta, const float *movingMean,
                      const float *movingVariance, bool training, float *y, float *stats, std::int64_t rows, std::int64_t channels,
                      double epsilon);

// From forward's `stats`: ADDS sum(dy * xhat) to dGamma and sum(dy) to dBeta (either may be
// null), `movingShare` * (mean - movingMean) to dMovingMean and `movingShare` * (variance -
// movingVariance) to dMovingVariance (movingShare = samples * lossScale * (1 - momentum), 0
// outside training steps); WRITES dx = k dy - a - xhat b (k = gamma * inv, a = k mean(dy),
// b = k mean(dy * xhat)) where dx is not null.
void batchNormBackward(Stream stream, const float *x, const float *gamma, const float *movingMean, const float *movingVariance,
                       const float *stats, const float *dy, float *dx, float *dGamma, float *dBeta, float *dMovingMean, float *dMovingVariance,
                       std::int64_t rows, std::int64_t channels, double movingShare);

} // namespace sluice::train::cuda
