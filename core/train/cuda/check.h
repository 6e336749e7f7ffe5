#pragma once
// The two CUDA check macros (device code and the .cu launchers only; needs the CUDA runtime
// header): SLUICE_CUDA_CHECK throws CudaError naming the call, file, line and the runtime's
// description; SLUICE_CUDA_CHECK_LOG only prints them, for destructors and other places that
// must not throw.

#include "train/cuda/runtime.h"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace sluice::train::cuda::detail {

// "train/cuda/x.cu" rather than the build machine's absolute path.
const char *sourceName(const char *file);
[[noreturn]] void throwCudaError(cudaError_t rc, const char *expr, const char *file, int line);
void logCudaError(cudaError_t rc, const char *expr, const char *file, int line) noexcept;

// A launcher's precondition: throws std::invalid_argument "<op>: <what>" when `ok` is false.
inline void require(bool ok, const char *op, const char *what)
{
    if (!ok)
        throw std::invalid_argument(std::string(op) + ": " + what);
}

} // namespace sluice::train::cuda::detail

#define SLUICE_CUDA_CHECK(expr)                                                                         \
    do {                                                                                                \
        const cudaError_t sluice_rc_ = (expr);                                                          \
        if (sluice_rc_ != cudaSuccess)                                                                  \
            ::sluice::train::cuda::detail::throwCudaError(sluice_rc_, #expr, __FILE__, __LINE__);       \
    } while (0)

#define SLUICE_CUDA_CHECK_LOG(expr)                                                                     \
    do {                                                                                                \
        const cudaError_t sluice_rc_ = (expr);                                                          \
        if (sluice_rc_ != cudaSuccess)                                                                  \
            ::sluice::train::cuda::detail::logCudaError(sluice_rc_, #expr, __FILE__, __LINE__);         \
    } while (0)

// After a kernel launch: a bad configuration shows up here, not at the next synchronisation.
#define SLUICE_CUDA_CHECK_LAUNCH() SLUICE_CUDA_CHECK(cudaGetLastError())
