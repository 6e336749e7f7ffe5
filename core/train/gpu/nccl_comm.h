#pragma once
// NCCL all-reduce for mirrored training over GPUs and processes. NCCL is loaded at run time
// (dlopen "libnccl.so.2"), like cuBLAS and NVML, so a CUDA build starts without it and the
// engine falls back to logical replicas or the host. Plain C++ header; defined in nccl_comm.cpp
// (built where nccl.h was found: SLUICE_HAVE_NCCL).
//
// Threading: communicators of one process are created together (ncclGroupStart/End) and each is
// then used from the task that drives its device.

#include "train/cuda/runtime.h"

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace sluice::train::gpu {

// The 128 bytes rank 0 creates and every process receives (over MPI) before joining.
struct NcclId
{
    std::array<char, 128> bytes{};
};

class NcclComm
{
public:
    ~NcclComm();
    NcclComm(const NcclComm &) = delete;
    NcclComm &operator=(const NcclComm &) = delete;

    // Whether NCCL can be used; when not, `reason` says why (not built, library missing).
    static bool available(std::string &reason);
    static NcclId newId(); // throws cuda::CudaError when NCCL fails

    // One communicator per local device, ranks firstRank.. of `ranks` in all.
    static std::vector<std::unique_ptr<NcclComm>> create(const NcclId &id, int ranks, int firstRank, const std::vector<int> &devices);

    // In-place sum of n floats over every rank, queued on `stream`.
    void allReduceSum(float *buffer, std::size_t n, cuda::Stream stream);

    // Brackets the all-reduces of several local communicators issued by one thread.
    static void groupStart();
    static void groupEnd();

private:
    NcclComm() = default;
    void *m_comm = nullptr; // ncclComm_t
};

} // namespace sluice::train::gpu
