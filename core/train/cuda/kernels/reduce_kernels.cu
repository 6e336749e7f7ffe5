// Kernels for reduce_kernels.h: up to kPerLaunch inputs are passed by value in one launch; more
// are folded in by further launches that start from `out`, which keeps the order of the sum.
#include "train/cuda/check.h"
#include "train/cuda/device_util.cuh"
#include "train/cuda/kernels/reduce_kernels.h"

#include <cstdint>

namespace sluice::train::cuda {
namespace {

constexpr int kPerLaunch = 8;

struct Inputs
{
    const float *p[kPerLaunch];
    int count;
};

// out = (fromOut ? out : in[0]) + the rest, in order.
__global__ void sumKernel(Inputs in, bool fromOut, float *out, std::int64_t n)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        float s = fromOut ? out[i] : in.p[0][i];
        for (int k = fromOut ? 0 : 1; k < in.count; ++k)
            s += in.p[k][i];
        out[i] = s;
    }
}

// The same sums four elements at a time (16-byte loads and stores), where n % 4 == 0 and every
// buffer is 16-byte aligned.
__global__ void sumVec4Kernel(Inputs in, bool fromOut, float *out, std::int64_t n4)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n4; i += std::int64_t(gridDim.x) * blockDim.x) {
        float4 s = fromOut ? reinterpret_cast<const float4 *>(out)[i] : reinterpret_cast<const float4 *>(in.p[0])[i];
        for (int k = fromOut ? 0 : 1; k < in.count; ++k) {
            const float4 v = reinterpret_cast<const float4 *>(in.p[k])[i];
            s.x += v.x;
            s.y += v.y;
            s.z += v.z;
            s.w += v.w;
        }
        reinterpret_cast<float4 *>(out)[i] = s;
    }
}

bool aligned16(const void *p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

} // namespace

void sumBuffers(Stream stream, const float *const *inputs, std::size_t count, float *out, std::int64_t n)
{
    detail::require(inputs && count >= 1, "sumBuffers", "needs at least one input");
    detail::require(n >= 0, "sumBuffers", "n must not be negative");
    if (n == 0)
        return;
    detail::require(out != nullptr, "sumBuffers", "out must be a device pointer");
    for (std::size_t k = 0; k < count; ++k)
        detail::require(inputs[k] != nullptr, "sumBuffers", "every input must be a device pointer");
    // An input that aliases `out` must be read before out is written: only the first launch's
    // first input may (each element is read before it is written, by the same thread).
    for (std::size_t k = 1; k < count; ++k)
        detail::require(inputs[k] != out, "sumBuffers", "only the first input may be the output");
    bool vec = n % 4 == 0 && aligned16(out);
    for (std::size_t k = 0; k < count; ++k)
        vec = vec && aligned16(inputs[k]);
    for (std::size_t first = 0; first < count;) {
        const bool fromOut = first > 0;
        Inputs in{};
        in.count = 0;
        while (first < count && in.count < kPerLaunch)
            in.p[in.count++] = inputs[first++];
        if (vec)
            sumVec4Kernel<<<detail::elementwiseBlocks(n / 4), detail::kElementwiseThreads, 0, stream>>>(in, fromOut, out, n / 4);
        else
            sumKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(in, fromOut, out, n);
        SLUICE_CUDA_CHECK_LAUNCH();
    }
}

} // namespace sluice::train::cuda
