// Throughput of the CUDA backend's memory-bound kernels (train/cuda/*_kernels.h) at training
// sizes, as effective bandwidth: the bytes an op must move at least (read its inputs once, write
// its outputs once) divided by its time, next to a device-to-device copy measured in the same
// run. Each figure is the median over --runs timed batches of back-to-back launches on one
// stream (host clock, stream synchronised at both ends). One JSON line per op on stdout, the
// shape bench/peers/kernel_torch.py prints for PyTorch eager doing the same work.
//
//   sluice_kernel_bench [--rows 65536] [--cols 1024] [--runs 7] [--seconds 0.2]
#include "train/cuda/kernels/activation_kernels.h"
#include "train/cuda/device_buffer.h"
#include "train/cuda/kernels/dropout_kernels.h"
#include "train/cuda/kernels/layer_norm_kernels.h"
#include "train/cuda/kernels/loss_kernels.h"
#include "train/cuda/kernels/optimizer_kernels.h"
#include "train/cuda/kernels/reduce_kernels.h"
#include "train/gpu/device_query.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace sluice::train;
using namespace sluice::train::cuda;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::vector<float> randomValues(std::size_t n, std::uint32_t seed, float lo, float hi)
{
    std::vector<float> v(n);
    std::uint32_t s = seed;
    for (auto &x : v) {
        s = s * 1664525u + 1013904223u;
        x = lo + (hi - lo) * (float(s >> 8) * 0x1.0p-24f);
    }
    return v;
}

struct Bench
{
    Stream stream;
    int runs;
    double seconds;
    std::string device;
    std::int64_t rows, cols;

    // Times `op`, which moves at least `bytes`, and prints its line.
    void time(const char *name, double bytes, const std::function<void()> &op) const
    {
        for (int i = 0; i < 3; ++i)
            op();
        synchronize(stream);
        double t0 = now();
        op();
        synchronize(stream);
        const int batch = std::max(3, int(seconds / std::max(now() - t0, 1e-6)));
        std::vector<double> gbps, us;
        for (int r = 0; r < runs; ++r) {
            synchronize(stream);
            t0 = now();
            for (int i = 0; i < batch; ++i)
                op();
            synchronize(stream);
            const double dt = (now() - t0) / batch;
            gbps.push_back(bytes / dt / 1e9);
            us.push_back(dt * 1e6);
        }
        std::sort(gbps.begin(), gbps.end());
        std::sort(us.begin(), us.end());
        const nlohmann::json line{{"benchmark", "kernels"}, {"tool", "sluice"},         {"op", name},
                                  {"rows", rows},           {"cols", cols},             {"median_gbps", gbps[gbps.size() / 2]},
                                  {"median_us", us[us.size() / 2]}, {"min_gbps", gbps.front()}, {"max_gbps", gbps.back()},
                                  {"runs", runs},           {"launches_per_run", batch}, {"device", device}};
        std::printf("%s\n", line.dump().c_str());
        std::fflush(stdout);
    }
};

} // namespace

int main(int argc, char **argv)
{
    std::int64_t R = 65536, C = 1024;
    int runs = 7;
    double seconds = 0.2;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        if (key == "--rows")
            R = std::stoll(argv[i + 1]);
        else if (key == "--cols")
            C = std::stoll(argv[i + 1]);
        else if (key == "--runs")
            runs = std::stoi(argv[i + 1]);
        else if (key == "--seconds")
            seconds = std::stod(argv[i + 1]);
    }
    const sluice::DeviceQuery q = sluice::queryGpuDevices();
    if (q.devices.empty()) {
        std::fprintf(stderr, "sluice_kernel_bench: %s\n", q.reason.c_str());
        return 1;
    }
    setDevice(0);
    Stream s = createStream();
    const Bench b{s, runs, seconds, q.devices[0].name, R, C};
    const std::size_t N = std::size_t(R * C);
    const double f = sizeof(float);

    auto x = toDevice<float>(randomValues(N, 1, -3, 3), s), dy = toDevice<float>(randomValues(N, 2, -1, 1), s);
    auto bias = toDevice<float>(randomValues(std::size_t(C), 3, -1, 1), s), gamma = toDevice<float>(randomValues(std::size_t(C), 4, 0.5f, 1.5f), s);
    DeviceBuffer<float> y(N), dx(N), stats(std::size_t(2 * R)), sums(static_cast<std::size_t>(C)), perSample(static_cast<std::size_t>(R));
    std::vector<float> classes(static_cast<std::size_t>(R));
    for (std::size_t i = 0; i < classes.size(); ++i)
        classes[i] = float(i % std::size_t(C));
    auto target = toDevice<float>(classes, s);

    b.time("copy", 2 * N * f, [&] { copyOnDevice(y.data(), x.data(), N * sizeof(float), s); });
    b.time("bias_relu_forward", 2 * N * f, [&] { biasActivationForward(s, ActivationKind::Relu, x.data(), bias.data(), y.data(), nullptr, R, C); });
    b.time("bias_gelu_forward", 2 * N * f, [&] { biasActivationForward(s, ActivationKind::Gelu, x.data(), bias.data(), y.data(), nullptr, R, C); });
    b.time("gelu_backward", 3 * N * f, [&] { activationBackward(s, ActivationKind::Gelu, x.data(), nullptr, dy.data(), dx.data(), R, C); });
    b.time("softmax_rows", 2 * N * f, [&] { softmaxRows(s, x.data(), y.data(), R, C); });
    b.time("layer_norm_forward", 2 * N * f, [&] { layerNormForward(s, x.data(), gamma.data(), bias.data(), y.data(), stats.data(), R, C, 1e-3); });
    b.time("layer_norm_backward", 3 * N * f, [&] {
        layerNormBackward(s, x.data(), gamma.data(), stats.data(), dy.data(), dx.data(), sums.data(), perSample.data(), R, C);
    });
    b.time("column_sums", N * f, [&] { columnSums(s, dy.data(), sums.data(), R, C, false); });
    LossParams sparse;
    sparse.kind = LossKind::SparseCategoricalCrossentropy;
    sparse.fromLogits = true;
    b.time("loss_sparse_ce_logits", 2 * N * f,
           [&] { computeLoss(s, sparse, x.data(), target.data(), nullptr, 1.0f / float(R), R, C, C, perSample.data(), dx.data()); });
    LossParams mse;
    b.time("loss_mse", 3 * N * f, [&] { computeLoss(s, mse, x.data(), dy.data(), nullptr, 1.0f / float(R), R, C, 1, perSample.data(), dx.data()); });
    DropoutParams drop;
    drop.rate = 0.1;
    drop.stepKey = 42;
    b.time("dropout", 2 * N * f, [&] { dropoutApply(s, drop, x.data(), y.data(), R, C); });
    {
        DeviceBuffer<float> m(N), v(N);
        m.zero(s);
        v.zero(s);
        AdamParams p;
        b.time("adam", 7 * N * f, [&] { adamUpdate(s, p, y.data(), dy.data(), m.data(), v.data(), nullptr, std::int64_t(N)); });
    }
    {
        DeviceBuffer<double> workspace{static_cast<std::size_t>(kGlobalNormWorkspace)};
        b.time("global_norm", N * f, [&] { clipByGlobalNorm(s, dy.data(), std::int64_t(N), 0.0, workspace.data()); });
    }
    {
        const float *in[] = {x.data(), dy.data(), y.data(), dx.data()};
        DeviceBuffer<float> out(N);
        b.time("sum_4_buffers", 5 * N * f, [&] { sumBuffers(s, in, 4, out.data(), std::int64_t(N)); });
    }
    destroyStream(s);
    return 0;
}
