#include "train/distribute/gradient_reducer.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <iterator>

namespace sluice::train {

void sumLocalReplicas(std::span<std::vector<float> *const> buffers, FloatRange range)
{
    if (buffers.size() < 2 || range.count == 0)
        return;
    const std::size_t n = range.count;
    constexpr std::size_t chunk = 1 << 15;
    oneapi::tbb::parallel_for(std::size_t(0), (n + chunk - 1) / chunk, [&](std::size_t c) {
        const std::size_t begin = range.offset + c * chunk, end = range.offset + std::min(n, (c + 1) * chunk);
        float *dst = buffers[0]->data();
        // Replica order is fixed: the sum does not depend on which thread runs which chunk.
        for (std::size_t r = 1; r < buffers.size(); ++r) {
            const float *src = buffers[r]->data();
            for (std::size_t i = begin; i < end; ++i)
                dst[i] += src[i];
        }
    });
}

std::vector<std::int64_t> sumLocalRows(std::span<std::vector<float> *const> buffers, std::size_t offset, std::size_t rowSize,
                                       std::span<const std::vector<std::int64_t> *const> rows)
{
    std::vector<std::int64_t> used = rows.empty() ? std::vector<std::int64_t>{} : *rows[0];
    float *dst = buffers[0]->data() + offset;
    for (std::size_t r = 1; r < buffers.size() && r < rows.size(); ++r) {
        // Replica 0's buffer is zero in rows it did not use, so adding in replica order gives
        // the same bits as the dense sum would.
        const float *src = buffers[r]->data() + offset;
        for (std::int64_t row : *rows[r]) {
            const std::size_t at = std::size_t(row) * rowSize;
            for (std::size_t k = 0; k < rowSize; ++k)
                dst[at + k] += src[at + k];
        }
        std::vector<std::int64_t> merged;
        merged.reserve(used.size() + rows[r]->size());
        std::set_union(used.begin(), used.end(), rows[r]->begin(), rows[r]->end(), std::back_inserter(merged));
        used = std::move(merged);
    }
    return used;
}

namespace {

class InProcessReducer final : public GradientReducer
{
public:
    std::string name() const override { return "in-process"; }
    Status sumRanges(std::span<std::vector<float> *const> buffers, std::span<const FloatRange> ranges) override
    {
        for (const auto &range : ranges)
            sumLocalReplicas(buffers, range);
        return Status::success();
    }
    Status sumRows(std::span<std::vector<float> *const> buffers, std::size_t offset, std::size_t rowSize,
                   std::span<const std::vector<std::int64_t> *const> rows, std::vector<std::int64_t> &used) override
    {
        used = sumLocalRows(buffers, offset, rowSize, rows);
        return Status::success();
    }
    Status sumAcrossProcesses(std::span<double>) override { return Status::success(); }
    Status broadcastFromFirst(std::span<float>) override { return Status::success(); }
};

} // namespace

std::unique_ptr<GradientReducer> makeInProcessReducer()
{
    return std::make_unique<InProcessReducer>();
}

} // namespace sluice::train
