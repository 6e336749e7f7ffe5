#include "io/synthetic_dataset.h"

#include "io/npy_writer.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

namespace sluice {
namespace {

constexpr std::uint64_t kChunkBytes = 32u << 20;
// Bounds that keep every size computation far from overflow and the target map in memory.
constexpr std::uint64_t kMaxRowElements = 1u << 24;
constexpr std::uint64_t kMaxMapWeights = 1u << 28;

std::uint64_t mix(std::uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

// One 64-bit draw per (seed, stream, index): counter-based, so any chunking gives the same values.
std::uint64_t draw(std::uint64_t seed, std::uint64_t stream, std::uint64_t index)
{
    return mix(mix(seed ^ (stream * 0x9e3779b97f4a7c15ull)) ^ (index * 0xd6e8feb86659fd93ull) ^ 0x632be59bd9b4e019ull);
}

// Approximately standard normal: Irwin–Hall sum of four 16-bit uniforms, centred and scaled.
// Far cheaper than Box–Muller, and synthetic data needs the shape, not the tails.
float normal(std::uint64_t bits)
{
    const double sum = double(bits & 0xffff) + double((bits >> 16) & 0xffff) + double((bits >> 32) & 0xffff) + double(bits >> 48);
    return float((sum / 65536.0 - 2.0) * 1.7320508075688772);
}

std::uint64_t elementsOf(const SyntheticColumn &c)
{
    std::uint64_t n = 1;
    for (std::uint64_t d : c.rowShape)
        n *= d;
    return n;
}

// Largest class count whose labels (0 … classes-1) an integer dtype can hold.
double largestValue(DType t)
{
    switch (t) {
    case DType::Int8: return 127;
    case DType::Int16: return 32767;
    case DType::Int32: return 2147483647.0;
    case DType::UInt8: return 255;
    case DType::UInt16: return 65535;
    case DType::UInt32: return 4294967295.0;
    default: return 9.2e18;
    }
}

// Converts to integer type I, clamped to its range (float-to-int conversion out of range is
// undefined behaviour; a regression target stored as uint8 saturates instead).
template <typename I>
I clampTo(double value)
{
    if (!(value == value))
        return I(0);
    const double lo = double(std::numeric_limits<I>::lowest()), hi = double(std::numeric_limits<I>::max());
    if (value <= lo)
        return std::numeric_limits<I>::lowest();
    if (value >= hi)
        return std::numeric_limits<I>::max();
    return I(value);
}

// Stores `value` as dtype `t` at `out`.
void store(std::byte *out, DType t, double value)
{
    auto put = [&](auto v) { std::memcpy(out, &v, sizeof v); };
    switch (t) {
    case DType::Bool: put(std::uint8_t(value != 0)); break;
    case DType::Int8: put(clampTo<std::int8_t>(value)); break;
    case DType::Int16: put(clampTo<std::int16_t>(value)); break;
    case DType::Int32: put(clampTo<std::int32_t>(value)); break;
    case DType::Int64: put(clampTo<std::int64_t>(value)); break;
    case DType::UInt8: put(clampTo<std::uint8_t>(value)); break;
    case DType::UInt16: put(clampTo<std::uint16_t>(value)); break;
    case DType::UInt32: put(clampTo<std::uint32_t>(value)); break;
    case DType::UInt64: put(clampTo<std::uint64_t>(value)); break;
    case DType::Float16: put(Float16::fromFloat(float(value)).bits); break;
    case DType::Float32: put(float(value)); break;
    case DType::Float64: put(value); break;
    }
}

// A feature element: its stored value and its standardised value (what the targets see).
struct FeatureValue
{
    double stored;
    double standardised;
};

FeatureValue featureValue(DType t, std::uint64_t bits)
{
    if (isFloating(t)) {
        const double v = normal(bits);
        return {v, v};
    }
    if (t == DType::Bool) {
        const double v = double(bits & 1);
        return {v, 2 * v - 1};
    }
    const double v = double(bits % 100);
    return {v, (v - 49.5) / 28.866};
}

} // namespace

Status validate(const SyntheticSpec &spec)
{
    if (spec.rows == 0)
        return Error::invalid("--rows", "must be at least 1");
    if (spec.features.empty())
        return Error::invalid("--feature", "at least one feature is needed");
    std::set<std::string> names;
    for (const auto *list : {&spec.features, &spec.targets}) {
        for (const auto &c : *list) {
            if (c.name.empty() || c.name.find_first_of("/\\") != std::string::npos || c.name.front() == '.')
                return Error::invalid(c.name, "column names must be plain file names");
            if (!names.insert(c.name).second)
                return Error::invalid(c.name, "column name used twice");
            if (elementsOf(c) == 0)
                return Error::invalid(c.name, "row shape has a zero dimension");
            std::uint64_t elements = 1;
            for (std::uint64_t d : c.rowShape) {
                if (d > kMaxRowElements / elements)
                    return Error::invalid(c.name, "row shape is too large (at most " + std::to_string(kMaxRowElements) + " elements a row)");
                elements *= d;
            }
        }
    }
    if (spec.task == SyntheticSpec::Task::Classification) {
        if (spec.classes.size() != spec.targets.size())
            return Error::invalid("--target", "every classification target needs a class count");
        for (std::size_t i = 0; i < spec.targets.size(); ++i) {
            const auto &t = spec.targets[i];
            if (!t.rowShape.empty())
                return Error::invalid(t.name, "a classification target is one label per row");
            if (isFloating(t.dtype) || t.dtype == DType::Bool)
                return Error::invalid(t.name, "class labels need an integer dtype");
            if (spec.classes[i] < 2)
                return Error::invalid(t.name, "needs at least 2 classes");
            if (double(spec.classes[i] - 1) > largestValue(t.dtype))
                return Error::invalid(t.name, std::to_string(spec.classes[i]) + " classes do not fit in " + std::string(dtypeName(t.dtype)));
        }
    }
    std::uint64_t inputs = 0, outputs = 0;
    for (const auto &c : spec.features)
        inputs += elementsOf(c);
    for (std::size_t t = 0; t < spec.targets.size(); ++t)
        outputs += spec.task == SyntheticSpec::Task::Classification && t < spec.classes.size() ? std::uint64_t(spec.classes[t])
                                                                                             : elementsOf(spec.targets[t]);
    if (inputs * outputs > kMaxMapWeights)
        return Error::invalid("--target", "features x target outputs is too large for the target map (at most " +
                                              std::to_string(kMaxMapWeights) + ")");
    if (!(spec.noise >= 0))
        return Error::invalid("--noise", "must be a non-negative number");
    return Status::success();
}

std::uint64_t totalBytes(const SyntheticSpec &spec)
{
    std::uint64_t rowBytes = 0;
    for (const auto *list : {&spec.features, &spec.targets})
        for (const auto &c : *list)
            rowBytes += elementsOf(c) * itemSize(c.dtype);
    return rowBytes * spec.rows;
}

Status writeSyntheticDataset(const SyntheticSpec &spec, const std::string &folder, int threads,
                             const std::function<void(std::uint64_t)> &progress, const std::atomic<bool> *cancel)
{
    if (auto s = validate(spec); !s)
        return s;
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec)
        return Error::io(folder, "cannot create folder: " + ec.message());

    // Column order: features, then targets. Stream ids are column positions.
    std::vector<const SyntheticColumn *> columns;
    for (const auto &c : spec.features)
        columns.push_back(&c);
    for (const auto &c : spec.targets)
        columns.push_back(&c);
    std::vector<NpyWriter> writers;
    for (const auto *c : columns) {
        auto w = NpyWriter::create((std::filesystem::path(folder) / (c->name + ".npy")).string(), {c->dtype, nativeByteOrder()}, c->rowShape);
        if (!w)
            return w.error();
        writers.push_back(std::move(w).value());
    }

    // The random linear map from all feature elements to the target outputs.
    std::uint64_t inputs = 0;
    for (const auto &c : spec.features)
        inputs += elementsOf(c);
    std::vector<std::uint64_t> outputsOf;
    std::uint64_t outputs = 0;
    for (std::size_t t = 0; t < spec.targets.size(); ++t) {
        const std::uint64_t k = spec.task == SyntheticSpec::Task::Classification ? std::uint64_t(spec.classes[t]) : elementsOf(spec.targets[t]);
        outputsOf.push_back(k);
        outputs += k;
    }
    const double scale = 1.0 / std::sqrt(double(inputs));
    std::vector<float> weights(outputs * inputs);
    for (std::uint64_t i = 0; i < weights.size(); ++i)
        weights[i] = float(normal(draw(spec.seed, ~0ull, i)) * scale);

    std::uint64_t rowBytesAll = 0;
    for (const auto *c : columns)
        rowBytesAll += elementsOf(*c) * itemSize(c->dtype);
    const std::uint64_t chunkRows = std::max<std::uint64_t>(1, kChunkBytes / std::max<std::uint64_t>(1, rowBytesAll));
    std::vector<std::vector<std::byte>> buffers(columns.size());

    tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
    for (std::uint64_t first = 0; first < spec.rows; first += chunkRows) {
        if (cancel && cancel->load())
            return Error::invalid(folder, "cancelled"); // the writers' destructors remove their temporaries
        const std::uint64_t n = std::min(chunkRows, spec.rows - first);
        for (std::size_t c = 0; c < columns.size(); ++c)
            buffers[c].resize(n * elementsOf(*columns[c]) * itemSize(columns[c]->dtype));
        arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, n, 256), [&](const tbb::blocked_range<std::uint64_t> &r) {
                std::vector<double> latent(outputs);
                for (std::uint64_t i = r.begin(); i < r.end(); ++i) {
                    const std::uint64_t row = first + i;
                    std::fill(latent.begin(), latent.end(), 0.0);
                    std::uint64_t input = 0;
                    for (std::size_t f = 0; f < spec.features.size(); ++f) {
                        const auto &col = spec.features[f];
                        const std::uint64_t width = elementsOf(col), item = itemSize(col.dtype);
                        std::byte *out = buffers[f].data() + i * width * item;
                        for (std::uint64_t e = 0; e < width; ++e, ++input) {
                            const FeatureValue v = featureValue(col.dtype, draw(spec.seed, f, row * width + e));
                            store(out + e * item, col.dtype, v.stored);
                            for (std::uint64_t k = 0; k < outputs; ++k)
                                latent[k] += v.standardised * weights[k * inputs + input];
                        }
                    }
                    std::uint64_t output = 0;
                    for (std::size_t t = 0; t < spec.targets.size(); ++t) {
                        const auto &col = spec.targets[t];
                        const std::size_t c = spec.features.size() + t;
                        const std::uint64_t item = itemSize(col.dtype);
                        for (std::uint64_t k = 0; k < outputsOf[t]; ++k)
                            latent[output + k] += spec.noise * normal(draw(spec.seed, c, row * outputsOf[t] + k));
                        if (spec.task == SyntheticSpec::Task::Classification) {
                            const auto best = std::max_element(latent.begin() + std::ptrdiff_t(output), latent.begin() + std::ptrdiff_t(output + outputsOf[t]));
                            store(buffers[c].data() + i * item, col.dtype, double(best - (latent.begin() + std::ptrdiff_t(output))));
                        } else {
                            for (std::uint64_t k = 0; k < outputsOf[t]; ++k)
                                store(buffers[c].data() + (i * outputsOf[t] + k) * item, col.dtype, latent[output + k]);
                        }
                        output += outputsOf[t];
                    }
                }
            });
        });
        for (std::size_t c = 0; c < columns.size(); ++c)
            if (auto s = writers[c].appendRows(std::span<const std::byte>(buffers[c])); !s)
                return s;
        if (progress)
            progress(first + n);
    }
    // All or nothing: every column is complete and synced before any is renamed into place.
    for (auto &w : writers)
        if (auto s = w.prepare(); !s)
            return s;
    for (auto &w : writers)
        if (auto s = w.finish(); !s)
            return s;
    return Status::success();
}

} // namespace sluice
