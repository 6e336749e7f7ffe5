#pragma once
// `sluice gen interactions`: a synthetic recommender log, one CSV file `interactions.csv` with
// columns user_id, item_id, device, country, hour, price, user_age, click, rating, with structure
// that a small model can learn, most of it only through embeddings of the user and item ids.
//
// Every user and every item has a hidden factor vector (4 values, from the seed). A row's click is
// Bernoulli(sigmoid(logit)), the logit being 1.6 · dot(user, item) plus effects of the device,
// the country, the hour (evenings higher), the price (dearer lower) and the user's age; its rating
// is 3 + 0.9 · dot(user, item) + N(0, 0.35²), clipped to [1, 5]. Users and items are drawn with
// Zipf-like popularity (a few take most rows, as in real interaction logs), under a seeded
// permutation of their ids, so a popular id is no smaller than any other.
//
// Every value is a pure function of (spec, row): the same spec gives the same file whatever the
// thread count or chunk size, fewer rows give a prefix of more, and nothing is kept per user or
// item, so the memory used does not grow with --rows, --users or --items.
//
// Threading: the functions are pure and may be called from any thread; writeSyntheticInteractions
// spreads each chunk over oneTBB tasks and calls `progress` from the calling thread.

#include "io/error.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sluice {

inline constexpr int kInteractionFactors = 4;
using InteractionFactor = std::array<double, kInteractionFactors>;

struct SyntheticInteractionsSpec
{
    std::uint64_t rows = 0;
    std::uint64_t users = 10000; // ids 0 … users-1
    std::uint64_t items = 2000;  // ids 0 … items-1
    std::uint64_t seed = 0;
};

// One row, as written (price, user_age and rating already rounded to what the CSV holds).
struct Interaction
{
    std::uint64_t user = 0, item = 0;
    int device = 0;  // index into syntheticInteractionDevices()
    int country = 0; // index into syntheticInteractionCountries()
    int hour = 0;    // 0 … 23
    double price = 0, userAge = 0;
    double clickProbability = 0; // sigmoid of the row's logit: what `click` was drawn from
    int click = 0;
    double rating = 0;
};

const std::vector<std::string> &syntheticInteractionColumns();   // the header, in column order
const std::vector<std::string> &syntheticInteractionDevices();   // mobile, desktop, tablet, tv
const std::vector<std::string> &syntheticInteractionCountries(); // ISO codes, most frequent first

Status validate(const SyntheticInteractionsSpec &spec);

// The hidden factors (each value about N(0, 0.75²)) and their dot product, the affinity that
// drives clicks and ratings.
InteractionFactor syntheticUserFactor(const SyntheticInteractionsSpec &spec, std::uint64_t user);
InteractionFactor syntheticItemFactor(const SyntheticInteractionsSpec &spec, std::uint64_t item);
double syntheticAffinity(const SyntheticInteractionsSpec &spec, std::uint64_t user, std::uint64_t item);

Interaction syntheticInteraction(const SyntheticInteractionsSpec &spec, std::uint64_t row);

// Appends one CSV line (with its line end) for `row`.
void appendInteractionCsv(std::string &out, const Interaction &row);

// Writes `<folder>/interactions.csv` (a header row, then spec.rows rows), under a temporary name
// renamed into place when whole. Rows are made `chunkRows` at a time (0: a default of 65,536, a few
// MiB of text), spread over `threads` (0: all cores); `progress(rowsDone)` follows each chunk and
// `cancel` stops between chunks, leaving no file behind.
Status writeSyntheticInteractions(const SyntheticInteractionsSpec &spec, const std::string &folder, int threads,
                                  const std::function<void(std::uint64_t rowsDone)> &progress = {},
                                  const std::atomic<bool> *cancel = nullptr, std::uint64_t chunkRows = 0);

} // namespace sluice
