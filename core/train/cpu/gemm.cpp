#include "train/cpu/gemm.h"

#include <cblas.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <mutex>

namespace sluice::train::cpu {

namespace {

// Below this many multiply-adds a product runs as one call: splitting costs more than it saves.
constexpr std::int64_t kSplitWork = 1 << 18;
// Blocks are never thinner than this (sgemm's kernels work on panels of 8-16 rows/columns).
constexpr std::int64_t kMinBlock = 32;

void sgemm(bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float *A, std::int64_t lda,
           const float *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc)
{
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, int(M), int(N), int(K), alpha, A, int(lda), B,
                int(ldb), beta, C, int(ldc));
}

} // namespace

void useSingleThreadedBlas()
{
    static std::once_flag once;
    std::call_once(once, [] { openblas_set_num_threads(1); });
}

void gemm(bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float *A, std::int64_t lda,
          const float *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc)
{
    if (M <= 0 || N <= 0)
        return;
    useSingleThreadedBlas();
    const std::int64_t work = M * N * std::max<std::int64_t>(K, 1);
    if (work < kSplitWork || (M < 2 * kMinBlock && N < 2 * kMinBlock)) {
        sgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    // Enough blocks to balance, each still big enough for sgemm to run at full speed.
    const std::int64_t wanted = std::clamp<std::int64_t>(work / kSplitWork, 2, 64);
    if (M >= N || M >= wanted * kMinBlock) {
        const std::int64_t block = std::max(kMinBlock, (M + wanted - 1) / wanted);
        const std::int64_t blocks = (M + block - 1) / block;
        oneapi::tbb::parallel_for(std::int64_t(0), blocks, [&](std::int64_t b) {
            const std::int64_t r0 = b * block, rows = std::min(block, M - r0);
            // Rows r0.. of op(A): row offset in A, or column offset when A is transposed.
            const float *a = transA ? A + r0 : A + r0 * lda;
            sgemm(transA, transB, rows, N, K, alpha, a, lda, B, ldb, beta, C + r0 * ldc, ldc);
        });
    } else {
        const std::int64_t block = std::max(kMinBlock, (N + wanted - 1) / wanted);
        const std::int64_t blocks = (N + block - 1) / block;
        oneapi::tbb::parallel_for(std::int64_t(0), blocks, [&](std::int64_t b) {
            const std::int64_t c0 = b * block, cols = std::min(block, N - c0);
            // Columns c0.. of op(B): column offset in B, or row offset when B is transposed.
            const float *bp = transB ? B + c0 * ldb : B + c0;
            sgemm(transA, transB, M, cols, K, alpha, A, lda, bp, ldb, beta, C + c0, ldc);
        });
    }
}

} // namespace sluice::train::cpu
