// Kernels for batch_norm_kernels.h. The per-channel sums are column sums over the rows: the
// partial sums of column_reduce.cuh (double, fixed chunks of rows), then a thread per channel
// that adds the chunks in order and does the layer's per-channel arithmetic in double, as the
// CPU layer does. The variance is taken around the mean in a second pass (no cancellation).
// Elementwise arithmetic goes through __fmul_rn / __fadd_rn so that nvcc fuses nothing: the
// CPU (x86-64 without FMA) rounds every product and sum, and the same statistics then give its bits.
#include "train/cuda/kernels/batch_norm_kernels.h"
#include "train/cuda/check.h"
#include "train/cuda/column_reduce.cuh"
#include "train/cuda/device_util.cuh"

namespace sluice::train::cuda {
namespace {

#define SLUICE_GRID_STRIDE(i, n) \
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < (n); i += std::int64_t(gridDim.x) * blockDim.x)

// The row chunks of a column reduction over `rows` rows and the launch of its partial sums.
struct Chunks
{
    std::int64_t rowsPerChunk = 0, count = 0;
    explicit Chunks(std::int64_t rows) : rowsPerChunk(detail::reduceRowsPerChunk(rows)), count((rows + rowsPerChunk - 1) / rowsPerChunk) {}
};

template <int Outputs, typename Term>
void launchPartials(Stream stream, Term term, std::int64_t rows, std::int64_t channels, const Chunks &chunks, double *partial)
{
    const std::int64_t colBlocks = (channels + detail::kReduceCols - 1) / detail::kReduceCols;
    detail::require(colBlocks <= 0x7FFFFFFF, "batch normalization", "too many channels");
    detail::columnPartialsKernel<Outputs><<<dim3(unsigned(colBlocks), unsigned(chunks.count)), dim3(detail::kReduceCols, detail::kReduceRowGroups), 0,
                                            stream>>>(term, rows, channels, chunks.rowsPerChunk, partial);
    SLUICE_CUDA_CHECK_LAUNCH();
}

unsigned channelBlocks(std::int64_t channels) { return detail::elementwiseBlocks(channels); }

// Stream-ordered scratch, freed on the stream after its last use.
template <typename T>
T *scratch(Stream stream, std::int64_t count)
{
    void *p = nullptr;
    SLUICE_CUDA_CHECK(cudaMallocAsync(&p, std::size_t(count) * sizeof(T), stream));
    return static_cast<T *>(p);
}

struct SumTerm
{
    const float *x;
    std::int64_t C;
    __device__ void operator()(std::int64_t r, std::int64_t c, double (&acc)[1]) const { acc[0] = __dadd_rn(acc[0], double(x[r * C + c])); }
};

struct SquaredDeviationTerm
{
    const float *x;
    const double *mean;
    std::int64_t C;
    __device__ void operator()(std::int64_t r, std::int64_t c, double (&acc)[1]) const
    {
        const double d = __dsub_rn(double(x[r * C + c]), mean[c]);
        acc[0] = __dadd_rn(acc[0], __dmul_rn(d, d));
    }
};

__device__ inline float normalized(float x, float mean, float inv) { return __fmul_rn(__fsub_rn(x, mean), inv); }

// sum(dy) and sum(dy * xhat), xhat recomputed in float as the CPU layer does.
struct GradientTerm
{
    const float *x, *dy, *stats;
    std::int64_t C;
    __device__ void operator()(std::int64_t r, std::int64_t c, double (&acc)[2]) const
    {
        const double g = dy[r * C + c];
        acc[0] = __dadd_rn(acc[0], g);
        acc[1] = __dadd_rn(acc[1], __dmul_rn(g, double(normalized(x[r * C + c], stats[c], stats[C + c]))));
    }
};

// The sum over chunks of partial[(output * chunks + k) * C + c], in chunk order.
__device__ inline double chunkSum(const double *partial, int output, std::int64_t chunks, std::int64_t C, std::int64_t c)
{
    double s = 0;
    for (std::int64_t k = 0; k < chunks; ++k)
        s = __dadd_rn(s, partial[(output * chunks + k) * C + c]);
    return s;
}

__global__ void meanKernel(const double *partial, std::int64_t chunks, std::int64_t C, std::int64_t rows, double *mean)
{
    SLUICE_GRID_STRIDE(c, C)
    mean[c] = __ddiv_rn(chunkSum(partial, 0, chunks, C, c), double(rows));
}

__global__ void varianceKernel(const double *partial, std::int64_t chunks, std::int64_t C, std::int64_t rows, const double *mean, double epsilon,
                               float *stats)
{
    SLUICE_GRID_STRIDE(c, C)
    {
        const float variance = float(__ddiv_rn(chunkSum(partial, 0, chunks, C, c), double(rows)));
        stats[c] = float(mean[c]);
        stats[C + c] = float(__ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(double(variance), epsilon))));
        stats[2 * C + c] = variance;
    }
}

__global__ void movingStatsKernel(const float *movingMean, const float *movingVariance, std::int64_t C, double epsilon, float *stats)
{
    SLUICE_GRID_STRIDE(c, C)
    {
        stats[c] = movingMean[c];
        stats[C + c] = float(__ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(double(movingVariance[c]), epsilon))));
        stats[2 * C + c] = movingVariance[c];
    }
}

// y = x * a + b per channel, as the CPU layer folds the normalisation: a = gamma * inv and
// b = beta - mean * a, both worked out in double (coef[c] = a, coef[C + c] = b).
__global__ void scaleShiftKernel(const float *stats, const float *gamma, const float *beta, std::int64_t C, float *coef)
{
    SLUICE_GRID_STRIDE(c, C)
    {
        const double scale = __dmul_rn(double(stats[C + c]), gamma ? double(gamma[c]) : 1.0);
        coef[c] = float(scale);
        coef[C + c] = float(__dsub_rn(beta ? double(beta[c]) : 0.0, __dmul_rn(double(stats[c]), scale)));
    }
}

__global__ void normalizeKernel(const float *x, const float *coef, float *y, std::int64_t n, std::int64_t C)
{
    SLUICE_GRID_STRIDE(i, n)
    {
        const std::int64_t c = i % C;
        y[i] = __fadd_rn(__fmul_rn(x[i], coef[c]), coef[C + c]);
    }
}

struct ParamGradients
{
    float *dGamma, *dBeta, *dMovingMean, *dMovingVariance; // each may be null
};

// Per channel: the parameters' gradients (ADDED in float, as the CPU adds float(sum)), and dx's
// coefficients k, a, b into coef[0..C), [C..2C), [2C..3C).
__global__ void finishKernel(const double *partial, std::int64_t chunks, std::int64_t C, std::int64_t rows, const float *gamma,
                             const float *movingMean, const float *movingVariance, const float *stats, ParamGradients g, double share, float *coef)
{
    SLUICE_GRID_STRIDE(c, C)
    {
        const double sumDy = chunkSum(partial, 0, chunks, C, c), sumDyX = chunkSum(partial, 1, chunks, C, c);
        const float mean = stats[c], inv = stats[C + c], variance = stats[2 * C + c];
        if (g.dGamma)
            g.dGamma[c] = __fadd_rn(g.dGamma[c], float(sumDyX));
        if (g.dBeta)
            g.dBeta[c] = __fadd_rn(g.dBeta[c], float(sumDy));
        if (g.dMovingMean)
            g.dMovingMean[c] = __fadd_rn(g.dMovingMean[c], float(__dmul_rn(share, __dsub_rn(double(mean), double(movingMean[c])))));
        if (g.dMovingVariance)
            g.dMovingVariance[c] = __fadd_rn(g.dMovingVariance[c], float(__dmul_rn(share, __dsub_rn(double(variance), double(movingVariance[c])))));
        const double scale = __dmul_rn(gamma ? double(gamma[c]) : 1.0, double(inv));
        coef[c] = float(scale);
        coef[C + c] = float(__ddiv_rn(__dmul_rn(scale, sumDy), double(rows)));
        coef[2 * C + c] = float(__ddiv_rn(__dmul_rn(scale, sumDyX), double(rows)));
    }
}

__global__ void dxKernel(const float *x, const float *dy, const float *stats, const float *coef, float *dx, std::int64_t n, std::int64_t C)
{
    SLUICE_GRID_STRIDE(i, n)
    {
        const std::int64_t c = i % C;
        const float xhat = normalized(x[i], stats[c], stats[C + c]);
        dx[i] = __fsub_rn(__fsub_rn(__fmul_rn(coef[c], dy[i]), coef[C + c]), __fmul_rn(xhat, coef[2 * C + c]));
    }
}

} // namespace

void batchNormForward(Stream stream, const float *x, const float *gamma, const float *beta, const float *movingMean,
                      const float *movingVariance, bool training, float *y, float *stats, std::int64_t rows, std::int64_t channels,
                      double epsilon)
{
    const char *op = "batchNormForward";
    detail::require(rows >= 0 && channels > 0, op, "needs rows >= 0 and channels > 0");
    detail::require(stats != nullptr, op, "stats must be a device pointer");
    const std::int64_t C = channels;
    if (training && rows > 0) {
        detail::require(x != nullptr, op, "x must be a device pointer");
        const Chunks chunks(rows);
        double *partial = scratch<double>(stream, chunks.count * C + C), *mean = partial + chunks.count * C;
        launchPartials<1>(stream, SumTerm{x, C}, rows, C, chunks, partial);
        meanKernel<<<channelBlocks(C), detail::kElementwiseThreads, 0, stream>>>(partial, chunks.count, C, rows, mean);
        SLUICE_CUDA_CHECK_LAUNCH();
        launchPartials<1>(stream, SquaredDeviationTerm{x, mean, C}, rows, C, chunks, partial);
        varianceKernel<<<channelBlocks(C), detail::kElementwiseThreads, 0, stream>>>(partial, chunks.count, C, rows, mean, epsilon, stats);
        SLUICE_CUDA_CHECK_LAUNCH();
        SLUICE_CUDA_CHECK(cudaFreeAsync(partial, stream));
    } else {
        // Inference, or a training pass without rows (the CPU layer takes the moving statistics too).
        detail::require(movingMean && movingVariance, op, "movingMean and movingVariance must be device pointers");
        movingStatsKernel<<<channelBlocks(C), detail::kElementwiseThreads, 0, stream>>>(movingMean, movingVariance, C, epsilon, stats);
        SLUICE_CUDA_CHECK_LAUNCH();
    }
    if (rows == 0)
        return;
    detail::require(x && y, op, "x and y must be device pointers");
    float *coef = scratch<float>(stream, 2 * C);
    scaleShiftKernel<<<channelBlocks(C), detail::kElementwiseThreads, 0, stream>>>(stats, gamma, beta, C, coef);
    SLUICE_CUDA_CHECK_LAUNCH();
    const std::int64_t n = rows * C;
    normalizeKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(x, coef, y, n, C);
    SLUICE_CUDA_CHECK_LAUNCH();
    SLUICE_CUDA_CHECK(cudaFreeAsync(coef, stream));
}

void batchNormBackward(Stream stream, const float *x, const float *gamma, const float *movingMean, const float *movingVariance,
                       const float *stats, const float *dy, float *dx, float *dGamma, float *dBeta, float *dMovingMean, float *dMovingVariance,
                       std::int64_t rows, std::int64_t channels, double movingShare)
{
    const char *op = "batchNormBackward";
    detail::require(rows >= 0 && channels > 0, op, "needs rows >= 0 and channels > 0");
    // No rows: the batch statistics were the moving ones, every sum is 0 and nothing changes.
    if (rows == 0)
        return;
    detail::require(x && stats && dy, op, "x, stats and dy must be device pointers");
    detail::require((!dMovingMean && !dMovingVariance) || (movingMean && movingVariance), op,
                    "the moving statistics' updates need movingMean and movingVariance");
    const std::int64_t C = channels;
    const Chunks chunks(rows);
    double *partial = scratch<double>(stream, 2 * chunks.count * C);
    float *coef = scratch<float>(stream, 3 * C);
    launchPartials<2>(stream, GradientTerm{x, dy, stats, C}, rows, C, chunks, partial);
    finishKernel<<<channelBlocks(C), detail::kElementwiseThreads, 0, stream>>>(partial, chunks.count, C, rows, gamma, movingMean, movingVariance,
                                                                                stats, {dGamma, dBeta, dMovingMean, dMovingVariance},
                                                                                movingShare, coef);
    SLUICE_CUDA_CHECK_LAUNCH();
    if (dx) {
        const std::int64_t n = rows * C;
        dxKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(x, dy, stats, coef, dx, n, C);
        SLUICE_CUDA_CHECK_LAUNCH();
    }
    SLUICE_CUDA_CHECK(cudaFreeAsync(partial, stream));
    SLUICE_CUDA_CHECK(cudaFreeAsync(coef, stream));
}

} // namespace sluice::train::cuda
