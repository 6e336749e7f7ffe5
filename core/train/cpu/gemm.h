#pragma once
// Row-major matrix products for the CPU backend: C = alpha * op(A) * op(B) + beta * C, with
// OpenBLAS's sgemm doing the arithmetic. Large products are split into blocks of C's rows or
// columns (the longer dimension) that run as oneTBB tasks in the calling arena, each block a
// single-threaded sgemm over the whole K dimension: one thread pool for the whole program
// (docs/architecture.md, decision 2), and the same result whatever the number of threads, because the
// blocks depend on the shapes and the machine's CPU count only (gemm.cpp says why and how).
//
// Threading: any thread; call from inside the training arena to use its workers.

#include <cstdint>

namespace sluice::train::cpu {

// A is M x K (K x M when transA), B is K x N (N x K when transB), C is M x N; lda/ldb/ldc are
// row strides in elements.
void gemm(bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float *A, std::int64_t lda,
          const float *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc);

// Makes OpenBLAS single-threaded (its pthread pool would fight oneTBB for the cores). Called
// once by everything that trains; idempotent.
void useSingleThreadedBlas();

} // namespace sluice::train::cpu
