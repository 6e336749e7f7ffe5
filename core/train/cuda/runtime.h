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
struct CUevent_st;  // cudaEvent_t is `CUevent_st *`

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
// `rows` rows of `rowBytes` from src (rows `srcPitch` bytes apart) to dst (`dstPitch` apart), on
// the device: concatenation and its split along the last axis.
void copyRowsOnDevice(void *dst, std::size_t dstPitch, const void *src, std::size_t srcPitch, std::size_t rowBytes, std::size_t rows,
                      Stream stream);

// Page-locked host memory: copies from it are truly asynchronous and run at the link's speed.
void *hostAllocPinned(std::size_t bytes); // 0 bytes gives null
void hostFreePinned(void *p) noexcept;

// Events order work between streams (the copy stream, the compute stream, NCCL's stream).
using Event = CUevent_st *;
Event createEvent();                        // timing disabled: the cheapest kind
void destroyEvent(Event event) noexcept;
void recordEvent(Event event, Stream stream);
void waitEvent(Stream stream, Event event); // work queued later on `stream` waits for the event
void synchronizeEvent(Event event);         // the host waits

// Free and total memory of the current device, in bytes.
void memoryInfo(std::size_t &freeBytes, std::size_t &totalBytes);

} // namespace sluice::train::cuda
