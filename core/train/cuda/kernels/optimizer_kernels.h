#pragma once
// Optimizer updates and global-norm clipping on the device, with the CPU backend's update rules
// (train/objectives/optimizers.cpp, Keras 3's update_step) over one flat parameter buffer: weight decay
// first (w -= w * weight_decay * lr), then the update. Slots are device buffers of the same
// length, zero at the start, in the order the CPU optimizer names them. Plain C++ header;
// defined in optimizer_kernels.cu.

#include "train/cuda/runtime.h"

#include <cstdint>

namespace sluice::train::cuda {

struct SgdParams
{
    float learningRate = 0.01f;
    float momentum = 0.0f; // 0: no velocity slot
    bool nesterov = false;
    float weightDecay = 0.0f;
};
// velocity may be null when momentum is 0.
void sgdUpdate(Stream stream, const SgdParams &p, float *weights, const float *grads, float *velocity, std::int64_t n);

struct AdamParams
{
    float learningRate = 0.001f;
    double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-7;
    bool amsgrad = false;
    float weightDecay = 0.0f; // AdamW: 0.004 by default
    std::int64_t iteration = 1; // 1-based: the bias correction's t
};
// vHat is read and written only with amsgrad.
void adamUpdate(Stream stream, const AdamParams &p, float *weights, const float *grads, float *m, float *v, float *vHat, std::int64_t n);

struct RmsPropParams
{
    float learningRate = 0.001f;
    double rho = 0.9, momentum = 0.0, epsilon = 1e-7;
    bool centered = false;
    float weightDecay = 0.0f;
};
// momentumSlot is used when momentum > 0, averageGradient when centered.
void rmsPropUpdate(Stream stream, const RmsPropParams &p, float *weights, const float *grads, float *velocity, float *momentumSlot,
                   float *averageGradient, std::int64_t n);

// Doubles of device workspace clipByGlobalNorm needs.
constexpr std::int64_t kGlobalNormWorkspace = 1025;

// Keras global_clipnorm: the L2 norm of grads (in double, summed in a fixed order: the same bits
// on every run) is left in workspace[0]; where it is finite and above clipnorm (> 0), grads are
// scaled by float(clipnorm / norm). All on the stream, no synchronisation: read workspace[0]
// afterwards for the norm.
void clipByGlobalNorm(Stream stream, float *grads, std::int64_t n, double clipnorm, double *workspace);

// The non-trainable state's step (train::applyStateUpdates on the device): weights += updates,
// then updates = 0, over n floats, before clipping and the optimizer see the trainable part.
void applyStateUpdates(Stream stream, float *weights, float *updates, std::int64_t n);

} // namespace sluice::train::cuda
