#include "io/synthetic/synthetic_interactions.h"

#include "io/writers/atomic_file.h"
#include "io/synthetic/zipf_ids.h"
#include "util/counter_random.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <numeric>

namespace sluice {
namespace {

// The constants of the hidden model (header comment). Chosen so that on 200k rows of 5,000
// users and 1,000 items (projects/recommender.sluice) a two-layer network over embeddings of
// the hashed user id, the item id and the categorical features (measured with the same network
// in PyTorch) reaches a validation click AUC of about 0.79 in 4 epochs (the true click
// probability gives 0.84, the affinity alone 0.82, everything but the ids about 0.6) and a rating
// MSE of 0.33 against a variance of 0.95 (the noise's is 0.12).
constexpr double kFactorScale = 0.75; // each factor value ~ N(0, 0.75²): the affinity has std ≈ 1.1
constexpr double kClickBias = -1.0;   // about 40% of the rows are clicks
constexpr double kClickAffinity = 1.6;
constexpr double kRatingAffinity = 0.9;
constexpr double kRatingNoise = 0.35;
constexpr double kUserZipf = 0.7, kItemZipf = 0.9; // popularity exponents (rank k drawn ∝ k^-s)
constexpr double kPrimaryDeviceShare = 0.7;         // rows on the user's own device; the rest drawn afresh

constexpr std::array<double, 4> kDeviceWeights{0.55, 0.25, 0.12, 0.08};
constexpr std::array<double, 4> kDeviceEffects{0.25, 0.0, -0.1, -0.45};
// Activity over the day (local time): low at night, a morning rise, the peak around 20:00.
constexpr std::array<double, 24> kHourWeights{2.0, 1.2, 0.8, 0.6, 0.5, 0.6, 1.0, 1.6, 2.2, 2.6, 2.8, 3.0,
                                              3.2, 3.0, 2.9, 3.0, 3.3, 3.8, 4.6, 5.4, 5.8, 5.4, 4.4, 3.2};
constexpr double kCountrySkew = 1.1; // country k of the list is chosen ∝ (k + 1)^-1.1

// Random streams: one per kind of value, so that adding a column never changes the others.
enum Stream : std::uint64_t { UserFactors = 1, ItemFactors, UserTraits, ItemTraits, CountryEffects, UserIds, ItemIds, Rows };
constexpr std::uint64_t kDrawsPerRow = 8;

// One 64-bit draw per (seed, stream, index), so any chunking and any thread count give the
// same values (util/counter_random.h).
using random::draw;

constexpr double uniform(std::uint64_t bits) { return random::unitInterval(bits); }

// Approximately standard normal (Irwin–Hall sum of four 16-bit uniforms): exact arithmetic, so
// the same on every machine.
double normal(std::uint64_t bits)
{
    const double sum = double(bits & 0xffff) + double((bits >> 16) & 0xffff) + double((bits >> 32) & 0xffff) + double(bits >> 48);
    return (sum / 65536.0 - 2.0) * 1.7320508075688772;
}

double roundTo(double value, double scale) { return std::round(value * scale) / scale; }

template <std::size_t N>
std::array<double, N> cumulative(const std::array<double, N> &weights)
{
    std::array<double, N> c{};
    double total = 0;
    for (std::size_t i = 0; i < N; ++i)
        c[i] = total += weights[i];
    for (double &v : c)
        v /= total;
    return c;
}

// The index whose share of [0, 1) holds u.
template <std::size_t N>
int pick(const std::array<double, N> &cumulativeShares, double u)
{
    for (std::size_t i = 0; i + 1 < N; ++i)
        if (u < cumulativeShares[i])
            return int(i);
    return int(N - 1);
}

// What the rows of one spec share, made once per write.
class InteractionModel
{
public:
    explicit InteractionModel(const SyntheticInteractionsSpec &spec)
        : m_spec(spec), m_userIds(draw(spec.seed, UserIds, 0), draw(spec.seed, UserIds, 1), spec.users),
          m_itemIds(draw(spec.seed, ItemIds, 0), draw(spec.seed, ItemIds, 1), spec.items),
          m_devices(cumulative(kDeviceWeights)), m_hours(cumulative(kHourWeights))
    {
        std::array<double, 20> countryWeights{};
        for (std::size_t k = 0; k < countryWeights.size(); ++k) {
            countryWeights[k] = std::pow(double(k + 1), -kCountrySkew);
            m_countryEffects[k] = 0.3 * normal(draw(spec.seed, CountryEffects, k));
        }
        m_countries = cumulative(countryWeights);
    }

    Interaction row(std::uint64_t index) const
    {
        auto bits = [&](std::uint64_t k) { return draw(m_spec.seed, Rows, index * kDrawsPerRow + k); };
        Interaction r;
        r.user = m_userIds(zipfRank(m_spec.users, kUserZipf, uniform(bits(0))));
        r.item = m_itemIds(zipfRank(m_spec.items, kItemZipf, uniform(bits(1))));
        // The user's traits: an age, a device of their own and a country.
        auto trait = [&](std::uint64_t k) { return draw(m_spec.seed, UserTraits, r.user * 4 + k); };
        r.userAge = roundTo(std::clamp(38 + 12 * normal(trait(0)), 18.0, 80.0), 10);
        r.country = pick(m_countries, uniform(trait(2)));
        r.device = uniform(bits(2)) < kPrimaryDeviceShare ? pick(m_devices, uniform(trait(1))) : pick(m_devices, uniform(bits(3)));
        r.hour = pick(m_hours, uniform(bits(4)));
        // The item's list price (log-normal, median about 20) with a discount of up to 15% or a
        // mark-up of up to 15% on the day.
        const double listPrice = std::exp(3.0 + 0.8 * normal(draw(m_spec.seed, ItemTraits, r.item)));
        r.price = std::max(0.01, roundTo(listPrice * (0.85 + 0.3 * uniform(bits(5))), 100));

        const double affinity = syntheticAffinity(m_spec, r.user, r.item);
        const double logit = kClickBias + kClickAffinity * affinity + kDeviceEffects[std::size_t(r.device)] +
                             m_countryEffects[std::size_t(r.country)] + 0.45 * std::cos(2 * std::numbers::pi * (r.hour - 20) / 24.0) -
                             0.35 * (std::log(r.price) - 3.0) - 0.2 * (r.userAge - 38) / 12;
        r.clickProbability = 1 / (1 + std::exp(-logit));
        r.click = uniform(bits(6)) < r.clickProbability ? 1 : 0;
        r.rating = roundTo(std::clamp(3 + kRatingAffinity * affinity + kRatingNoise * normal(bits(7)), 1.0, 5.0), 100);
        return r;
    }

private:
    SyntheticInteractionsSpec m_spec;
    IdPermutation m_userIds, m_itemIds;
    std::array<double, 4> m_devices;
    std::array<double, 24> m_hours;
    std::array<double, 20> m_countries{}, m_countryEffects{};
};

InteractionFactor factor(std::uint64_t seed, std::uint64_t stream, std::uint64_t id)
{
    InteractionFactor f{};
    for (int k = 0; k < kInteractionFactors; ++k)
        f[std::size_t(k)] = kFactorScale * normal(draw(seed, stream, id * kInteractionFactors + std::uint64_t(k)));
    return f;
}

void appendNumber(std::string &out, auto value, auto... format)
{
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, value, format...).ptr;
    out.append(text, end);
}

} // namespace

const std::vector<std::string> &syntheticInteractionColumns()
{
    static const std::vector<std::string> names{"user_id", "item_id", "device", "country", "hour", "price", "user_age", "click", "rating"};
    return names;
}

const std::vector<std::string> &syntheticInteractionDevices()
{
    static const std::vector<std::string> names{"mobile", "desktop", "tablet", "tv"};
    return names;
}

const std::vector<std::string> &syntheticInteractionCountries()
{
    static const std::vector<std::string> names{"US", "IN", "BR", "GB", "DE", "FR", "JP", "MX", "ID", "CA",
                                                "ES", "IT", "KR", "TR", "PL", "NL", "AU", "SE", "NG", "ZA"};
    return names;
}

Status validate(const SyntheticInteractionsSpec &spec)
{
    // Ids stay within int32 (what from_csv and Embedding inputs may use) and the id permutation's
    // products within 64 bits.
    constexpr std::uint64_t kMaxIds = (1ull << 31) - 1;
    if (spec.rows == 0)
        return Error::invalid("--rows", "must be at least 1");
    if (spec.users == 0 || spec.users > kMaxIds)
        return Error::invalid("--users", "must be 1 to " + std::to_string(kMaxIds) + ", got " + std::to_string(spec.users));
    if (spec.items == 0 || spec.items > kMaxIds)
        return Error::invalid("--items", "must be 1 to " + std::to_string(kMaxIds) + ", got " + std::to_string(spec.items));
    return Status::success();
}

InteractionFactor syntheticUserFactor(const SyntheticInteractionsSpec &spec, std::uint64_t user) { return factor(spec.seed, UserFactors, user); }

InteractionFactor syntheticItemFactor(const SyntheticInteractionsSpec &spec, std::uint64_t item) { return factor(spec.seed, ItemFactors, item); }

double syntheticAffinity(const SyntheticInteractionsSpec &spec, std::uint64_t user, std::uint64_t item)
{
    const InteractionFactor u = syntheticUserFactor(spec, user), i = syntheticItemFactor(spec, item);
    return std::inner_product(u.begin(), u.end(), i.begin(), 0.0);
}

Interaction syntheticInteraction(const SyntheticInteractionsSpec &spec, std::uint64_t row) { return InteractionModel(spec).row(row); }

void appendInteractionCsv(std::string &out, const Interaction &row)
{
    appendNumber(out, row.user);
    out += ',';
    appendNumber(out, row.item);
    out += ',';
    out += syntheticInteractionDevices()[std::size_t(row.device)];
    out += ',';
    out += syntheticInteractionCountries()[std::size_t(row.country)];
    out += ',';
    appendNumber(out, row.hour);
    out += ',';
    // Fixed decimals through to_chars: the same text in every locale and on every machine.
    appendNumber(out, row.price, std::chars_format::fixed, 2);
    out += ',';
    appendNumber(out, row.userAge, std::chars_format::fixed, 1);
    out += ',';
    appendNumber(out, row.click);
    out += ',';
    appendNumber(out, row.rating, std::chars_format::fixed, 2);
    out += '\n';
}

Status writeSyntheticInteractions(const SyntheticInteractionsSpec &spec, const std::string &folder, int threads,
                                  const std::function<void(std::uint64_t)> &progress, const std::atomic<bool> *cancel,
                                  std::uint64_t chunkRows)
{
    if (auto s = validate(spec); !s)
        return s;
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec)
        return Error::io(folder, "cannot create folder: " + ec.message());
    const std::string path = (std::filesystem::path(folder) / "interactions.csv").string();
    auto file = AtomicFile::create(path);
    if (!file)
        return file.error();
    std::string header;
    for (const auto &name : syntheticInteractionColumns())
        header += (header.empty() ? "" : ",") + name;
    if (auto s = file->write(header + "\n"); !s)
        return s;

    const InteractionModel model(spec);
    const std::uint64_t chunk = chunkRows > 0 ? chunkRows : 65536;
    // Each task formats a block of rows into its own string; the blocks are written in order.
    constexpr std::uint64_t kBlockRows = 1024;
    std::vector<std::string> blocks;
    tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
    for (std::uint64_t first = 0; first < spec.rows; first += chunk) {
        if (cancel && cancel->load())
            return Error::cancelled(path); // the file's destructor removes the temporary
        const std::uint64_t n = std::min(chunk, spec.rows - first);
        blocks.resize(std::size_t((n + kBlockRows - 1) / kBlockRows));
        arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks.size()), [&](const tbb::blocked_range<std::size_t> &r) {
                for (std::size_t b = r.begin(); b < r.end(); ++b) {
                    std::string &text = blocks[b];
                    text.clear();
                    const std::uint64_t begin = first + b * kBlockRows, end = std::min(first + n, begin + kBlockRows);
                    for (std::uint64_t row = begin; row < end; ++row)
                        appendInteractionCsv(text, model.row(row));
                }
            });
        });
        for (const std::string &text : blocks)
            if (auto s = file->write(text); !s)
                return s;
        if (progress)
            progress(first + n);
    }
    return file->commit();
}

} // namespace sluice
