#pragma once
// The forward and backward pass of one layer on a GPU, from its LayerKernelSpec (train/model/layer.h),
// with the CPU layer's semantics: Dense (and TimeDistributed Dense) through cuBLAS, fp32, TF32
// or bf16 products, with the bias and activation fused in one kernel; Conv1D / Conv2D as im2col
// and cuBLAS products (fp32 or TF32: bf16 converts Dense products only); Activation, Dropout,
// LayerNormalization, BatchNormalization, Embedding, the pooling and reshaping layers and
// Concatenate with the backend's kernels (train/cuda/). Plain C++ on the kernels' host launchers; CUDA builds only.
//
// Threading: a call runs on the stream of its DeviceContext; one replica's calls in order.

#include "train/cuda/blas.h"
#include "train/cuda/device_buffer.h"
#include "train/cuda/window.h"
#include "train/model/layer.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sluice::train::gpu {

struct DeviceContext
{
    cuda::Stream stream = nullptr;
    cuda::Blas *blas = nullptr;
    cuda::GemmMode mode = cuda::GemmMode::Fp32;
    bool bf16 = false; // mixed precision: Dense products in bf16, fp32 accumulation
};

// Device scratch a layer keeps between its passes, one per node and replica, grown on demand.
struct LayerScratch
{
    // Dense, Conv: pre-activation (gelu); LayerNormalization: row stats; BatchNormalization:
    // per-channel mean, 1/std, variance
    cuda::DeviceBuffer<float> saved;
    cuda::DeviceBuffer<float> cols;              // Conv: a block of the im2col matrix (forward, then backward)
    cuda::DeviceBuffer<std::int32_t> positions;  // max pooling: each output's maximum, for backward
    cuda::DeviceBuffer<cuda::Bf16> inputBf16;    // bf16 Dense: the input, kept for the kernel's gradient
    cuda::DeviceBuffer<cuda::Bf16> kernelBf16;   // bf16 Dense: the kernel of this step
    cuda::DeviceBuffer<cuda::Bf16> gradientBf16; // bf16 Dense: dLoss/dz
    std::vector<cuda::DeviceBuffer<float>> buffers; // GRU, LSTM (their time-major states), RepeatVector
    cuda::DeviceBuffer<std::int32_t> firstBad;     // Embedding: the first id out of range this pass (INT32_MAX: none)
    cuda::DeviceBuffer<unsigned char> sortScratch; // Embedding: the ids sorted with their positions, for backward
};

// One application of a layer to `rows` samples.
struct LayerCall
{
    const Layer *layer = nullptr;
    LayerKernelSpec spec;
    std::int64_t rows = 0;
    std::vector<Shape> inputShapes; // per sample
    Shape outputShape;              // per sample
    std::vector<const float *> inputs;
    std::vector<const float *> params; // device pointers, in Layer::params() order
};

// The kernels' copy of a layer's window (the .cu files are C++17 and cannot include layer.h).
cuda::Window deviceWindow(const LayerKernelSpec::Window &window);

// Whether `layer` can run on a GPU; when not, `reason` says why (for an error naming the layer).
bool supportedOnGpu(const Layer &layer, const std::vector<Shape> &inputShapes, const Shape &outputShape, std::string &reason);

void layerForward(const DeviceContext &dc, const LayerCall &call, const PassContext &ctx, float *output, LayerScratch &scratch);

// dOutput may be overwritten. WRITES dInputs[j] where not null; ADDS into grads[i] (as the CPU
// layers do).
void layerBackward(const DeviceContext &dc, const LayerCall &call, const PassContext &ctx, const float *output, float *dOutput,
                   std::span<float *const> dInputs, std::span<float *const> grads, LayerScratch &scratch);

// The recurrent layers and RepeatVector (gpu_recurrent_ops.cpp), called by the two above.
void recurrentForward(const DeviceContext &dc, const LayerCall &call, float *output, LayerScratch &scratch);
void recurrentBackward(const DeviceContext &dc, const LayerCall &call, const float *dOutput, float *dInput, std::span<float *const> grads,
                       LayerScratch &scratch);
void repeatVectorForward(const DeviceContext &dc, const LayerCall &call, float *output);
void repeatVectorBackward(const DeviceContext &dc, const LayerCall &call, const float *dOutput, float *dInput, LayerScratch &scratch);

// Conv1D / Conv2D and the pooling layers (gpu_conv_ops.cpp), called by the two above. Pooling
// keeps the maxima's positions for backward in training passes only.
void convForward(const DeviceContext &dc, const LayerCall &call, float *output, LayerScratch &scratch);
void convBackward(const DeviceContext &dc, const LayerCall &call, const float *output, float *dOutput, float *dInput,
                  std::span<float *const> grads, LayerScratch &scratch);
void poolingForward(const DeviceContext &dc, const LayerCall &call, const PassContext &ctx, float *output, LayerScratch &scratch);
void poolingBackward(const DeviceContext &dc, const LayerCall &call, const float *dOutput, float *dInput, LayerScratch &scratch);

// Grows `buffer` to at least n elements (contents lost when it grows).
template <typename T>
void ensureSize(cuda::DeviceBuffer<T> &buffer, std::size_t n)
{
    if (buffer.size() < n)
        buffer = cuda::DeviceBuffer<T>(n);
}

} // namespace sluice::train::gpu
