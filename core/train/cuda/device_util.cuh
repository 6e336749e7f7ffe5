#pragma once
// Device helpers shared by the kernels: warp reductions and launch sizes. Row-wise kernels give
// one warp to each row (rows of a few to a few thousand values: the whole row stays in one
// warp's registers and loops, with no shared memory or block barrier).

#include <cstdint>
#include <type_traits>

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

// A lane's share of one row in a warp-per-row kernel: elements lane, lane + 32, lane + 64, ...
// With PerLane > 0 the row (at most 32 * PerLane values) is read once into registers, so a kernel
// that passes over it several times (max then sum, mean then variance) moves each element once;
// PerLane == 0 reads memory at every pass, for rows of any width. Both visit the elements in the
// same order, so they give the same bits.
template <int PerLane>
struct LaneRow
{
    float v[PerLane];
    std::int64_t n;
    int lane;

    __device__ LaneRow(const float *p, std::int64_t count, int laneIndex) : n(count), lane(laneIndex)
    {
#pragma unroll
        for (int k = 0; k < PerLane; ++k) {
            const std::int64_t i = lane + std::int64_t(k) * kWarp;
            v[k] = i < n ? p[i] : 0.0f;
        }
    }
    // f(i, value) for each of the lane's elements, in increasing i.
    template <typename F>
    __device__ void forEach(F f) const
    {
#pragma unroll
        for (int k = 0; k < PerLane; ++k) {
            const std::int64_t i = lane + std::int64_t(k) * kWarp;
            if (i < n)
                f(i, v[k]);
        }
    }
    // f(i, value, other's value) over two rows of the same width.
    template <typename F>
    __device__ void forEachWith(const LaneRow &other, F f) const
    {
#pragma unroll
        for (int k = 0; k < PerLane; ++k) {
            const std::int64_t i = lane + std::int64_t(k) * kWarp;
            if (i < n)
                f(i, v[k], other.v[k]);
        }
    }
};

template <>
struct LaneRow<0>
{
    const float *p;
    std::int64_t n;
    int lane;

    __device__ LaneRow(const float *row, std::int64_t count, int laneIndex) : p(row), n(count), lane(laneIndex) {}
    template <typename F>
    __device__ void forEach(F f) const
    {
        for (std::int64_t i = lane; i < n; i += kWarp)
            f(i, p[i]);
    }
    template <typename F>
    __device__ void forEachWith(const LaneRow &other, F f) const
    {
        for (std::int64_t i = lane; i < n; i += kWarp)
            f(i, p[i], other.p[i]);
    }
};

// Calls launch(std::integral_constant<int, PerLane>) with the smallest register row that holds
// `cols` values, or 0 (from memory) past 1024.
template <typename Launch>
void byRowWidth(std::int64_t cols, Launch launch)
{
    if (cols <= 32)
        launch(std::integral_constant<int, 1>{});
    else if (cols <= 128)
        launch(std::integral_constant<int, 4>{});
    else if (cols <= 512)
        launch(std::integral_constant<int, 16>{});
    else if (cols <= 1024)
        launch(std::integral_constant<int, 32>{});
    else
        launch(std::integral_constant<int, 0>{});
}

} // namespace sluice::train::cuda::detail
