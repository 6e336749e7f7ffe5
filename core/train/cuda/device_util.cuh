#pragma once
// Device helpers shared by the kernels: warp reductions and launch sizes. Row-wise kernels give
// one warp to each row (rows of a few to a few thousand values: the whole row stays in one
// warp's registers and loops, with no shared memory or block barrier).

#include <cstdint>

namespace sluice::train::cuda::detail {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8; // warps of a row-wise kernel's block
constexpr int kElementwiseThreads = 256;

template <typename T>
__device__ inline T warpSum(T v)
{
    for (int o = kWarp / 2; o > 0; o /= 2)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

__device__ inline float warpMax(float v)
{
    for (int o = kWarp / 2; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    return v;
}

// Blocks for an elementwise grid-stride kernel over n items: enough to fill any device, capped
// so that each thread loops over several items.
inline unsigned elementwiseBlocks(std::int64_t n)
{
    const std::int64_t blocks = (n + kElementwiseThreads - 1) / kElementwiseThreads;
    return unsigned(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

// Blocks for a row-wise kernel over `rows` rows (a warp each, grid-stride over rows).
inline unsigned rowBlocks(std::int64_t rows)
{
    const std::int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
    return unsigned(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

} // namespace sluice::train::cuda::detail
