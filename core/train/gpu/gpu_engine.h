#pragma once
// The CUDA backend of the trainer (decisions 4 and 7 of docs/architecture.md): replicas on GPUs, each with its
// activations and gradients in device memory; the global batch's slices are staged through
// pinned host buffers and copied on a copy stream; gradients are summed in the device (logical
// replicas on one GPU), with NCCL (several GPUs, several processes: bucketed and overlapped with
// the backward pass) or through the host (no NCCL); global-norm clipping and the optimizer's
// update run on every device, on the same summed gradient, so the copies of the weights stay equal.
//
// The trainer keeps the CPU backend's objects (Model, Optimizer, host weights and slots) as the
// reference state: setState() uploads them, getState() brings them back for checkpoints and the
// end of the run. Plain C++: in a build without CUDA createGpuEngine says so.
//
// Threading: one training thread calls the engine and queues every GPU's work (launches are
// asynchronous, so the GPUs run concurrently); gathering the slices into pinned memory runs as
// oneTBB tasks in the training arena.

#include "io/error.h"
#include "train/loop/batch_slicer.h"
#include "train/distribute/gradient_reducer.h"
#include "train/model/model.h"
#include "train/objectives/optimizer.h"
#include "train/loop/replica.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sluice::train {

struct GpuEngineOptions
{
    std::vector<int> devices;          // per replica: a device index (resolved; no -1)
    std::string precision = "fp32";    // fp32, tf32, bf16
    double globalClipnorm = 0;         // 0: none
    GradientReducer *reducer = nullptr; // for several processes (its MPI bootstraps NCCL); may be null
};

class GpuEngine
{
public:
    virtual ~GpuEngine() = default;

    // "cuda:0 (NVIDIA H100 80GB HBM3) x 2 logical replicas", for run_start.
    virtual std::string description() const = 0;
    // How gradients are summed: "in-device", "nccl", "nccl+mpi", "host".
    virtual std::string reducerName() const = 0;

    // Uploads the weights and the optimizer's slots (in Optimizer::slots() order) to every GPU.
    virtual Status setState(std::span<const float> weights, const std::vector<OptimizerSlot> &slots) = 0;
    // Downloads them from the first GPU.
    virtual Status getState(std::span<float> weights, std::vector<OptimizerSlot> &slots) = 0;

    // Forward (and, when `training`, backward) of slices[r] on replica r; gradients stay on the
    // devices for update(). `metricHolders[r]`'s metrics are updated from the predictions (which
    // are then downloaded; not at all when no output has metrics). Losses as Replica::run.
    virtual Result<SliceResult> run(std::span<const BatchSlice> slices, std::span<const PassContext> contexts, float scale, bool training,
                                    std::span<Replica *const> metricHolders) = 0;
    // The same straight from a pipeline batch: replica r takes rows [bounds[r], bounds[r + 1]),
    // gathered and converted into its pinned staging buffer with no intermediate copy.
    virtual Result<SliceResult> run(const pipeline::Element &batch, std::span<const std::int64_t> bounds, const SampleWeighting &weighting,
                                    std::span<const PassContext> contexts, float scale, bool training, std::span<Replica *const> metricHolders) = 0;

    // Sums the gradients of every replica (and process), clips them, applies the optimizer.
    virtual Status update(float learningRate, std::int64_t iteration) = 0;
};

// Resolves "cuda" (-1) to every GPU and checks the indices against the machine. Empty with
// `reason` set when this build or machine has no GPU: the caller trains on the CPU instead.
Result<std::vector<int>> resolveGpuDevices(const std::vector<int> &requested, std::string &reason);

// Builds the engine for `model` (every layer must have CUDA kernels: an error names the first
// that has not) with `optimizer`'s hyperparameters. Device memory for activations is taken at
// the first batch; not fitting is an error naming the layer and the batch size.
Result<std::unique_ptr<GpuEngine>> createGpuEngine(const Model &model, Optimizer &optimizer, const GpuEngineOptions &options);

} // namespace sluice::train
