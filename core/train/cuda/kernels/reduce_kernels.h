#pragma once
// The in-device reduction of logical replicas on one GPU (NCCL refuses duplicate devices):
// out = in[0] + in[1] + ... + in[count-1], added in that order for every element, so the result
// is the in-process CPU reduction's to the bit. Plain C++ header; defined in reduce_kernels.cu.

#include "train/cuda/runtime.h"

#include <cstddef>
#include <cstdint>

namespace sluice::train::cuda {

// `inputs` (a host array of `count` device pointers, count >= 1) are buffers of n floats; out may be one
// of them (the first, typically: replica 0's gradient receives the sum).
void sumBuffers(Stream stream, const float *const *inputs, std::size_t count, float *out, std::int64_t n);

} // namespace sluice::train::cuda
