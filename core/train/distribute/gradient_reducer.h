#pragma once
// The all-reduce of mirrored training: sums the gradients of every replica, in this process and
// in the others, so that every replica applies the same update (docs/architecture.md, decision 7).
// Implementations: in-process replicas (here), MPI between processes (mpi_reducer.h), NCCL
// between GPUs (the CUDA backend). Sums are taken in a fixed order, so a run is reproducible.
//
// Threading: called by the training thread only, between steps.

#include "io/error.h"
#include "train/model/float_range.h"

#include <cstdint>
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
    Status sum(std::span<std::vector<float> *const> buffers)
    {
        const FloatRange all{0, buffers.empty() ? 0 : buffers[0]->size()};
        return sumRanges(buffers, {&all, 1});
    }
    // The same over `ranges` of the buffers only; the rest of buffers[0] is left as it is.
    virtual Status sumRanges(std::span<std::vector<float> *const> buffers, std::span<const FloatRange> ranges) = 0;
    // A row-sparse gradient (ParameterEntry::rowSparse): a table of rows of `rowSize` floats at
    // `offset` in every buffer, of which replica r used `rows[r]` (sorted, distinct; its other
    // rows are zero). On return buffers[0] holds the sum over every replica and process in the
    // union of their rows, `used` (sorted), and zeros elsewhere: the cost follows the rows used,
    // not the table. Sums run in replica, then process, order: every process gets the same bits.
    virtual Status sumRows(std::span<std::vector<float> *const> buffers, std::size_t offset, std::size_t rowSize,
                           std::span<const std::vector<std::int64_t> *const> rows, std::vector<std::int64_t> &used) = 0;
    // Sums a few doubles across processes (row counts, loss sums, metric states); in-process: as is.
    virtual Status sumAcrossProcesses(std::span<double> values) = 0;
    // Makes every process hold rank 0's values (initial weights).
    virtual Status broadcastFromFirst(std::span<float> values) = 0;

    virtual int processCount() const { return 1; }
    virtual int processIndex() const { return 0; }
};

// Sums local replicas in parallel chunks on the calling arena; one process.
std::unique_ptr<GradientReducer> makeInProcessReducer();

// Adds replica buffers 1.. into buffers[0] over `range`, chunk by chunk in parallel (shared by
// reducers).
void sumLocalReplicas(std::span<std::vector<float> *const> buffers, FloatRange range);
inline void sumLocalReplicas(std::span<std::vector<float> *const> buffers)
{
    if (!buffers.empty())
        sumLocalReplicas(buffers, {0, buffers[0]->size()});
}
// Adds the used rows of replicas 1.. into buffers[0] (in replica order) and returns the union of
// every replica's rows, sorted (shared by reducers).
std::vector<std::int64_t> sumLocalRows(std::span<std::vector<float> *const> buffers, std::size_t offset, std::size_t rowSize,
                                       std::span<const std::vector<std::int64_t> *const> rows);

} // namespace sluice::train
