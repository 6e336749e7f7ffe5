#pragma once
// The host side of the CUDA backend that plain C++ can call: streams, device memory, copies.
// This header needs no CUDA headers (the stream is an opaque handle of the same type as
// cudaStream_t), so tests and the trainer compile with g++ alone; every function is defined in
// runtime.cu and exists only in a CUDA build (SLUICE_HAVE_CUDA).
//
// Errors: a failing CUDA call throws CudaError, whose message names the call, the source file
// and line, and cudaGetErrorString's words. Preconditions a caller breaks throw std::invalid_argument.

#include <cstddef>
#include <stdexcept>
#include <string>

struct CUstream_st; // cudaStream_t is `CUstream_st *`

namespace sluice::train::cuda {

// A CUDA stream; null is the legacy default stream.
using Stream = CUstream_st *;

class CudaError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// Makes `device` current for the calling thread.
void setDevice(int device);

Stream createStream();              // non-blocking with respect to the default stream
void destroyStream(Stream) noexcept; // logs a failure, never throws (called from destructors)
void synchronize(Stream stream);     // waits for the stream; throws an error a kernel left behind

void *deviceAlloc(std::size_t bytes); // cudaMalloc; 0 bytes gives null
void deviceFree(void *p) noexcept;    // cudaFree; logs a failure

// Asynchronous on `stream` (pageable host memory makes them synchronous in practice).
void copyToDevice(void *dst, const void *src, std::size_t bytes, Stream stream);
void copyToHost(void *dst, const void *src, std::size_t bytes, Stream stream);
void copyOnDevice(void *dst, const void *src, std::size_t bytes, Stream stream);
void fillBytes(void *dst, int byte, std::size_t bytes, Stream stream);

} // namespace sluice::train::cuda
