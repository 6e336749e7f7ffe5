// Conv1D and Conv2D: the convolution, then bias and activation as Dense applies them. Three
// ways to convolve, the first that applies:
// - a 1x1 convolution with stride 1 is one gemm over the input itself;
// - undilated windows with a multiple of 8 filters run the direct AVX2 kernels
//   (conv_direct.h), over a zero-padded copy of the input kept for the backward pass;
// - otherwise im2col, then one gemm against the kernel read as a (k C, filters) matrix; the
//   im2col matrix is built for blocks of output positions at a time (conv_geometry.h) so that
//   its memory stays bounded.
#include "train/cpu/gemm.h"
#include "train/layers/bias_activation.h"
#include "train/layers/conv/conv_direct.h"
#include "train/layers/conv/conv_geometry.h"
#include "train/layers/conv/conv_layers.h"
#include "train/layers/layer_util.h"

#include <algorithm>
#include <cassert>

namespace sluice::train {
namespace {

using detail::layerError;

// LayerState scratch slots.
constexpr std::size_t kPreActivation = 0, kActivationGradient = 1, kCols = 2;
// The direct path's: the padded input (forward to backward), the kernel gradient's per-group
// sums, and the input gradient's padded output gradient, flipped kernel and padded result.
constexpr std::size_t kPaddedInput = 3, kGradientSums = 4, kPaddedGradient = 5, kFlippedKernel = 6, kPaddedInputGradient = 7;

class Conv final : public Layer
{
public:
    Conv(std::string name, ConvOptions options) : Layer(std::move(name)), m_opt(std::move(options))
    {
        assert(m_opt.rank == 1 || m_opt.rank == 2);
        assert(m_opt.kernelSize.size() == std::size_t(m_opt.rank) && m_opt.strides.size() == std::size_t(m_opt.rank) &&
               m_opt.dilationRate.size() == std::size_t(m_opt.rank));
    }

    std::string className() const override { return m_opt.rank == 1 ? "Conv1D" : "Conv2D"; }

    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::Conv;
        k.units = m_opt.filters;
        k.activation = m_opt.activation;
        k.useBias = m_opt.useBias;
        k.window = detail::kernelWindow(m_win);
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectSpatialInput(*this, inputShapes, m_opt.rank); !s)
            return s.error();
        const Shape &in = inputShapes[0];
        m_win = detail::makeWindow(m_opt.rank, in, m_opt.kernelSize, m_opt.strides, m_opt.dilationRate, m_opt.padding);
        if (m_win.outPositions() == 0) {
            const bool dilated = std::any_of(m_opt.dilationRate.begin(), m_opt.dilationRate.end(), [](std::int64_t d) { return d > 1; });
            return layerError(*this, "kernel_size " + shapeString(m_opt.kernelSize) +
                                         (dilated ? " with dilation_rate " + shapeString(m_opt.dilationRate) : std::string()) +
                                         " does not fit inputs of shape " + shapeString(in) + " with padding \"valid\"");
        }
        m_channels = in.back();
        Shape out;
        if (m_opt.rank == 2)
            out.push_back(m_win.h.out);
        out.push_back(m_win.w.out);
        out.push_back(m_opt.filters);
        m_outSample = out;
        return out;
    }

    std::vector<ParamSpec> params() const override
    {
        Shape kernel = m_opt.kernelSize;
        kernel.push_back(m_channels);
        kernel.push_back(m_opt.filters);
        std::vector<ParamSpec> p{{"kernel", kernel, m_opt.kernelInitializer}};
        if (m_opt.useBias)
            p.push_back({"bias", {m_opt.filters}, m_opt.biasInitializer});
        return p;
    }

    void forward(const PassContext &, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &state) const override
    {
        const FloatTensor &x = *inputs[0];
        assert(x.shape.size() == std::size_t(m_opt.rank) + 2 && x.shape.back() == m_channels);
        const std::int64_t B = x.shape[0], F = m_opt.filters, K = m_win.colWidth(), rows = B * m_win.outPositions();
        Shape outShape{B};
        outShape.insert(outShape.end(), m_outSample.begin(), m_outSample.end());
        output.resize(outShape);
        const float *kernel = params[0];
        float *y = output.ptr();

        if (m_win.isPointwise()) {
            cpu::gemm(false, false, rows, F, K, 1.0f, x.ptr(), K, kernel, F, 0.0f, y, F);
        } else if (detail::directConvApplies(m_win, F)) {
            FloatTensor &xpad = detail::scratch(state, kPaddedInput, detail::paddedInputShape(m_win, B));
            detail::padSamples(m_win, x.ptr(), B, xpad.ptr());
            detail::directConvForward(m_win, xpad.ptr(), B, kernel, F, y);
        } else {
            const std::int64_t chunk = detail::colsChunkRows(m_win);
            float *cols = detail::scratch(state, kCols, {std::min(chunk, rows), K}).ptr();
            for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
                const std::int64_t n = std::min(chunk, rows - r0);
                detail::im2col(m_win, x.ptr(), r0, r0 + n, cols);
                cpu::gemm(false, false, n, F, K, 1.0f, cols, K, kernel, F, 0.0f, y + r0 * F, F);
            }
        }

        const float *bias = m_opt.useBias ? params[1] : nullptr;
        // Pre-activation values are kept only where the activation's derivative needs them.
        float *z = activationNeedsInput(m_opt.activation) ? detail::scratch(state, kPreActivation, outShape).ptr() : nullptr;
        detail::biasActivationForward(m_opt.activation, bias, y, z, rows, F);
    }

    void backward(const PassContext &, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, const FloatTensor &output,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const> grads, LayerState &state) const override
    {
        const FloatTensor &x = *inputs[0];
        const std::int64_t B = x.shape[0], F = m_opt.filters, K = m_win.colWidth(), rows = B * m_win.outPositions();
        const float *kernel = params[0];

        // dZ = dY * f'(Z).
        const float *dZ = dOutput.ptr();
        if (m_opt.activation != ActivationKind::Linear) {
            const float *z = activationNeedsInput(m_opt.activation) ? state.saved[kPreActivation].ptr() : nullptr;
            float *buf = detail::scratch(state, kActivationGradient, dOutput.shape).ptr();
            detail::activationGradientRows(m_opt.activation, z, output.ptr(), dOutput.ptr(), buf, rows, F);
            dZ = buf;
        }
        if (m_opt.useBias && grads[1])
            detail::addBiasGradient(dZ, rows, F, grads[1]);

        float *dKernel = grads[0];
        float *dx = nullptr;
        if (!dInputs.empty() && dInputs[0]) {
            dInputs[0]->resize(x.shape);
            dx = dInputs[0]->ptr();
        }
        if (rows == 0)
            return;

        if (m_win.isPointwise()) {
            // dKernel += X^T dZ, dX = dZ K^T, with X [rows, C] the input itself.
            if (dKernel)
                cpu::gemm(true, false, K, F, rows, 1.0f, x.ptr(), K, dZ, F, 1.0f, dKernel, F);
            if (dx)
                cpu::gemm(false, true, rows, K, F, 1.0f, dZ, F, kernel, F, 0.0f, dx, K);
            return;
        }

        if (detail::directConvApplies(m_win, F)) {
            assert(state.saved.size() > kPaddedInput); // the padded input is the forward pass's
            if (state.saved.size() <= kPaddedInputGradient)
                state.saved.resize(kPaddedInputGradient + 1);
            std::vector<FloatTensor> &s = state.saved;
            if (dKernel)
                detail::directConvKernelGradient(m_win, s[kPaddedInput].ptr(), B, dZ, F, dKernel, s[kGradientSums]);
            if (dx && detail::directInputGradientApplies(m_win, F)) {
                detail::directConvInputGradient(m_win, dZ, B, kernel, F, dx, s[kPaddedGradient], s[kFlippedKernel], s[kPaddedInputGradient]);
                return;
            }
            dKernel = nullptr; // done above; im2col computes dX alone
        }
        im2colBackward(x, dZ, kernel, dKernel, dx, state);
    }

private:
    // Block by block, in a fixed order: dKernel += cols^T dZ; dCols = dZ K^T, scattered back
    // into dX. The blocks depend on the shapes only, so the sums do not depend on threads.
    void im2colBackward(const FloatTensor &x, const float *dZ, const float *kernel, float *dKernel, float *dx, LayerState &state) const
    {
        const std::int64_t F = m_opt.filters, K = m_win.colWidth(), rows = x.shape[0] * m_win.outPositions();
        if (!dKernel && !dx)
            return;
        if (dx)
            std::fill_n(dx, x.size(), 0.0f);
        const std::int64_t chunk = detail::colsChunkRows(m_win);
        float *cols = detail::scratch(state, kCols, {std::min(chunk, rows), K}).ptr();
        for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
            const std::int64_t n = std::min(chunk, rows - r0);
            const float *dZBlock = dZ + r0 * F;
            if (dKernel) {
                detail::im2col(m_win, x.ptr(), r0, r0 + n, cols);
                cpu::gemm(true, false, K, F, n, 1.0f, cols, K, dZBlock, F, 1.0f, dKernel, F);
            }
            if (dx) {
                cpu::gemm(false, true, n, K, F, 1.0f, dZBlock, F, kernel, F, 0.0f, cols, K);
                detail::col2imAdd(m_win, cols, r0, r0 + n, dx);
            }
        }
    }

private:
    ConvOptions m_opt;
    detail::Window2D m_win;
    std::int64_t m_channels = 0;
    Shape m_outSample;
};

} // namespace

std::unique_ptr<Layer> makeConv(std::string name, ConvOptions options) { return std::make_unique<Conv>(std::move(name), std::move(options)); }

} // namespace sluice::train
