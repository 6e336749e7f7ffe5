#pragma once
// Private to recurrent.cpp, gru.cpp and lstm.cpp: the vectorised gate arithmetic both recurrent
// layers share. Not a public header (the layers are made by makeGru / makeLstm,
// train/layers/recurrent/recurrent.h).

#include "train/layers/recurrent/recurrent.h"
#include "train/model/float_tensor.h"

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace sluice::train::detail {

// The LSTM bias initializer used with unit_forget_bias and bias_initializer "zeros": zeros
// except the forget-gate slice [units, 2 units) of the (4 units,) bias, which is ones.
inline constexpr const char *kLstmUnitForgetBias = "lstm_bias_unit_forget";

// build() of both: one input of per-sample shape (timesteps, features), both known and > 0.
// Returns {timesteps, features}.
Result<std::pair<std::int64_t, std::int64_t>> sequenceInputShape(const Layer &layer, const std::vector<Shape> &inputShapes);

// x = f(x) over n values, vectorised (approximations within a few float ulps of std::tanh and
// 1 / (1 + std::exp(-x)); NaN stays NaN).
void activate(GateActivation kind, float *x, std::int64_t n);
// d *= f'(x), given y = f(x) (both activations have derivatives in terms of their output).
void scaleByDerivative(GateActivation kind, const float *y, float *d, std::int64_t n);

// The part of forward and backward both layers share, for inputs x [B, T, F], gate count
// G = k * U, states [T + 1, B, U] (h_{-1} = 0 first, time-major so that one step's rows are
// contiguous for the recurrent gemm).
// output = h_{T-1} [B, U], or every h_t as [B, T, U].
void writeOutput(const float *states, std::int64_t B, std::int64_t T, std::int64_t U, bool returnSequences, FloatTensor &output);
// From the pre-activation gradients of the input projection dXW [B, T, G] (batch-major, like x)
// and of the recurrent projection dRec [T, B, G]: dKernel += x^T dXW, dRecurrent += sum over
// t >= 1 of h_{t-1}^T dRec_t, and, when dX is not null, dX = dXW kernel^T [B, T, F].
void weightAndInputGradients(const float *x, const float *dXW, const float *states, const float *dRec, std::int64_t B, std::int64_t T,
                             std::int64_t F, std::int64_t U, std::int64_t G, const float *kernel, float *dKernel, float *dRecurrent,
                             FloatTensor *dX);

// What GRU and LSTM share around their gate arithmetic: the options, the input shape, the
// kernel specification for the GPU engine, the kernel and recurrent kernel, the input
// projection of every time step at once, and the two time loops (forward: the recurrent gemm
// of each step before its gates; backward: the gradient from the output at each step, then the
// recurrent gemm carrying it to the step before).
class RecurrentLayer : public Layer
{
public:
    // `gatesPerUnit`: 3 for GRU, 4 for LSTM.
    RecurrentLayer(std::string name, RecurrentOptions options, int gatesPerUnit, LayerKernelSpec::Kind kind);

    LayerKernelSpec kernelSpec() const override;
    Result<Shape> build(const std::vector<Shape> &inputShapes) override;
    // kernel (F, G), recurrent_kernel (U, G) and, with use_bias, biasParam().
    std::vector<ParamSpec> params() const override;

protected:
    virtual ParamSpec biasParam() const = 0;

    std::int64_t units() const { return m_opt.units; }
    std::int64_t gateWidth() const { return m_gatesPerUnit * m_opt.units; } // G
    // xw = x W (+ the input bias params[2][0, G)), every step at once: one [B*T, F] x [F, G] gemm.
    void projectInputs(const FloatTensor &x, std::span<const float *const> params, float *xw) const;
    // For t = 0 .. T-1: rec = h_{t-1} R ([B, G]; zero at t = 0, h_{t-1} read from states
    // [T + 1, B, U]), then step(t).
    void forwardSteps(std::int64_t B, const float *states, const float *R, FloatTensor &rec, const std::function<void(std::int64_t)> &step) const;
    // For t = T-1 .. 0: step(t, dOut, dOutStride) with dLoss/dh_t from the output (null where
    // none flows in: every step but the last without return_sequences), then, for t > 0,
    // dh = dRec_t R^T (+ dh where `accumulate`), dRec_t at dRec + t * B * G.
    void backwardSteps(std::int64_t B, const FloatTensor &dOutput, const float *R, const float *dRec, float *dh, bool accumulate,
                       const std::function<void(std::int64_t, const float *, std::int64_t)> &step) const;

    RecurrentOptions m_opt;
    std::int64_t m_steps = 0, m_features = 0;

private:
    int m_gatesPerUnit;
    LayerKernelSpec::Kind m_kind;
};

// m[r, :] += v for every row of a rows x cols row-major matrix.
void addToRows(float *m, std::int64_t rows, std::int64_t cols, const float *v);
// out[c] += sum over rows of m[r, c].
void addColumnSums(const float *m, std::int64_t rows, std::int64_t cols, float *out);

} // namespace sluice::train::detail
