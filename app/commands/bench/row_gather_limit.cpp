#include "commands/bench/row_gather_limit.h"

#include "io/formats/npy_file.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

namespace sluice::commands {

Result<GatherLimit> measureRowGatherLimit(const std::string &npyPath, std::uint64_t batchRows, int threads, double seconds)
{
    auto opened = openNpy(npyPath);
    if (!opened.ok())
        return opened.error();
    const NdArray &array = *opened;
    if (!array.isRowContiguous() || array.rowCount() == 0)
        return Error::invalid(npyPath, "the row gather limit needs a non-empty C-order array");
    const std::uint64_t rows = array.rowCount(), rowBytes = array.rowBytes();
    const std::byte *base = array.data().data();

    std::vector<std::uint32_t> order(rows); // 2^32 rows is far beyond any benchmark file here
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
    const std::uint64_t batches = (rows + batchRows - 1) / batchRows;

    std::atomic<std::uint64_t> nextBatch{0}, copiedRows{0};
    std::atomic<bool> stop{false};
    auto work = [&] {
        std::vector<std::byte> buffer(batchRows * rowBytes);
        std::uint64_t mine = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            const std::uint64_t b = nextBatch.fetch_add(1, std::memory_order_relaxed) % batches;
            const std::uint64_t begin = b * batchRows, end = std::min(rows, begin + batchRows);
            std::byte *out = buffer.data();
            for (std::uint64_t i = begin; i < end; ++i, out += rowBytes)
                std::memcpy(out, base + std::uint64_t(order[i]) * rowBytes, rowBytes);
            mine += end - begin;
        }
        copiedRows.fetch_add(mine);
    };
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back(work);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto &t : pool)
        t.join();
    GatherLimit limit;
    limit.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    limit.rows = copiedRows.load();
    limit.threads = threads;
    return limit;
}

} // namespace sluice::commands
