// cuBLAS through dlopen (blas.h says why), and the fp32 -> bf16 conversion kernel.
//
// Row-major to cuBLAS's column-major: a row-major M x N matrix with row stride ld is, read
// column-major, its N x M transpose with leading dimension ld. So C = op(A) op(B) is computed
// as C^T = op(B)^T op(A)^T: cuBLAS gets B first, then A, with m = N and n = M.
#include "train/cuda/blas.h"
#include "train/cuda/check.h"
#include "train/cuda/device_util.cuh"

#include <cublas_api.h>
#include <cuda_bf16.h>
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>

namespace sluice::train::cuda {

namespace {

using CreateFn = cublasStatus_t (*)(cublasHandle_t *);
using DestroyFn = cublasStatus_t (*)(cublasHandle_t);
using SetStreamFn = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *, const void *,
                                    cudaDataType, int, const void *, cudaDataType, int, const void *, void *, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
using StatusStringFn = const char *(*)(cublasStatus_t);

// The library for the cuBLAS major version these headers describe ("libcublas.so.13").
std::string libraryName() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }

__global__ void toBf16Kernel(const float *in, __nv_bfloat16 *out, std::int64_t n)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
        out[i] = __float2bfloat16_rn(in[i]);
}

} // namespace

struct Blas::Impl
{
    void *library = nullptr;
    CreateFn create = nullptr;
    DestroyFn destroy = nullptr;
    SetStreamFn setStream = nullptr;
    GemmExFn gemmEx = nullptr;
    StatusStringFn statusString = nullptr;
    cublasHandle_t handle = nullptr;

    void check(cublasStatus_t st, const char *what) const
    {
        if (st != CUBLAS_STATUS_SUCCESS)
            throw CudaError(std::string("cuBLAS ") + what + " failed: " + (statusString ? statusString(st) : std::to_string(int(st))));
    }

    template <typename F>
    F symbol(const char *name)
    {
        void *p = dlsym(library, name);
        if (!p)
            throw CudaError(libraryName() + " lacks " + name);
        return reinterpret_cast<F>(p);
    }

    // Checks the shapes, then calls cublasGemmEx with the operands swapped (see the top).
    void gemm(Stream stream, bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const void *A,
              std::int64_t lda, const void *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc, cudaDataType inType,
              cublasComputeType_t compute)
    {
        const char *op = "gemm";
        detail::require(M >= 0 && N >= 0 && K >= 0, op, "M, N and K must not be negative");
        detail::require(M <= INT_MAX && N <= INT_MAX && K <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX, op,
                        "cuBLAS takes 32-bit sizes and strides");
        detail::require(lda >= std::max<std::int64_t>(1, transA ? M : K), op, "lda is shorter than a row of A");
        detail::require(ldb >= std::max<std::int64_t>(1, transB ? K : N), op, "ldb is shorter than a row of B");
        detail::require(ldc >= std::max<std::int64_t>(1, N), op, "ldc is shorter than a row of C");
        if (M == 0 || N == 0)
            return;
        detail::require(C && (K == 0 || (A && B)), op, "A, B and C must be device pointers");
        check(setStream(handle, stream), "cublasSetStream");
        check(gemmEx(handle, transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N, int(N), int(M), int(K), &alpha, B, inType,
                     int(ldb), A, inType, int(lda), &beta, C, CUDA_R_32F, int(ldc), compute, CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
    }
};

Blas::Blas() : m_impl(std::make_unique<Impl>())
{
    Impl &d = *m_impl;
    d.library = dlopen(libraryName().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!d.library) {
        const char *why = dlerror();
        throw CudaError("cannot load cuBLAS (" + libraryName() + "): " + (why ? why : "not found"));
    }
    try {
        d.create = d.symbol<CreateFn>("cublasCreate_v2");
        d.destroy = d.symbol<DestroyFn>("cublasDestroy_v2");
        d.setStream = d.symbol<SetStreamFn>("cublasSetStream_v2");
        d.gemmEx = d.symbol<GemmExFn>("cublasGemmEx");
        d.statusString = d.symbol<StatusStringFn>("cublasGetStatusString");
        d.check(d.create(&d.handle), "cublasCreate");
    } catch (...) {
        dlclose(d.library);
        throw;
    }
}

Blas::~Blas()
{
    if (m_impl->handle && m_impl->destroy(m_impl->handle) != CUBLAS_STATUS_SUCCESS)
        std::fprintf(stderr, "sluice: cublasDestroy failed\n");
    dlclose(m_impl->library);
}

void Blas::gemm(Stream stream, bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float *A,
                std::int64_t lda, const float *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc, GemmMode mode)
{
    m_impl->gemm(stream, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, CUDA_R_32F,
                 mode == GemmMode::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F);
}

void Blas::gemmBf16(Stream stream, bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const Bf16 *A,
                    std::int64_t lda, const Bf16 *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc)
{
    m_impl->gemm(stream, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, CUDA_R_16BF, CUBLAS_COMPUTE_32F);
}

void convertToBf16(Stream stream, const float *in, Bf16 *out, std::int64_t n)
{
    detail::require(n >= 0, "convertToBf16", "n must not be negative");
    if (n == 0)
        return;
    detail::require(in && out, "convertToBf16", "in and out must be device pointers");
    toBf16Kernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(in, reinterpret_cast<__nv_bfloat16 *>(out), n);
    SLUICE_CUDA_CHECK_LAUNCH();
}

} // namespace sluice::train::cuda
