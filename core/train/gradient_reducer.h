#pragma once
// The all-reduce of mirrored training: sums the gradients of every replica, in this process and
// in the others, so that every replica applies the same update (blueprint decision 7).
// Implementations: in-process replicas (here), MPI between processes (mpi_reducer.h), NCCL
// between GPUs (the CUDA backend). Sums are taken in a fixed order, so a run is reproducible.
//
// Threading: called by the training thread only, between steps.

#include "io/error.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sluice::train {

class GradientReducer
{
public:
    virtual ~GradientReducer() = default;
    virtual std::string name() const = 0;

    // Sums `buffers` (one per local replica, all the same length) elementwise, and across
    // processes; on return buffers[0] holds the global sum.
    virtual Status sum(std::span<std::vector<float> *const> buffers) = 0;
    // Sums a few doubles across processes (row counts, loss sums, metric states); in-process: as is.
    virtual Status sumAcrossProcesses(std::span<double> values) = 0;
    // Makes every process hold rank 0's values (initial weights).
    virtual Status broadcastFromFirst(std::span<float> values) = 0;

    virtual int processCount() const { return 1; }
    virtual int processIndex() const { return 0; }
};

// Sums local replicas in parallel chunks on the calling arena; one process.
std::unique_ptr<GradientReducer> makeInProcessReducer();

// Adds replica buffers 1.. into buffers[0], chunk by chunk in parallel (shared by reducers).
void sumLocalReplicas(std::span<std::vector<float> *const> buffers);

} // namespace sluice::train
