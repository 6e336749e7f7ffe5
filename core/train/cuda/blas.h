#pragma once
// Matrix products on the device through cuBLAS, with the row-major conventions of the CPU
// backend's gemm (train/cpu/gemm.h): C = alpha * op(A) * op(B) + beta * C, A M x K (K x M when
// transA), B K x N (N x K when transB), C M x N, lda/ldb/ldc row strides in elements.
//
// cuBLAS is loaded at run time (dlopen), like NVML: a CUDA build starts, and trains on the CPU,
// where the library is missing; Blas's constructor then throws CudaError saying which library
// could not be loaded. Plain C++ header; defined in blas.cu.
//
// Threading: one Blas (one cuBLAS handle) per thread and device; each call runs on its stream.

#include "train/cuda/runtime.h"

#include <cstdint>
#include <memory>

namespace sluice::train::cuda {

enum class GemmMode {
    Fp32, // full fp32 products (cuBLAS's default math, never TF32)
    Tf32, // fp32 in and out, products on tensor cores with 10-bit mantissas (about 3e-4 relative)
};

// A bfloat16 value as stored in device buffers (round-to-nearest-even from float: convertToBf16).
struct Bf16
{
    std::uint16_t bits;
};

class Blas
{
public:
    Blas(); // on the current device
    ~Blas();
    Blas(const Blas &) = delete;
    Blas &operator=(const Blas &) = delete;

    void gemm(Stream stream, bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float *A,
              std::int64_t lda, const float *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc, GemmMode mode = GemmMode::Fp32);

    // bf16 inputs, fp32 accumulation and output (the mixed-precision products).
    void gemmBf16(Stream stream, bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const Bf16 *A,
                  std::int64_t lda, const Bf16 *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// out[i] = bfloat16(in[i]), rounded to nearest even.
void convertToBf16(Stream stream, const float *in, Bf16 *out, std::int64_t n);

} // namespace sluice::train::cuda
