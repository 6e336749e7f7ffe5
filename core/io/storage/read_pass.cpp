#include "io/storage/read_pass.h"

#include "io/storage/row_gather.h"
#include "telemetry/process_memory.h"
#include "util/counter_random.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace sluice {
namespace {

constexpr std::uint64_t kSequentialWindowBytes = 64u << 20;
constexpr std::uint64_t kShuffledWindowBatches = 64;


} // namespace

std::uint64_t rowHash(const std::byte *row, std::size_t bytes)
{
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::size_t i = 0; i < bytes; ++i)
        h = (h ^ std::to_integer<std::uint64_t>(row[i])) * 0x100000001b3ull;
    return h;
}

std::vector<std::uint64_t> seededPermutation(std::uint64_t n, std::uint64_t seed)
{
    std::vector<std::uint64_t> p(n);
    for (std::uint64_t i = 0; i < n; ++i)
        p[i] = i;
    random::SplitMix64 rng(seed);
    for (std::uint64_t i = n; i > 1; --i) {
        const std::uint64_t j = rng.below(i);
        std::swap(p[i - 1], p[j]);
    }
    return p;
}

Result<ReadPassResult> runReadPass(const NdArray &array, const ReadPassOptions &options, const std::atomic<bool> *cancel)
{
    if (!array.isRowContiguous())
        return Error::invalid(array.name(), "Fortran-order array: rows are not contiguous, convert it to C order first");
    const std::uint64_t rows = array.rowCount();
    const std::uint64_t rowBytes = array.rowBytes();
    if (array.ndim() == 0 || rows == 0 || rowBytes == 0)
        return Error::invalid(array.name(), "array has no rows to read");
    if (options.batchRows == 0)
        return Error::invalid("--batch", "batch size must be at least 1");

    const bool shuffled = options.order == ReadPassOptions::Order::Shuffled;
    const std::uint64_t batchRows = std::min(options.batchRows, rows);
    const std::uint64_t batchBytes = batchRows * rowBytes;
    const std::uint64_t batchesPerPass = (rows + batchRows - 1) / batchRows;
    const std::uint64_t windowBatches =
        shuffled ? kShuffledWindowBatches : std::max<std::uint64_t>(1, kSequentialWindowBytes / batchBytes);
    const MappedFile *mapping = array.mapping();
    const std::size_t dataOffset = mapping ? std::size_t(array.data().data() - mapping->bytes().data()) : 0;
    std::uint64_t budget = options.residentBudgetBytes;
    if (shuffled && budget == 0)
        budget = physicalMemoryBytes() / 4;

    tbb::task_arena arena(options.threads > 0 ? options.threads : tbb::task_arena::automatic);
    tbb::enumerable_thread_specific<std::vector<std::byte>> buffers([&] { return std::vector<std::byte>(batchBytes); });
    std::atomic<std::uint64_t> checksum{0};
    if (mapping)
        mapping->adviseAccess(shuffled ? MappedFile::Access::Random : MappedFile::Access::Sequential);
    resetPeakRss();

    ReadPassResult result;
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    // Shuffled passes watch the resident set itself, not the bytes gathered: each random row
    // faults in whole pages (and the kernel maps neighbouring pages around a fault), so
    // resident memory grows many times faster than the rows copied.
    const std::uint64_t rssAtStart = currentRssBytes();
    bool stop = false;
    for (std::uint64_t pass = 0; !stop; ++pass) {
        const std::vector<std::uint64_t> order =
            shuffled ? seededPermutation(rows, options.seed ^ (pass * 0xd1b54a32d192ed03ull)) : std::vector<std::uint64_t>{};
        for (std::uint64_t w = 0; w < batchesPerPass && !stop; w += windowBatches) {
            const std::uint64_t wEnd = std::min(batchesPerPass, w + windowBatches);
            const std::uint64_t firstRow = w * batchRows, endRow = std::min(rows, wEnd * batchRows);
            if (mapping && !shuffled) // start reading the next window while this one is copied
                mapping->willNeed(dataOffset + endRow * rowBytes, kSequentialWindowBytes);
            arena.execute([&] {
                tbb::parallel_for(tbb::blocked_range<std::uint64_t>(w, wEnd, 1), [&](const tbb::blocked_range<std::uint64_t> &r) {
                    std::vector<std::byte> &buffer = buffers.local();
                    for (std::uint64_t b = r.begin(); b < r.end(); ++b) {
                        const std::uint64_t begin = b * batchRows, end = std::min(rows, begin + batchRows);
                        if (shuffled)
                            gatherRows(array, std::span(order).subspan(begin, end - begin), buffer.data());
                        else
                            copyRows(array, begin, end, buffer.data());
                        if (options.verify) {
                            std::uint64_t sum = 0;
                            for (std::uint64_t i = 0; i < end - begin; ++i)
                                sum += rowHash(buffer.data() + i * rowBytes, rowBytes);
                            checksum.fetch_add(sum, std::memory_order_relaxed);
                        }
                    }
                });
            });
            const std::uint64_t windowRows = endRow - firstRow;
            result.samples += windowRows;
            result.bytes += windowRows * rowBytes;
            result.batches += wEnd - w;
            result.passes = double(pass) + double(endRow) / double(rows);
            if (mapping && !shuffled) {
                mapping->release(dataOffset + firstRow * rowBytes, windowRows * rowBytes);
            } else if (mapping && mapping->size() > budget && currentRssBytes() > rssAtStart + budget) {
                mapping->release(0, mapping->size());
            }
            if ((cancel && cancel->load(std::memory_order_relaxed)) || (options.passes == 0 && elapsed() >= options.seconds))
                stop = true;
        }
        if (options.passes > 0 && pass + 1 >= options.passes)
            stop = true;
    }
    result.seconds = elapsed();
    result.checksum = checksum.load();
    result.peakRssBytes = peakRssBytes();
    return result;
}

} // namespace sluice
