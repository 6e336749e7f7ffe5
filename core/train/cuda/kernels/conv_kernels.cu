// Kernels for conv_kernels.h. im2col has a thread per element of the block's matrix, so that
// consecutive threads write consecutive columns (channels, then taps) and read consecutive
// channels of the input. col2im gathers rather than scatters: a thread per element of dx walks
// the taps that can have read it, which needs no atomics and sums in a fixed order.
#include "train/cuda/check.h"
#include "train/cuda/kernels/conv_kernels.h"
#include "train/cuda/device_util.cuh"

namespace sluice::train::cuda {
namespace {

__global__ void im2colKernel(Window w, const float *x, std::int64_t r0, std::int64_t n, float *cols)
{
    const std::int64_t C = w.channels, K = w.sizeH * w.sizeW * C, P = w.outH * w.outW;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        const std::int64_t row = r0 + i / K, col = i % K;
        const std::int64_t c = col % C, tap = col / C, ky = tap / w.sizeW, kx = tap % w.sizeW;
        const std::int64_t b = row / P, pos = row % P, oy = pos / w.outW, ox = pos % w.outW;
        const std::int64_t iy = oy * w.strideH - w.padTop + ky * w.dilationH;
        const std::int64_t ix = ox * w.strideW - w.padLeft + kx * w.dilationW;
        const bool inside = iy >= 0 && iy < w.inH && ix >= 0 && ix < w.inW;
        cols[i] = inside ? x[((b * w.inH + iy) * w.inW + ix) * C + c] : 0.0f;
    }
}

// The input position `i` along an axis is read by tap k of output o where
// o * stride - pad + k * dilation == i: walked over k, o follows when the division is exact.
__global__ void col2imKernel(Window w, const float *cols, std::int64_t r0, std::int64_t r1, std::int64_t first, std::int64_t n, float *dx)
{
    const std::int64_t C = w.channels, K = w.sizeH * w.sizeW * C, P = w.outH * w.outW;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        const std::int64_t c = i % C, pos = (i / C) % (w.inH * w.inW), b = first + i / (C * w.inH * w.inW);
        const std::int64_t iy = pos / w.inW, ix = pos % w.inW;
        float sum = 0.0f;
        for (std::int64_t ky = 0; ky < w.sizeH; ++ky) {
            const std::int64_t ty = iy + w.padTop - ky * w.dilationH;
            if (ty < 0 || ty % w.strideH != 0 || ty / w.strideH >= w.outH)
                continue;
            const std::int64_t oy = ty / w.strideH;
            for (std::int64_t kx = 0; kx < w.sizeW; ++kx) {
                const std::int64_t tx = ix + w.padLeft - kx * w.dilationW;
                if (tx < 0 || tx % w.strideW != 0 || tx / w.strideW >= w.outW)
                    continue;
                const std::int64_t row = b * P + oy * w.outW + tx / w.strideW;
                if (row < r0 || row >= r1)
                    continue;
                sum += cols[(row - r0) * K + (ky * w.sizeW + kx) * C + c];
            }
        }
        dx[first * w.inH * w.inW * C + i] += sum;
    }
}

void checkWindow(const char *op, const Window &w, std::int64_t r0, std::int64_t r1)
{
    detail::require(w.channels > 0 && w.sizeH > 0 && w.sizeW > 0 && w.strideH > 0 && w.strideW > 0 && w.dilationH > 0 && w.dilationW > 0, op,
                    "the window's channels, size, strides and dilation must be positive");
    detail::require(w.inH > 0 && w.inW > 0 && w.outH > 0 && w.outW > 0, op, "the input and output must not be empty");
    detail::require(0 <= r0 && r0 <= r1, op, "needs 0 <= r0 <= r1");
}

} // namespace

void im2col(Stream stream, const Window &win, const float *x, std::int64_t r0, std::int64_t r1, float *cols)
{
    checkWindow("im2col", win, r0, r1);
    const std::int64_t n = (r1 - r0) * win.colWidth();
    if (n == 0)
        return;
    detail::require(x && cols, "im2col", "x and cols must be device pointers");
    im2colKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(win, x, r0, n, cols);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void col2imAdd(Stream stream, const Window &win, const float *cols, std::int64_t r0, std::int64_t r1, float *dx)
{
    checkWindow("col2imAdd", win, r0, r1);
    if (r1 == r0)
        return;
    detail::require(cols && dx, "col2imAdd", "cols and dx must be device pointers");
    // Only the samples the block's rows belong to receive anything.
    const std::int64_t P = win.outPositions(), first = r0 / P, last = (r1 - 1) / P;
    const std::int64_t n = (last - first + 1) * win.inPositions() * win.channels;
    col2imKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(win, cols, r0, r1, first, n, dx);
    SLUICE_CUDA_CHECK_LAUNCH();
}

} // namespace sluice::train::cuda
