// Streams, memory and copies for runtime.h, and the check macros' error reporting.
#include "train/cuda/check.h"

#include <cstdio>
#include <cstring>

namespace sluice::train::cuda {
namespace detail {

const char *sourceName(const char *file)
{
    // Keep from "train/" on: messages name the source, not where it was built.
    for (const char *p = file; *p; ++p)
        if (std::strncmp(p, "train/", 6) == 0)
            return p;
    const char *slash = std::strrchr(file, '/');
    return slash ? slash + 1 : file;
}

void throwCudaError(cudaError_t rc, const char *expr, const char *file, int line)
{
    cudaGetLastError(); // clear a non-sticky error so that the next call starts clean
    throw CudaError(std::string(sourceName(file)) + ":" + std::to_string(line) + ": " + expr + " failed: " + cudaGetErrorString(rc));
}

void logCudaError(cudaError_t rc, const char *expr, const char *file, int line) noexcept
{
    cudaGetLastError();
    std::fprintf(stderr, "sluice: %s:%d: %s failed: %s\n", sourceName(file), line, expr, cudaGetErrorString(rc));
}

} // namespace detail

void setDevice(int device) { SLUICE_CUDA_CHECK(cudaSetDevice(device)); }

Stream createStream()
{
    cudaStream_t s = nullptr;
    SLUICE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}

void destroyStream(Stream stream) noexcept
{
    if (stream)
        SLUICE_CUDA_CHECK_LOG(cudaStreamDestroy(stream));
}

void synchronize(Stream stream) { SLUICE_CUDA_CHECK(cudaStreamSynchronize(stream)); }

void *deviceAlloc(std::size_t bytes)
{
    if (bytes == 0)
        return nullptr;
    void *p = nullptr;
    SLUICE_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
}

void deviceFree(void *p) noexcept
{
    if (p)
        SLUICE_CUDA_CHECK_LOG(cudaFree(p));
}

void copyToDevice(void *dst, const void *src, std::size_t bytes, Stream stream)
{
    if (bytes)
        SLUICE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
}

void copyToHost(void *dst, const void *src, std::size_t bytes, Stream stream)
{
    if (bytes)
        SLUICE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
}

void copyOnDevice(void *dst, const void *src, std::size_t bytes, Stream stream)
{
    if (bytes)
        SLUICE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
}

void fillBytes(void *dst, int byte, std::size_t bytes, Stream stream)
{
    if (bytes)
        SLUICE_CUDA_CHECK(cudaMemsetAsync(dst, byte, bytes, stream));
}

} // namespace sluice::train::cuda
