// Kernels for pooling_kernels.h: a thread per output value forward, a thread per input value
// backward (a gather over the windows holding it: no atomics, and the CPU layer's order of
// addition, so average pooling's gradients are its bits). Consecutive threads take consecutive
// channels, so reads and writes are coalesced in the channels-last layout.
#include "train/cuda/check.h"
#include "train/cuda/device_util.cuh"
#include "train/cuda/kernels/pooling_kernels.h"

#include <climits>

namespace sluice::train::cuda {
namespace {

#define SLUICE_GRID_STRIDE(i, n) \
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < (n); i += std::int64_t(gridDim.x) * blockDim.x)

// Output (oy, ox)'s window clipped to the input: rows [y0, y1), columns [x0, x1). Never empty:
// "same" padding is smaller than the window.
struct Span
{
    std::int64_t y0, y1, x0, x1;
};

__device__ inline Span windowSpan(const Window &w, std::int64_t oy, std::int64_t ox)
{
    const std::int64_t ys = oy * w.strideH - w.padTop, xs = ox * w.strideW - w.padLeft;
    return {ys > 0 ? ys : 0, ys + w.sizeH < w.inH ? ys + w.sizeH : w.inH, xs > 0 ? xs : 0, xs + w.sizeW < w.inW ? xs + w.sizeW : w.inW};
}

// The outputs whose windows hold input position i along one axis: [first, last] (empty when
// first > last).
__device__ inline void coveringOutputs(std::int64_t i, std::int64_t pad, std::int64_t size, std::int64_t stride, std::int64_t outs,
                                       std::int64_t &first, std::int64_t &last)
{
    const std::int64_t lo = i + pad - size + 1; // o * stride >= lo
    first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
    last = (i + pad) / stride;
    if (last > outs - 1)
        last = outs - 1;
}

__global__ void poolForwardKernel(Window w, bool isMax, const float *x, float *y, std::int32_t *argmax, std::int64_t n)
{
    const std::int64_t C = w.channels;
    SLUICE_GRID_STRIDE(i, n)
    {
        const std::int64_t c = i % C, pos = (i / C) % (w.outH * w.outW), b = i / (C * w.outH * w.outW);
        const std::int64_t oy = pos / w.outW, ox = pos % w.outW;
        const float *sample = x + b * w.inH * w.inW * C + c;
        const Span s = windowSpan(w, oy, ox);
        float acc = sample[(s.y0 * w.inW + s.x0) * C];
        std::int64_t best = s.y0 * w.inW + s.x0;
        for (std::int64_t iy = s.y0; iy < s.y1; ++iy)
            for (std::int64_t ix = iy == s.y0 ? s.x0 + 1 : s.x0; ix < s.x1; ++ix) {
                const float v = sample[(iy * w.inW + ix) * C];
                if (!isMax) {
                    acc += v;
                } else if (v > acc) { // strictly greater: the first maximum in window order wins
                    acc = v;
                    best = iy * w.inW + ix;
                }
            }
        if (!isMax)
            acc /= float((s.y1 - s.y0) * (s.x1 - s.x0));
        y[i] = acc;
        if (argmax)
            argmax[i] = std::int32_t(best);
    }
}

__global__ void poolBackwardKernel(Window w, bool isMax, const std::int32_t *argmax, const float *dy, float *dx, std::int64_t n)
{
    const std::int64_t C = w.channels;
    SLUICE_GRID_STRIDE(i, n)
    {
        const std::int64_t c = i % C, pos = (i / C) % (w.inH * w.inW), b = i / (C * w.inH * w.inW);
        const std::int64_t iy = pos / w.inW, ix = pos % w.inW;
        std::int64_t oy0, oy1, ox0, ox1;
        coveringOutputs(iy, w.padTop, w.sizeH, w.strideH, w.outH, oy0, oy1);
        coveringOutputs(ix, w.padLeft, w.sizeW, w.strideW, w.outW, ox0, ox1);
        const std::int64_t outBase = b * w.outH * w.outW;
        float sum = 0.0f;
        for (std::int64_t oy = oy0; oy <= oy1; ++oy)
            for (std::int64_t ox = ox0; ox <= ox1; ++ox) {
                const std::int64_t o = (outBase + oy * w.outW + ox) * C + c;
                if (isMax) {
                    if (argmax[o] == pos)
                        sum += dy[o];
                } else {
                    const Span s = windowSpan(w, oy, ox);
                    sum += dy[o] / float((s.y1 - s.y0) * (s.x1 - s.x0));
                }
            }
        dx[i] = sum;
    }
}

// A thread per (sample, channel), walking the positions in order.
__global__ void globalForwardKernel(bool isMax, const float *x, float *y, std::int32_t *argmax, std::int64_t n, std::int64_t P, std::int64_t C)
{
    SLUICE_GRID_STRIDE(i, n)
    {
        const std::int64_t b = i / C, c = i % C;
        const float *sample = x + b * P * C + c;
        if (isMax) {
            float top = sample[0];
            std::int64_t best = 0;
            for (std::int64_t p = 1; p < P; ++p)
                if (sample[p * C] > top) { // strictly greater: the first maximum wins
                    top = sample[p * C];
                    best = p;
                }
            y[i] = top;
            if (argmax)
                argmax[i] = std::int32_t(best);
        } else {
            // In double, as the CPU layer: many positions would lose float precision.
            double sum = 0;
#pragma unroll 4
            for (std::int64_t p = 0; p < P; ++p)
                sum += sample[p * C];
            y[i] = float(sum / double(P));
        }
    }
}

__global__ void globalBackwardKernel(bool isMax, const std::int32_t *argmax, const float *dy, float *dx, std::int64_t n, std::int64_t P,
                                     std::int64_t C)
{
    SLUICE_GRID_STRIDE(i, n)
    {
        const std::int64_t c = i % C, p = (i / C) % P, b = i / (C * P);
        const float g = dy[b * C + c];
        dx[i] = isMax ? (argmax[b * C + c] == p ? g : 0.0f) : g / float(P);
    }
}

void checkPoolWindow(const char *op, const Window &w, std::int64_t samples)
{
    detail::require(samples >= 0, op, "samples must not be negative");
    detail::require(w.channels > 0 && w.sizeH > 0 && w.sizeW > 0 && w.strideH > 0 && w.strideW > 0, op,
                    "the window's channels, size and strides must be positive");
    detail::require(w.dilationH == 1 && w.dilationW == 1, op, "pooling windows have no dilation");
    detail::require(w.inH > 0 && w.inW > 0 && w.outH > 0 && w.outW > 0, op, "the input and output must not be empty");
    detail::require(w.padTop < w.sizeH && w.padLeft < w.sizeW, op, "padding must be smaller than the window");
    detail::require(w.inH * w.inW <= INT_MAX, op, "the maxima's positions are 32-bit");
}

} // namespace

void poolForward(Stream stream, const Window &win, bool max, const float *x, float *y, std::int32_t *argmax, std::int64_t samples)
{
    checkPoolWindow("poolForward", win, samples);
    const std::int64_t n = samples * win.outPositions() * win.channels;
    if (n == 0)
        return;
    detail::require(x && y, "poolForward", "x and y must be device pointers");
    poolForwardKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(win, max, x, y, max ? argmax : nullptr, n);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void poolBackward(Stream stream, const Window &win, bool max, const std::int32_t *argmax, const float *dy, float *dx, std::int64_t samples)
{
    checkPoolWindow("poolBackward", win, samples);
    const std::int64_t n = samples * win.inPositions() * win.channels;
    if (n == 0)
        return;
    detail::require(dy && dx, "poolBackward", "dy and dx must be device pointers");
    detail::require(!max || argmax, "poolBackward", "max pooling needs the maxima's positions from the forward pass");
    poolBackwardKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(win, max, argmax, dy, dx, n);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void globalPoolForward(Stream stream, bool max, const float *x, float *y, std::int32_t *argmax, std::int64_t samples, std::int64_t positions,
                       std::int64_t channels)
{
    detail::require(samples >= 0 && positions > 0 && channels > 0, "globalPoolForward", "needs samples >= 0, positions > 0 and channels > 0");
    detail::require(positions <= INT_MAX, "globalPoolForward", "the maxima's positions are 32-bit");
    const std::int64_t n = samples * channels;
    if (n == 0)
        return;
    detail::require(x && y, "globalPoolForward", "x and y must be device pointers");
    globalForwardKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(max, x, y, max ? argmax : nullptr, n,
                                                                                                   positions, channels);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void globalPoolBackward(Stream stream, bool max, const std::int32_t *argmax, const float *dy, float *dx, std::int64_t samples,
                        std::int64_t positions, std::int64_t channels)
{
    detail::require(samples >= 0 && positions > 0 && channels > 0, "globalPoolBackward", "needs samples >= 0, positions > 0 and channels > 0");
    const std::int64_t n = samples * positions * channels;
    if (n == 0)
        return;
    detail::require(dy && dx, "globalPoolBackward", "dy and dx must be device pointers");
    detail::require(!max || argmax, "globalPoolBackward", "max pooling needs the maxima's positions from the forward pass");
    globalBackwardKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(max, argmax, dy, dx, n, positions, channels);
    SLUICE_CUDA_CHECK_LAUNCH();
}

} // namespace sluice::train::cuda
