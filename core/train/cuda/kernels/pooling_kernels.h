#pragma once
// Pooling on the device with the CPU layers' semantics (train/layers/pooling.cpp,
// global_pooling.cpp), channels last: max pooling ignores padded positions, takes the first
// maximum in window order (a strictly greater value replaces it) and sends the gradient there;
// average pooling divides by the number of positions inside the input. Forward keeps the
// maxima's positions for backward (the CPU layers find them again: the same positions). Plain
// C++ header; defined in pooling_kernels.cu.

#include "train/cuda/runtime.h"
#include "train/cuda/window.h"

#include <cstdint>

namespace sluice::train::cuda {

// MaxPooling / AveragePooling over `samples` samples x [inH, inW, C] -> y [outH, outW, C] each
// (the window's dilation must be 1). Max pooling writes, where `argmax` is not null, each
// output's maximum as a position iy * inW + ix of its sample (one int per output value).
void poolForward(Stream stream, const Window &win, bool max, const float *x, float *y, std::int32_t *argmax, std::int64_t samples);

// WRITES dx from dy: max pooling from forward's `argmax` (required), average pooling from the
// window sizes. Each element of dx sums the windows that hold it, in output order, as the CPU
// layer adds them.
void poolBackward(Stream stream, const Window &win, bool max, const std::int32_t *argmax, const float *dy, float *dx, std::int64_t samples);

// GlobalMax / GlobalAveragePooling: y [samples, C] from x [samples, positions, C]; the mean is
// summed in double in position order, as the CPU layer sums it. Max pooling writes the first
// maximum's position into `argmax` [samples, C] where not null.
void globalPoolForward(Stream stream, bool max, const float *x, float *y, std::int32_t *argmax, std::int64_t samples, std::int64_t positions,
                       std::int64_t channels);

// WRITES dx [samples, positions, C]: dy / positions everywhere (average), or dy at the maximum
// and 0 elsewhere (max; `argmax` required).
void globalPoolBackward(Stream stream, bool max, const std::int32_t *argmax, const float *dy, float *dx, std::int64_t samples,
                        std::int64_t positions, std::int64_t channels);

} // namespace sluice::train::cuda
