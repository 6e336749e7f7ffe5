// Matrix-product throughput of Sluice's cuBLAS wrapper (train/cuda/blas.h) in fp32, TF32 and
// bf16-in/fp32-out, for square products of a few sizes. Each figure is the median over --runs
// timed batches of back-to-back products on one stream (host clock around the batch, the stream
// synchronised at both ends), after warm-up products. One JSON line per (size, mode) on stdout,
// the same shape bench/peers/gemm_torch.py prints, so that both can be read side by side.
//
//   sluice_gemm_bench [--sizes 2048,4096,8192] [--runs 7] [--seconds 0.25]
#include "train/cuda/blas.h"
#include "train/cuda/device_buffer.h"
#include "train/gpu/device_query.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace sluice::train::cuda;

namespace {

struct Options
{
    std::vector<std::int64_t> sizes{2048, 4096, 8192};
    int runs = 7;
    double seconds = 0.25; // aimed length of one timed batch
};

Options parse(int argc, char **argv)
{
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        if (key == "--sizes") {
            o.sizes.clear();
            for (std::size_t at = 0; at < value.size();) {
                const std::size_t comma = std::min(value.find(',', at), value.size());
                o.sizes.push_back(std::stoll(value.substr(at, comma - at)));
                at = comma + 1;
            }
        } else if (key == "--runs") {
            o.runs = std::stoi(value);
        } else if (key == "--seconds") {
            o.seconds = std::stod(value);
        }
    }
    return o;
}

// Uniform values in [-1, 1) from a fixed LCG: the same data on every run.
std::vector<float> randomMatrix(std::size_t n, std::uint32_t seed)
{
    std::vector<float> v(n);
    std::uint32_t s = seed;
    for (auto &x : v) {
        s = s * 1664525u + 1013904223u;
        x = float(s >> 8) * 0x1.0p-23f - 1.0f;
    }
    return v;
}

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

int main(int argc, char **argv)
{
    const Options o = parse(argc, argv);
    const sluice::DeviceQuery q = sluice::queryGpuDevices();
    if (q.devices.empty()) {
        std::fprintf(stderr, "sluice_gemm_bench: %s\n", q.reason.c_str());
        return 1;
    }
    setDevice(0);
    Stream stream = createStream();
    Blas blas;
    for (const std::int64_t n : o.sizes) {
        const std::size_t count = std::size_t(n * n);
        auto a = toDevice<float>(randomMatrix(count, 1), stream), b = toDevice<float>(randomMatrix(count, 2), stream);
        DeviceBuffer<float> c(count);
        DeviceBuffer<Bf16> a16(count), b16(count);
        convertToBf16(stream, a.data(), a16.data(), std::int64_t(count));
        convertToBf16(stream, b.data(), b16.data(), std::int64_t(count));
        for (const char *mode : {"fp32", "tf32", "bf16"}) {
            auto product = [&] {
                if (std::strcmp(mode, "bf16") == 0)
                    blas.gemmBf16(stream, false, false, n, n, n, 1.0f, a16.data(), n, b16.data(), n, 0.0f, c.data(), n);
                else
                    blas.gemm(stream, false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n,
                              std::strcmp(mode, "tf32") == 0 ? GemmMode::Tf32 : GemmMode::Fp32);
            };
            // Warm up, and size the batch from one timed product.
            for (int i = 0; i < 3; ++i)
                product();
            synchronize(stream);
            double t0 = now();
            product();
            synchronize(stream);
            const int batch = std::max(3, int(o.seconds / std::max(now() - t0, 1e-6)));
            std::vector<double> tflops;
            for (int r = 0; r < o.runs; ++r) {
                synchronize(stream);
                t0 = now();
                for (int i = 0; i < batch; ++i)
                    product();
                synchronize(stream);
                const double dt = now() - t0;
                tflops.push_back(2.0 * double(n) * double(n) * double(n) * batch / dt / 1e12);
            }
            std::sort(tflops.begin(), tflops.end());
            const nlohmann::json line{{"benchmark", "gemm"}, {"tool", "sluice"}, {"size", n}, {"mode", mode}, {"median_tflops", tflops[tflops.size() / 2]},
                                      {"min_tflops", tflops.front()}, {"max_tflops", tflops.back()}, {"runs", o.runs},
                                      {"products_per_run", batch}, {"device", q.devices[0].name}};
            std::printf("%s\n", line.dump().c_str());
            std::fflush(stdout);
        }
    }
    destroyStream(stream);
    return 0;
}
