#pragma once
// One replica of the model on a GPU: its activations, gradients and layer scratch in device
// memory, and its input staging: two pinned host buffers and two device buffers used in turn
// (double buffering), so that the next batch is gathered and copied (on the device's copy
// stream) while the compute stream still reads the previous one. The GpuEngine drives it pass
// by pass, so that it can interleave the replicas of several GPUs and the bucketed all-reduce.
// Plain C++; CUDA builds only.
//
// Threading: stage() may run on any thread (it only fills pinned memory); every other call
// on the engine's thread, in the order the engine makes them.

#include "train/cuda/device_buffer.h"
#include "train/gpu/gpu_layer_ops.h"
#include "train/loop/batch_slicer.h"
#include "train/model/model.h"
#include "train/loop/replica.h"

#include <cstdint>
#include <span>
#include <string>
#include <optional>
#include <vector>

namespace sluice::train::gpu {

// A GPU's shared objects: its index, streams and cuBLAS handle.
struct GpuHandles
{
    int index = 0;
    cuda::Stream compute = nullptr;
    cuda::Stream copy = nullptr;
    DeviceContext context; // compute stream, cuBLAS, precision
};

// Not enough device memory for a replica's buffers at this batch size: which layer, how much.
struct OutOfDeviceMemory
{
    std::string layer;
    std::int64_t rows = 0;
    std::size_t bytes = 0;
    std::string detail;
};

class GpuReplica
{
public:
    GpuReplica(const Model &model, GpuHandles &device);
    ~GpuReplica();
    GpuReplica(const GpuReplica &) = delete;
    GpuReplica &operator=(const GpuReplica &) = delete;

    GpuHandles &device() { return m_device; }

    // Buffers for `rows` rows (grown, never shrunk); throws OutOfDeviceMemory.
    void reserve(std::int64_t rows);
    // Copies the slice into the next pinned staging buffer (host work only; waits for that
    // buffer's previous copy to finish first).
    void stage(const BatchSlice &slice);
    // The same from rows [begin, end) of a pipeline batch, gathered and converted straight into
    // the pinned buffer (no intermediate slice).
    void stage(const pipeline::Element &batch, std::int64_t begin, std::int64_t end, const SampleWeighting &weighting);
    // This pass gives the replica no rows (an uneven last batch): it only zeroes its gradients.
    void stageNothing()
    {
        m_rows = 0;
        m_hasWeights = false;
    }
    // Queues the rest of the staged rows' copy on the copy stream (stage() queues blocks as they
    // are written); the compute stream waits for it.
    void upload();
    void forward(const PassContext &ctx, const float *weights);
    // The losses' per-sample values and, for outputs whose metrics `holder` keeps, the
    // predictions, downloaded into pinned memory for collect(); when `backward`, dLoss/dPred.
    // An event marks the downloads, so the host reads them while the backward pass still runs.
    void loss(float scale, bool backward, Replica *holder);
    void zeroGradients();
    // Node `index`'s backward pass, where it has a gradient to pass on (nodes are visited in
    // reverse by the engine).
    void backwardNode(std::size_t index, const PassContext &ctx, const float *weights);
    // Waits for loss()'s downloads (not for the rest of the pass): the loss sums, and the
    // metrics of `holder` updated (targets and row weights read back from the pinned staging).
    SliceResult collect(Replica *holder);

    float *gradients() { return m_gradients.data(); }
    std::int64_t rows() const { return m_rows; }

private:
    struct Staging
    {
        float *pinned = nullptr;               // host
        cuda::DeviceBuffer<float> device;      // inputs, targets, row weights
        cuda::Event copied = nullptr;          // on the copy stream: the device buffer holds the rows
        cuda::Event consumed = nullptr;        // on the compute stream: the pass no longer reads them
        bool used = false;
    };
    float *beginStaging(std::int64_t rows, bool weighted); // the next pinned buffer, once free
    // Queues the copy of the staged floats up to `end` (in the pinned buffer) that are not queued yet.
    void uploadStaged(const float *end);
    const float *stagedBlock(std::size_t block) const;     // pinned: block k of the staged rows
    const float *inputPtr(std::size_t input) const;
    const float *targetPtr(std::size_t output) const;
    const float *rowWeightsPtr() const;
    std::vector<const float *> paramPtrs(const ModelNode &node, const float *weights) const;
    LayerCall call(std::size_t index, const float *weights) const;
    template <typename F>
    void namingTheLayer(std::size_t index, const F &pass); // out of memory -> OutOfDeviceMemory for that layer
    // The error of an Embedding that met an id out of range in the last forward pass, if one did
    // (after the losses are in: the checks travel with them).
    std::optional<Error> badEmbeddingId();

    const Model &m_model;
    GpuHandles &m_device;
    std::int64_t m_capacity = 0, m_rows = 0;
    bool m_hasWeights = false;
    std::vector<std::int64_t> m_nodeCounts;       // per node: floats per sample
    std::vector<std::size_t> m_stagingOffsets;    // per input, then per target, then row weights (in floats per row)
    std::size_t m_stagingFloatsPerRow = 0;
    Staging m_staging[2];
    int m_current = 0;                            // the staging buffer of the pass in flight
    std::size_t m_uploaded = 0;                   // floats of it already queued to the device
    std::vector<cuda::DeviceBuffer<float>> m_values, m_grads, m_scratch;
    std::vector<LayerScratch> m_layerScratch;
    std::vector<bool> m_hasGrad;
    cuda::DeviceBuffer<float> m_gradients, m_perSample;
    float *m_lossHost = nullptr;                  // pinned: outputs x rows per-sample losses
    std::int32_t *m_badIdsHost = nullptr;         // pinned: per node, an Embedding's first id out of range (INT32_MAX: none)
    std::int64_t m_rowOffset = 0, m_rowStride = 1; // the last forward's PassContext, to name a bad id's row
    std::vector<float *> m_predHost;              // pinned, per output with metrics: rows x its values
    std::int64_t m_predCapacity = 0;              // rows m_predHost holds
    cuda::Event m_lossReady = nullptr;            // on the compute stream, after the downloads
};

} // namespace sluice::train::gpu
