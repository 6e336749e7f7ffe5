#pragma once
// One time step of GRU (reset_after=True, gates z, r, h) and LSTM (gates i, f, c, o) on the
// device, forward and backward, with the CPU layers' arithmetic (train/layers/recurrent/gru.cpp,
// lstm.cpp): the gate pass between the step's recurrent product (cuBLAS, by the caller) and the
// next. One thread per (row, unit). Activations: tanh or sigmoid, derivatives from the outputs.
// Plain C++ header; defined in recurrent_kernels.cu.

#include "train/cuda/runtime.h"

#include <cstdint>

namespace sluice::train::cuda {

enum class GateKind { Tanh, Sigmoid };

struct RecurrentStep
{
    std::int64_t rows = 0, units = 0;
    GateKind activation = GateKind::Tanh, recurrentActivation = GateKind::Sigmoid;
};

// GRU forward. xw: x W + b_in at this step, row b at xw + b * xwStride ([., 3U]); rec: h_{t-1} U
// [B, 3U] (null: zero, the first step); rb: the recurrent bias [3U] (null: zero); hPrev [B, U].
// Writes gates [B, 3U] (z, r, hh), recH [B, U] (h_{t-1} U_h + rb_h) and h [B, U].
void gruStepForward(Stream stream, const RecurrentStep &s, const float *xw, std::int64_t xwStride, const float *rec, const float *rb,
                    const float *hPrev, float *gates, float *recH, float *h);
// GRU backward. dOut: dLoss/dh_t from the layer's output (null: none), row b at dOut + b * dOutStride;
// dh: in dLoss/dh_t from later steps, out the part of dLoss/dh_{t-1} not through U (the caller
// adds dRec U^T). Writes dxw (row stride dxwStride, [., 3U]) and dRec [B, 3U].
void gruStepBackward(Stream stream, const RecurrentStep &s, const float *gates, const float *recH, const float *hPrev, const float *dOut,
                     std::int64_t dOutStride, float *dxw, std::int64_t dxwStride, float *dRec, float *dh);

// LSTM forward. xw: x W + b at this step (row stride xwStride, [., 4U]); rec: h_{t-1} U [B, 4U]
// (null: zero); cPrev [B, U]. Writes gates [B, 4U] (i, f, g, o), c, cAct = act(c) and h [B, U].
void lstmStepForward(Stream stream, const RecurrentStep &s, const float *xw, std::int64_t xwStride, const float *rec, const float *cPrev,
                     float *gates, float *c, float *cAct, float *h);
// LSTM backward. dh: dLoss/dh_t from later steps (read); dc: in dLoss/dc_t, out dLoss/dc_{t-1}.
// Writes the gates' pre-activation gradients to dPre (row stride dPreStride) and dPreT [B, 4U].
void lstmStepBackward(Stream stream, const RecurrentStep &s, const float *gates, const float *cPrev, const float *cAct, const float *dOut,
                      std::int64_t dOutStride, const float *dh, float *dc, float *dPre, std::int64_t dPreStride, float *dPreT);

} // namespace sluice::train::cuda
