#include "io/synthetic/synthetic_dataset.h"

#include "io/writers/npy_writer.h"
#include "util/counter_random.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <numbers>
#include <set>

namespace sluice {
namespace {

constexpr std::uint64_t kChunkBytes = 32u << 20;
// Bounds that keep every size computation far from overflow and the target map in memory.
constexpr std::uint64_t kMaxRowElements = 1u << 24;
constexpr std::uint64_t kMaxMapWeights = 1u << 28;
// --imbalance fits an offset per class on pilot rows whose scores it keeps in memory.
constexpr std::uint64_t kMaxImbalancedClasses = 4096;

// One 64-bit draw per (seed, stream, index): counter-based, so any chunking gives the same
// values (util/counter_random.h).
using random::draw;

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

// Uniform in [0, 1) from the top 53 bits.
double uniform(std::uint64_t bits) { return double(bits >> 11) * 0x1.0p-53; }

using Buffers = std::vector<std::vector<std::byte>>;

// Fills one row of every column (features first, then targets) at position `i` of the chunk
// buffers. Called from many tasks at once: const, with the task's own scratch vector.
class RowSource
{
public:
    virtual ~RowSource() = default;
    virtual void fill(std::uint64_t row, std::uint64_t i, Buffers &buffers, std::vector<double> &scratch) const = 0;
};

// Regression and classification: targets are a fixed random linear map of every feature.
class LinearRows final : public RowSource
{
public:
    LinearRows(const SyntheticSpec &spec, tbb::task_arena &arena) : m_spec(spec)
    {
        for (const auto &c : spec.features)
            m_inputs += elementsOf(c);
        for (std::size_t t = 0; t < spec.targets.size(); ++t) {
            const std::uint64_t k = classification() ? std::uint64_t(spec.classes[t]) : elementsOf(spec.targets[t]);
            m_outputsOf.push_back(k);
            m_outputs += k;
        }
        const double scale = 1.0 / std::sqrt(double(m_inputs));
        m_weights.resize(m_outputs * m_inputs);
        for (std::uint64_t i = 0; i < m_weights.size(); ++i)
            m_weights[i] = float(normal(draw(spec.seed, ~0ull, i)) * scale);
        for (std::uint64_t k : m_outputsOf)
            m_bias.emplace_back(classification() ? k : 0, 0.0);
        if (classification() && spec.imbalance > 0)
            calibrateImbalance(arena);
    }

    void fill(std::uint64_t row, std::uint64_t i, Buffers &buffers, std::vector<double> &latent) const override
    {
        scores(row, latent, &buffers, i);
        std::uint64_t output = 0;
        for (std::size_t t = 0; t < m_spec.targets.size(); ++t) {
            const auto &col = m_spec.targets[t];
            std::byte *out = buffers[m_spec.features.size() + t].data();
            const std::uint64_t item = itemSize(col.dtype);
            if (classification())
                store(out + i * item, col.dtype, double(label(latent, t, output)));
            else
                for (std::uint64_t k = 0; k < m_outputsOf[t]; ++k)
                    store(out + (i * m_outputsOf[t] + k) * item, col.dtype, latent[output + k]);
            output += m_outputsOf[t];
        }
    }

private:
    bool classification() const { return m_spec.task == SyntheticSpec::Task::Classification; }

    // The map's outputs for `row`, noise included; stores the features when `buffers` is given.
    void scores(std::uint64_t row, std::vector<double> &latent, Buffers *buffers, std::uint64_t i) const
    {
        latent.assign(m_outputs, 0.0);
        std::uint64_t input = 0;
        for (std::size_t f = 0; f < m_spec.features.size(); ++f) {
            const auto &col = m_spec.features[f];
            const std::uint64_t width = elementsOf(col), item = itemSize(col.dtype);
            std::byte *out = buffers ? (*buffers)[f].data() + i * width * item : nullptr;
            for (std::uint64_t e = 0; e < width; ++e, ++input) {
                const FeatureValue v = featureValue(col.dtype, draw(m_spec.seed, f, row * width + e));
                if (out)
                    store(out + e * item, col.dtype, v.stored);
                for (std::uint64_t k = 0; k < m_outputs; ++k)
                    latent[k] += v.standardised * m_weights[k * m_inputs + input];
            }
        }
        std::uint64_t output = 0;
        for (std::size_t t = 0; t < m_spec.targets.size(); ++t) {
            const std::size_t c = m_spec.features.size() + t;
            for (std::uint64_t k = 0; k < m_outputsOf[t]; ++k)
                latent[output + k] += m_spec.noise * normal(draw(m_spec.seed, c, row * m_outputsOf[t] + k));
            output += m_outputsOf[t];
        }
    }

    // Argmax over target t's class scores (starting at `output`), each offset by its class's bias.
    std::int64_t label(const std::vector<double> &latent, std::size_t t, std::uint64_t output) const
    {
        const std::vector<double> &bias = m_bias[t];
        std::int64_t best = 0;
        double bestScore = latent[output] + bias[0];
        for (std::uint64_t k = 1; k < m_outputsOf[t]; ++k)
            if (latent[output + k] + bias[k] > bestScore) {
                bestScore = latent[output + k] + bias[k];
                best = std::int64_t(k);
            }
        return best;
    }

    // Per-class offsets of the scores that give class 0 the share p and every other class an even
    // part of the rest, fitted on a pilot sample: the dataset's first rows (whether or not they
    // are written), as many as the map's size allows, so that the offsets are a function of the
    // spec, not of --rows. The fit raises a class's offset while it wins too few pilot rows and
    // lowers it while it wins too many (multiplicative on the shares, as logit offsets act).
    void calibrateImbalance(tbb::task_arena &arena)
    {
        // About 2^30 multiply-adds and at most 2^24 scores kept (validate() bounds the classes).
        const std::uint64_t work = std::max<std::uint64_t>(1, m_inputs * m_outputs);
        const std::uint64_t pilot = std::clamp<std::uint64_t>(std::min((1ull << 30) / work, (1ull << 24) / std::max<std::uint64_t>(1, m_outputs)), 2048, 16384);
        std::vector<float> pilotScores(pilot * m_outputs);
        arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, pilot, 64), [&](const tbb::blocked_range<std::uint64_t> &r) {
                std::vector<double> latent;
                for (std::uint64_t row = r.begin(); row < r.end(); ++row) {
                    scores(row, latent, nullptr, 0);
                    std::copy(latent.begin(), latent.end(), pilotScores.begin() + std::ptrdiff_t(row * m_outputs));
                }
            });
        });
        std::uint64_t output = 0;
        for (std::size_t t = 0; t < m_spec.targets.size(); ++t) {
            const std::uint64_t k = m_outputsOf[t];
            std::vector<double> &bias = m_bias[t], wanted(k, (1.0 - m_spec.imbalance) / double(k - 1));
            wanted[0] = m_spec.imbalance;
            std::vector<std::uint64_t> wins(k);
            for (int round = 0; round < 400; ++round) {
                std::fill(wins.begin(), wins.end(), 0);
                for (std::uint64_t row = 0; row < pilot; ++row) {
                    const float *score = &pilotScores[row * m_outputs + output];
                    std::uint64_t best = 0;
                    for (std::uint64_t j = 1; j < k; ++j)
                        if (score[j] + bias[j] > score[best] + bias[best])
                            best = j;
                    ++wins[best];
                }
                double worst = 0;
                for (std::uint64_t j = 0; j < k; ++j) {
                    const double share = std::max(double(wins[j]), 0.5) / double(pilot);
                    worst = std::max(worst, std::abs(share - wanted[j]) / wanted[j]);
                    bias[j] += 0.5 * std::log(wanted[j] / share);
                }
                if (worst < 0.01)
                    break;
            }
            output += k;
        }
    }

    const SyntheticSpec &m_spec;
    std::uint64_t m_inputs = 0, m_outputs = 0;
    std::vector<std::uint64_t> m_outputsOf;
    std::vector<float> m_weights; // m_outputs x m_inputs
    std::vector<std::vector<double>> m_bias; // per target, per class: added to the class's score
};

// Random streams of the sensor generator (the linear tasks use column positions and ~0).
enum SensorStream : std::uint64_t { ChannelTraits = 1000, WindowTraits, Readings, AnomalyTraits };

// Sensor windows: each channel a sum of a fundamental and a harmonic of the window's own
// frequency and phases, with the channel's amplitude, phase offset and level, plus noise.
class SensorRows final : public RowSource
{
public:
    explicit SensorRows(const SyntheticSpec &spec) : m_spec(spec)
    {
        m_timesteps = spec.features[0].rowShape[0];
        m_channels = spec.features[0].rowShape[1];
        for (std::uint64_t c = 0; c < m_channels; ++c) {
            auto u = [&](std::uint64_t k) { return uniform(draw(spec.seed, ChannelTraits, c * 4 + k)); };
            m_traits.push_back({0.5 + u(0), 2 * std::numbers::pi * u(1), 0.5 * u(2), u(3) - 0.5});
        }
    }

    void fill(std::uint64_t row, std::uint64_t i, Buffers &buffers, std::vector<double> &x) const override
    {
        const std::uint64_t T = m_timesteps, C = m_channels;
        auto window = [&](std::uint64_t k) { return uniform(draw(m_spec.seed, WindowTraits, row * 4 + k)); };
        const double omega = 2 * std::numbers::pi * (0.5 + 2.5 * window(0)) / double(T), phase = 2 * std::numbers::pi * window(1),
                     harmonicPhase = 2 * std::numbers::pi * window(2);
        x.resize(T * C);
        for (std::uint64_t t = 0; t < T; ++t)
            for (std::uint64_t c = 0; c < C; ++c) {
                const Traits &k = m_traits[c];
                const double angle = omega * double(t) + phase + k.phaseOffset;
                x[t * C + c] = k.level + k.amplitude * std::sin(angle) + k.harmonic * std::sin(2 * angle + harmonicPhase) +
                               m_spec.noise * normal(draw(m_spec.seed, Readings, (row * T + t) * C + c));
            }
        const bool anomalous = window(3) < m_spec.anomalyShare;
        if (anomalous)
            distort(row, x);
        const DType type = m_spec.features[0].dtype;
        const std::uint64_t item = itemSize(type);
        std::byte *out = buffers[0].data() + i * T * C * item;
        for (std::uint64_t e = 0; e < T * C; ++e)
            store(out + e * item, type, x[e]);
        if (!m_spec.targets.empty()) {
            const DType flag = m_spec.targets[0].dtype;
            store(buffers[1].data() + i * itemSize(flag), flag, anomalous ? 1.0 : 0.0);
        }
    }

private:
    struct Traits
    {
        double amplitude, phaseOffset, harmonic, level;
    };

    // One channel, over a quarter to a half of the window: a burst of noise, a level shift of
    // 1.5 to 3 either way, or the reading stuck at its first value.
    void distort(std::uint64_t row, std::vector<double> &x) const
    {
        const std::uint64_t T = m_timesteps, C = m_channels;
        auto bits = [&](std::uint64_t k) { return draw(m_spec.seed, AnomalyTraits, row * 8 + k); };
        const std::uint64_t kind = bits(0) % 3, channel = bits(1) % C;
        const std::uint64_t length = std::max<std::uint64_t>(1, T / 4 + bits(2) % std::max<std::uint64_t>(1, T / 4 + 1));
        const std::uint64_t start = bits(3) % (T - std::min(length, T) + 1);
        const double shift = (1.5 + 1.5 * uniform(bits(4))) * (bits(5) & 1 ? 1 : -1);
        for (std::uint64_t t = start; t < std::min(T, start + length); ++t) {
            double &v = x[t * C + channel];
            if (kind == 0)
                v += 1.5 * normal(draw(m_spec.seed, AnomalyTraits, (row * T + t) * 8 + 7));
            else if (kind == 1)
                v += shift;
            else
                v = x[start * C + channel];
        }
    }

    const SyntheticSpec &m_spec;
    std::uint64_t m_timesteps = 0, m_channels = 0;
    std::vector<Traits> m_traits;
};

} // namespace

SyntheticSpec sensorSpec(std::uint64_t rows, std::uint64_t timesteps, std::uint64_t channels, double anomalyShare)
{
    SyntheticSpec s;
    s.task = SyntheticSpec::Task::Sensors;
    s.rows = rows;
    s.features = {{"signal", {timesteps, channels}, DType::Float32}};
    if (anomalyShare > 0)
        s.targets = {{"anomaly", {}, DType::Int64}};
    s.anomalyShare = anomalyShare;
    return s;
}

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
    if (spec.imbalance != 0) {
        if (spec.task != SyntheticSpec::Task::Classification)
            return Error::invalid("--imbalance", "applies to classification only");
        if (!(spec.imbalance > 0 && spec.imbalance < 1))
            return Error::invalid("--imbalance", "the share of class 0 must be between 0 and 1, e.g. 0.9");
        std::uint64_t classes = 0;
        for (int k : spec.classes)
            classes += std::uint64_t(std::max(k, 0));
        if (classes > kMaxImbalancedClasses)
            return Error::invalid("--imbalance", "supports at most " + std::to_string(kMaxImbalancedClasses) + " classes over all targets");
    }
    if (spec.task == SyntheticSpec::Task::Sensors) {
        const auto &f = spec.features[0];
        if (spec.features.size() != 1 || f.rowShape.size() != 2 || !isFloating(f.dtype))
            return Error::invalid("sensors", "needs one floating feature of shape (timesteps, channels)");
        if (f.rowShape[0] < 2)
            return Error::invalid("--timesteps", "must be at least 2");
        if (!(spec.anomalyShare >= 0 && spec.anomalyShare <= 1))
            return Error::invalid("--anomalies", "the share of anomalous windows must be between 0 and 1, e.g. 0.05");
        if (spec.targets.size() > 1 || (!spec.targets.empty() && (!spec.targets[0].rowShape.empty() || isFloating(spec.targets[0].dtype))))
            return Error::invalid("sensors", "the only target is an integer anomaly flag per window");
        if (spec.anomalyShare > 0 && spec.targets.empty())
            return Error::invalid("--anomalies", "needs a target column to flag the anomalous windows");
    } else {
        if (spec.anomalyShare != 0)
            return Error::invalid("--anomalies", "applies to sensors only");
        std::uint64_t inputs = 0, outputs = 0;
        for (const auto &c : spec.features)
            inputs += elementsOf(c);
        for (std::size_t t = 0; t < spec.targets.size(); ++t)
            outputs += spec.task == SyntheticSpec::Task::Classification && t < spec.classes.size() ? std::uint64_t(spec.classes[t])
                                                                                                 : elementsOf(spec.targets[t]);
        if (inputs * outputs > kMaxMapWeights)
            return Error::invalid("--target", "features x target outputs is too large for the target map (at most " +
                                                  std::to_string(kMaxMapWeights) + ")");
    }
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

    // Column order: features, then targets (the linear tasks draw each column's values from the
    // random stream of its position).
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

    tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
    std::unique_ptr<RowSource> source;
    if (spec.task == SyntheticSpec::Task::Sensors)
        source = std::make_unique<SensorRows>(spec);
    else
        source = std::make_unique<LinearRows>(spec, arena);

    std::uint64_t rowBytesAll = 0;
    for (const auto *c : columns)
        rowBytesAll += elementsOf(*c) * itemSize(c->dtype);
    const std::uint64_t chunkRows = std::max<std::uint64_t>(1, kChunkBytes / std::max<std::uint64_t>(1, rowBytesAll));
    Buffers buffers(columns.size());

    for (std::uint64_t first = 0; first < spec.rows; first += chunkRows) {
        if (cancel && cancel->load())
            return Error::cancelled(folder); // the writers' destructors remove their temporaries
        const std::uint64_t n = std::min(chunkRows, spec.rows - first);
        for (std::size_t c = 0; c < columns.size(); ++c)
            buffers[c].resize(n * elementsOf(*columns[c]) * itemSize(columns[c]->dtype));
        arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, n, 256), [&](const tbb::blocked_range<std::uint64_t> &r) {
                std::vector<double> scratch;
                for (std::uint64_t i = r.begin(); i < r.end(); ++i)
                    source->fill(first + i, i, buffers, scratch);
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
