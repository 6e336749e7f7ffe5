#include "pipeline/autotuner.h"

#include <algorithm>

namespace sluice::pipeline {

Autotuner::Autotuner(std::vector<StageStats *> stages, int cpuBudget, std::uint64_t ramBudgetBytes)
    : m_stages(std::move(stages)), m_cpuBudget(std::max(1, cpuBudget)), m_ramBudget(ramBudgetBytes)
{
}

void Autotuner::step(std::int64_t nowNanoseconds)
{
    const std::int64_t now = nowNanoseconds;
    if (m_last == 0) {
        m_last = now;
        for (StageStats *s : m_stages)
            m_seen[s] = {s->busyNs.load() + s->offloadedNs.load(), s->waitInputNs.load(), s->waitConsumerNs.load(), s->elements.load(), s->bytes.load()};
        return;
    }
    const std::int64_t window = now - m_last;
    if (window < kIntervalNs)
        return;
    m_last = now;

    int tunedParallelism = 0;
    std::uint64_t bufferedBytes = 0;
    for (StageStats *s : m_stages) {
        if (s->tunesParallelism)
            tunedParallelism += s->parallelism.load();
        const std::uint64_t e = s->elements.load();
        const double avg = e ? double(s->bytes.load()) / double(e) : 0;
        if (s->async)
            bufferedBytes += std::uint64_t(avg * std::max(1, s->capacity.load()));
    }

    for (StageStats *s : m_stages) {
        Seen current{s->busyNs.load() + s->offloadedNs.load(), s->waitInputNs.load(), s->waitConsumerNs.load(), s->elements.load(), s->bytes.load()};
        Seen &before = m_seen[s];
        const double busyShare = double(current.busy - before.busy) / double(window);
        const double starved = double(current.waitInput - before.waitInput) / double(window);
        const double full = double(current.waitConsumer - before.waitConsumer) / double(window);
        const std::uint64_t produced = current.elements - before.elements;
        const double elementBytes = current.elements ? double(current.bytes) / double(current.elements) : 0;
        before = current;

        if (s->tunesParallelism) {
            const int p = std::max(1, s->parallelism.load());
            const double perTask = busyShare / p;
            if (starved > 0.02 && perTask > 0.4 && tunedParallelism < m_cpuBudget && p < m_cpuBudget) {
                s->parallelism.store(p + 1);
                s->capacity.store(std::max(s->capacity.load(), p + 1));
                ++tunedParallelism;
            } else if (starved < 0.005 && perTask < 0.25 && p > 1 && produced > 0) {
                s->parallelism.store(p - 1);
                --tunedParallelism;
            }
        }
        if (s->tunesBuffer && starved > 0.02 && full > 0.01) {
            const int capacity = std::max(1, s->capacity.load());
            const int grown = std::min(1024, capacity + std::max(1, capacity / 2));
            const std::uint64_t extra = std::uint64_t(elementBytes * (grown - capacity));
            if (bufferedBytes + extra <= m_ramBudget) {
                s->capacity.store(grown);
                bufferedBytes += extra;
            }
        }
    }
}

} // namespace sluice::pipeline
