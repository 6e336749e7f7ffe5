#include "train/gradient_reducer.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>

namespace sluice::train {

void sumLocalReplicas(std::span<std::vector<float> *const> buffers)
{
    if (buffers.size() < 2)
        return;
    const std::size_t n = buffers[0]->size();
    constexpr std::size_t chunk = 1 << 15;
    oneapi::tbb::parallel_for(std::size_t(0), (n + chunk - 1) / chunk, [&](std::size_t c) {
        const std::size_t begin = c * chunk, end = std::min(n, begin + chunk);
        float *dst = buffers[0]->data();
        // Replica order is fixed: the sum does not depend on which thread runs which chunk.
        for (std::size_t r = 1; r < buffers.size(); ++r) {
            const float *src = buffers[r]->data();
            for (std::size_t i = begin; i < end; ++i)
                dst[i] += src[i];
        }
    });
}

namespace {

class InProcessReducer final : public GradientReducer
{
public:
    std::string name() const override { return "in-process"; }
    Status sum(std::span<std::vector<float> *const> buffers) override
    {
        sumLocalReplicas(buffers);
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
