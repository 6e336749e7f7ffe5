#include "io/synthetic/synthetic_images.h"

#include "io/formats/image_codec.h"
#include "util/counter_random.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>

namespace sluice {
namespace {

// Whether the point (u, v), in the shape's own frame (its bounding box is [-1, 1]²), is inside.
bool inside(int shape, double u, double v)
{
    const double r = std::sqrt(u * u + v * v);
    switch (shape) {
    case 0: return r < 1;                                                                  // circle
    case 1: return std::max(std::abs(u), std::abs(v)) < 0.8;                               // square
    case 2: return v > -0.8 && v < 0.8 && std::abs(u) < (0.8 - v) * 0.6;                   // triangle, apex down (rows grow down)
    case 3: return (std::abs(u) < 0.28 && std::abs(v) < 1) || (std::abs(v) < 0.28 && std::abs(u) < 1); // cross
    case 4: return r < 1 && r > 0.6;                                                      // ring
    case 5: return std::abs(u) < 0.9 && std::abs(v) < 0.9 && int(std::floor((v + 1) * 2.5)) % 2 == 0; // stripes
    case 6: return std::abs(u) + std::abs(v) < 1;                                          // diamond
    default: {                                                                             // dots
        const double du = std::abs(u) - 0.5, dv = std::abs(v) - 0.5;
        return du * du + dv * dv < 0.09;
    }
    }
}

std::string fileName(const SyntheticImagesSpec &spec, std::uint64_t index, int label)
{
    char name[64];
    std::snprintf(name, sizeof name, "%s_%06llu.%s", syntheticImageClasses()[std::size_t(label)].c_str(),
                  static_cast<unsigned long long>(index), spec.format == SyntheticImagesSpec::Format::Jpeg ? "jpg" : "png");
    return name;
}

} // namespace

const std::vector<std::string> &syntheticImageClasses()
{
    static const std::vector<std::string> names{"circle", "square", "triangle", "cross", "ring", "stripes", "diamond", "dots"};
    return names;
}

Status validate(const SyntheticImagesSpec &spec)
{
    if (spec.classes < 2 || spec.classes > int(syntheticImageClasses().size()))
        return Error::invalid("--classes", "must be 2 to " + std::to_string(syntheticImageClasses().size()) + ", got " + std::to_string(spec.classes));
    if (spec.height < 8 || spec.width < 8 || spec.height > 4096 || spec.width > 4096)
        return Error::invalid("--size", "each side must be 8 to 4096 pixels, got " + std::to_string(spec.height) + "x" + std::to_string(spec.width));
    if (spec.rows < std::uint64_t(spec.classes))
        return Error::invalid("--rows", "needs at least one image a class (" + std::to_string(spec.classes) + ")");
    if (spec.quality < 1 || spec.quality > 100)
        return Error::invalid("--quality", "must be 1 to 100");
    if (!(spec.noise >= 0))
        return Error::invalid("--noise", "must not be negative");
    return {};
}

std::vector<std::uint8_t> drawSyntheticImage(const SyntheticImagesSpec &spec, std::uint64_t index, int &label)
{
    label = int(index % std::uint64_t(spec.classes));
    std::mt19937_64 rng(spec.seed * random::kGolden + index * random::kMix1 + 1);
    std::uniform_real_distribution<double> unit(0, 1);
    const int H = spec.height, W = spec.width, side = std::min(H, W);
    const double cy = H * (0.3 + 0.4 * unit(rng)), cx = W * (0.3 + 0.4 * unit(rng));
    const double scale = side * (0.18 + 0.14 * unit(rng));
    const double angle = (label == 4 || label == 0) ? 0 : (unit(rng) - 0.5) * 0.6; // a slight tilt
    const double c = std::cos(angle), s = std::sin(angle);
    double background[3], foreground[3];
    for (int k = 0; k < 3; ++k) {
        background[k] = 30 + 100 * unit(rng);
        foreground[k] = 130 + 120 * unit(rng);
    }
    std::normal_distribution<double> noise(0, spec.noise);
    std::vector<std::uint8_t> pixels(std::size_t(H) * std::size_t(W) * 3);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            const double dy = (y + 0.5 - cy) / scale, dx = (x + 0.5 - cx) / scale;
            const bool in = inside(label, c * dx + s * dy, -s * dx + c * dy);
            for (int k = 0; k < 3; ++k) {
                const double value = (in ? foreground[k] : background[k]) + (spec.noise > 0 ? noise(rng) : 0);
                pixels[(std::size_t(y) * std::size_t(W) + std::size_t(x)) * 3 + std::size_t(k)] = std::uint8_t(std::clamp(value, 0.0, 255.0));
            }
        }
    return pixels;
}

Status writeSyntheticImages(const SyntheticImagesSpec &spec, const std::string &folder, int threads,
                            const std::function<void(std::uint64_t)> &progress, const std::atomic<bool> *interrupted)
{
    if (auto s = validate(spec); !s)
        return s;
    namespace fs = std::filesystem;
    std::error_code ec;
    for (int k = 0; k < spec.classes; ++k)
        if (fs::create_directories(fs::path(folder) / syntheticImageClasses()[std::size_t(k)], ec); ec)
            return Error::io(folder, "cannot create the class folders: " + ec.message());
    std::atomic<std::uint64_t> done{0};
    std::mutex failureMutex;
    std::optional<Error> failure; // the first, guarded by failureMutex
    auto writeOne = [&](std::uint64_t index) -> std::optional<Error> {
        int label = 0;
        const auto pixels = drawSyntheticImage(spec, index, label);
        const fs::path path = fs::path(folder) / syntheticImageClasses()[std::size_t(label)] / fileName(spec, index, label);
        auto encoded = spec.format == SyntheticImagesSpec::Format::Jpeg ? encodeJpeg(pixels.data(), spec.height, spec.width, 3, spec.quality, path)
                                                                         : encodePng(pixels.data(), spec.height, spec.width, 3, path);
        if (!encoded.ok())
            return encoded.error();
        // Under a temporary name first: an interrupted run never leaves half an image.
        const fs::path partial = path.string() + ".part";
        {
            std::ofstream out(partial, std::ios::binary | std::ios::trunc);
            if (!out.write(encoded->data(), std::streamsize(encoded->size())))
                return Error::io(partial.string(), "write failed");
        }
        if (fs::rename(partial, path, ec); ec)
            return Error::io(path.string(), "cannot rename into place: " + ec.message());
        return std::nullopt;
    };
    tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
    arena.execute([&] {
        tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, spec.rows, 64), [&](const tbb::blocked_range<std::uint64_t> &range) {
            for (std::uint64_t i = range.begin(); i != range.end(); ++i) {
                if (interrupted && interrupted->load())
                    return;
                if (auto error = writeOne(i)) {
                    std::lock_guard lock(failureMutex);
                    if (!failure)
                        failure = *error;
                    return;
                }
                const std::uint64_t n = done.fetch_add(1) + 1;
                if (progress && (n % 64 == 0 || n == spec.rows))
                    progress(n);
            }
        });
    });
    if (failure)
        return *failure;
    if (interrupted && interrupted->load())
        return Error::cancelled(folder);
    return {};
}

} // namespace sluice
