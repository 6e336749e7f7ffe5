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

void copyRowsOnDevice(void *dst, std::size_t dstPitch, const void *src, std::size_t srcPitch, std::size_t rowBytes, std::size_t rows,
                      Stream stream)
{
    if (rowBytes && rows)
        SLUICE_CUDA_CHECK(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, rowBytes, rows, cudaMemcpyDeviceToDevice, stream));
}

void *hostAllocPinned(std::size_t bytes)
{
    if (bytes == 0)
        return nullptr;
    void *p = nullptr;
    SLUICE_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    return p;
}

void hostFreePinned(void *p) noexcept
{
    if (p)
        SLUICE_CUDA_CHECK_LOG(cudaFreeHost(p));
}

Event createEvent()
{
    cudaEvent_t e = nullptr;
    SLUICE_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
}

void destroyEvent(Event event) noexcept
{
    if (event)
        SLUICE_CUDA_CHECK_LOG(cudaEventDestroy(event));
}

void recordEvent(Event event, Stream stream) { SLUICE_CUDA_CHECK(cudaEventRecord(event, stream)); }
void waitEvent(Stream stream, Event event) { SLUICE_CUDA_CHECK(cudaStreamWaitEvent(stream, event, 0)); }
void synchronizeEvent(Event event) { SLUICE_CUDA_CHECK(cudaEventSynchronize(event)); }

void memoryInfo(std::size_t &freeBytes, std::size_t &totalBytes) { SLUICE_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes)); }

} // namespace sluice::train::cuda
