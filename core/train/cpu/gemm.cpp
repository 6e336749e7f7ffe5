#include "train/cpu/gemm.h"

#include <cblas.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <mutex>
#include <thread>

namespace sluice::train::cpu {

namespace {

// How a product is cut into blocks of C that run as tasks. Every block is one single-threaded
// sgemm that packs its own copy of the operand the blocks share (cutting C's rows packs B once
// per block, cutting its columns packs A once per block), so blocks are cut along the longer of
// C's two dimensions and kept wide. Measured on 2 cores (AMD EPYC, OpenBLAS 0.3.21): the MLP
// benchmark's products ran at 170-180 GFLOP/s cut in 2 blocks, 2-5 % slower in 4 or 8 and
// 10-30 % slower in 16 to 32 blocks 32 wide; its 4-layer 1024-wide model trained 6-10 % faster
// with 2 blocks than with 8.
//
// OpenBLAS's value for an element of C changes in its last bits with the block it is computed
// in (its kernels sum differently at different tile positions), so the cut must not depend on
// the arena's thread count: it depends on the shapes and on the machine's number of hardware
// threads only. Training results are then the same at any --threads on a machine (as they were
// never the same bit for bit across CPU models: OpenBLAS picks its kernels by CPU).
//
// Blocks are at least this wide along the cut dimension,
constexpr std::int64_t kMinBlock = 128;
// hold at least this many multiply-adds (about 10 us on one core: less is not worth a task),
constexpr std::int64_t kMinBlockWork = std::int64_t(1) << 20;

// and number a power of two up to the machine's hardware threads, at most 8.
std::int64_t maxBlocks()
{
    static const std::int64_t blocks = [] {
        const std::int64_t cpus = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, 8);
        std::int64_t b = 1;
        while (2 * b <= cpus)
            b *= 2;
        return b;
    }();
    return blocks;
}

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
    const bool cutRows = M >= N;
    const std::int64_t length = cutRows ? M : N;
    std::int64_t blocks = 1;
    while (blocks < maxBlocks() && length / (2 * blocks) >= kMinBlock && work / (2 * blocks) >= kMinBlockWork)
        blocks *= 2;
    if (blocks == 1) {
        sgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    const std::int64_t block = (length + blocks - 1) / blocks;
    oneapi::tbb::parallel_for(std::int64_t(0), blocks, [&](std::int64_t b) {
        const std::int64_t i0 = b * block, n = std::min(block, length - i0);
        if (n <= 0)
            return;
        if (cutRows) {
            // Rows i0.. of op(A): row offset in A, or column offset when A is transposed.
            const float *a = transA ? A + i0 : A + i0 * lda;
            sgemm(transA, transB, n, N, K, alpha, a, lda, B, ldb, beta, C + i0 * ldc, ldc);
        } else {
            // Columns i0.. of op(B): column offset in B, or row offset when B is transposed.
            const float *bp = transB ? B + i0 * ldb : B + i0;
            sgemm(transA, transB, M, n, K, alpha, A, lda, bp, ldb, beta, C + i0, ldc);
        }
    });
}

} // namespace sluice::train::cpu
