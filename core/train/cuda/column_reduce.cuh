#pragma once
// Column sums over many rows (bias gradients, LayerNormalization's dGamma / dBeta), in two
// deterministic passes: blocks of 32 columns x a fixed chunk of rows write partial sums in
// double, then one thread per column adds its chunks in order. The chunking depends on the row
// count only, so the same input gives the same bits on any device; a grid of column blocks x
// row chunks keeps every multiprocessor busy where one thread per column would leave most idle
// (a tall [65536, 1024] gradient has only 1024 columns).

#include "train/cuda/check.h"

#include <cstdint>

namespace sluice::train::cuda::detail {

constexpr int kReduceCols = 32, kReduceRowGroups = 8;

// Rows per chunk: at least 256, and at most 1024 chunks.
inline std::int64_t reduceRowsPerChunk(std::int64_t rows)
{
    std::int64_t per = 256;
    while ((rows + per - 1) / per > 1024)
        per *= 2;
    return per;
}

// partial[o][chunk][c] = sum over the chunk's rows r of term(r, c)[o].
template <int Outputs, typename Term>
__global__ void columnPartialsKernel(Term term, std::int64_t rows, std::int64_t cols, std::int64_t rowsPerChunk, double *partial)
{
    __shared__ double part[Outputs][kReduceRowGroups][kReduceCols];
    const std::int64_t c = blockIdx.x * std::int64_t(kReduceCols) + threadIdx.x;
    const std::int64_t chunk = blockIdx.y, r0 = chunk * rowsPerChunk;
    const std::int64_t r1 = r0 + rowsPerChunk < rows ? r0 + rowsPerChunk : rows;
    double acc[Outputs] = {};
    if (c < cols)
        for (std::int64_t r = r0 + threadIdx.y; r < r1; r += kReduceRowGroups)
            term(r, c, acc);
    for (int o = 0; o < Outputs; ++o)
        part[o][threadIdx.y][threadIdx.x] = acc[o];
    __syncthreads();
    if (threadIdx.y == 0 && c < cols)
        for (int o = 0; o < Outputs; ++o) {
            double s = 0;
            for (int g = 0; g < kReduceRowGroups; ++g)
                s += part[o][g][threadIdx.x];
            partial[(std::int64_t(o) * gridDim.y + chunk) * cols + c] = s;
        }
}

template <int Outputs>
struct ColumnOutputs
{
    float *out[Outputs]; // null: that output is not wanted
};

// out[o][c] = (accumulate ? out[o][c] : 0) + sum over chunks, in chunk order.
template <int Outputs>
__global__ void columnFinishKernel(const double *partial, std::int64_t chunks, std::int64_t cols, ColumnOutputs<Outputs> outs, bool accumulate)
{
    for (std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; c < cols; c += std::int64_t(gridDim.x) * blockDim.x)
        for (int o = 0; o < Outputs; ++o) {
            if (!outs.out[o])
                continue;
            double s = 0;
            for (std::int64_t k = 0; k < chunks; ++k)
                s += partial[(o * chunks + k) * cols + c];
            outs.out[o][c] = accumulate ? float(double(outs.out[o][c]) + s) : float(s);
        }
}

// Runs both passes on `stream`, the partials in stream-ordered scratch memory.
template <int Outputs, typename Term>
void reduceColumns(Stream stream, Term term, std::int64_t rows, std::int64_t cols, ColumnOutputs<Outputs> outs, bool accumulate)
{
    const std::int64_t per = reduceRowsPerChunk(rows);
    const std::int64_t chunks = rows > 0 ? (rows + per - 1) / per : 1;
    const std::int64_t colBlocks = (cols + kReduceCols - 1) / kReduceCols;
    require(colBlocks <= 0x7FFFFFFF, "column sums", "too many columns");
    double *partial = nullptr;
    SLUICE_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void **>(&partial), std::size_t(Outputs * chunks * cols) * sizeof(double), stream));
    if (rows > 0) {
        columnPartialsKernel<Outputs><<<dim3(unsigned(colBlocks), unsigned(chunks)), dim3(kReduceCols, kReduceRowGroups), 0, stream>>>(
            term, rows, cols, per, partial);
        SLUICE_CUDA_CHECK_LAUNCH();
    } else {
        SLUICE_CUDA_CHECK(cudaMemsetAsync(partial, 0, std::size_t(Outputs * cols) * sizeof(double), stream));
    }
    const std::int64_t blocks = (cols + 255) / 256;
    columnFinishKernel<Outputs><<<unsigned(blocks < 65535 ? blocks : 65535), 256, 0, stream>>>(partial, chunks, cols, outs, accumulate);
    SLUICE_CUDA_CHECK_LAUNCH();
    SLUICE_CUDA_CHECK(cudaFreeAsync(partial, stream));
}

} // namespace sluice::train::cuda::detail
