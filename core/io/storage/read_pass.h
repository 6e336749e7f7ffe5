#pragma once
// Timed passes over an array that gather batches of rows into batch buffers, sequentially or
// in a fresh random order each pass, as the pipeline's sources will: the engine behind
// `sluice bench read` and the bounded-memory guarantees on files larger than RAM.

#include "io/error.h"
#include "io/nd_array.h"

#include <atomic>
#include <cstdint>
#include <functional>

namespace sluice {

struct ReadPassOptions
{
    enum class Order { Sequential, Shuffled };
    Order order = Order::Sequential;
    std::uint64_t batchRows = 256;
    int threads = 0;         // <= 0: all cores
    double seconds = 5;      // run whole passes' batches until this much time has passed…
    std::uint64_t passes = 0; // …or, when > 0, exactly this many full passes
    std::uint64_t seed = 0;   // shuffled order: pass p uses permutation(seed, p)
    bool verify = false;      // compute an order-independent checksum of every row gathered
    // Sequential passes release mapped pages behind themselves every 64 MiB window. Shuffled
    // passes over a file larger than this budget release the whole mapping whenever the
    // process's resident set has grown by more than the budget since the pass began (pages
    // stay in the page cache; only this process's resident set shrinks).
    std::uint64_t residentBudgetBytes = 0; // 0: a quarter of physical memory
};

struct ReadPassResult
{
    std::uint64_t samples = 0; // rows gathered
    std::uint64_t bytes = 0;
    std::uint64_t batches = 0;
    double seconds = 0;
    double passes = 0;           // full passes completed (fraction for a timed run)
    std::uint64_t checksum = 0;  // with verify: sum over gathered rows of a hash of the row
    std::uint64_t peakRssBytes = 0;

    double samplesPerSecond() const { return seconds > 0 ? double(samples) / seconds : 0; }
    double bytesPerSecond() const { return seconds > 0 ? double(bytes) / seconds : 0; }
};

// Runs the passes. `cancel` (may be null) stops between windows of batches.
Result<ReadPassResult> runReadPass(const NdArray &array, const ReadPassOptions &options,
                                   const std::atomic<bool> *cancel = nullptr);

// The hash runReadPass sums with `verify`: 64-bit FNV-1a of the row's bytes mixed with
// nothing else, so that any order of the same rows gives the same sum.
std::uint64_t rowHash(const std::byte *row, std::size_t bytes);

// Fisher–Yates permutation of [0, n) from a 64-bit seed (splitmix64 stream): the same for a
// given (n, seed) on every machine.
std::vector<std::uint64_t> seededPermutation(std::uint64_t n, std::uint64_t seed);

} // namespace sluice
