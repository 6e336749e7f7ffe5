#include "pipeline/profile/autotuner.h"

#include <algorithm>
#include <cmath>

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

        s->tuneStarvedPermille.store(int(std::lround(std::clamp(starved, 0.0, 1.0) * 1000)));
        s->tuneFullPermille.store(int(std::lround(std::clamp(full, 0.0, 1.0) * 1000)));
        if (s->tunesParallelism) {
            const int p = std::max(1, s->parallelism.load());
            const double perTask = busyShare / p;
            s->tuneBusyPerTaskPermille.store(int(std::lround(std::clamp(perTask, 0.0, 1.0) * 1000)));
            TuneDecision decision = TuneDecision::Kept;
            if (starved > 0.02 && perTask > 0.4 && tunedParallelism < m_cpuBudget && p < m_cpuBudget) {
                s->parallelism.store(p + 1);
                s->capacity.store(std::max(s->capacity.load(), p + 1));
                ++tunedParallelism;
                decision = TuneDecision::Raised;
            } else if (starved > 0.02 && perTask > 0.4) {
                decision = TuneDecision::AtCpuBudget;
            } else if (starved < 0.005 && perTask < 0.25 && p > 1 && produced > 0) {
                s->parallelism.store(p - 1);
                --tunedParallelism;
                decision = TuneDecision::Lowered;
            }
            s->parallelismDecision.store(int(decision));
        }
        if (s->tunesBuffer) {
            TuneDecision decision = TuneDecision::Kept;
            if (starved > 0.02 && full > 0.01) {
                const int capacity = std::max(1, s->capacity.load());
                const int grown = std::min(1024, capacity + std::max(1, capacity / 2));
                const std::uint64_t extra = std::uint64_t(elementBytes * (grown - capacity));
                if (bufferedBytes + extra <= m_ramBudget) {
                    s->capacity.store(grown);
                    bufferedBytes += extra;
                    decision = TuneDecision::Raised;
                } else {
                    decision = TuneDecision::AtRamBudget;
                }
            }
            s->bufferDecision.store(int(decision));
        }
    }
}

std::string autotuneReason(const StageStats &stats, const std::string &param, int value)
{
    const bool buffer = param == "buffer_size";
    const auto decision = TuneDecision(buffer ? stats.bufferDecision.load() : stats.parallelismDecision.load());
    auto percent = [](int permille) { return std::to_string((permille + 5) / 10) + "%"; };
    const std::string starved = percent(stats.tuneStarvedPermille.load());
    const std::string at = std::to_string(value);
    if (buffer) {
        const std::string full = percent(stats.tuneFullPermille.load());
        switch (decision) {
        case TuneDecision::None:
            return "starts at " + at + "; grown while the consumer finds it empty although it also fills at times";
        case TuneDecision::Raised:
            return "grown to " + at + ": its consumer found it empty " + starved + " of the time although it was full " + full +
                   " of the time (a bursty producer, which a deeper buffer evens out)";
        case TuneDecision::AtRamBudget:
            return "kept at " + at + ": a deeper buffer would help, but the buffers would pass the RAM budget";
        default:
            return "kept at " + at + ": its consumer found it empty " + starved + " of the time and it was full " + full +
                   (stats.tuneStarvedPermille.load() > 20 ? " (never full: its producer is simply slower, a deeper buffer would not help)"
                                                          : " (deep enough)");
        }
    }
    const std::string busy = percent(stats.tuneBusyPerTaskPermille.load());
    switch (decision) {
    case TuneDecision::None:
        return "starts at " + at + " (the CPU budget); tuned while the pipeline runs";
    case TuneDecision::Raised:
        return "raised to " + at + ": its consumer waited " + starved + " of the time while each task was busy " + busy;
    case TuneDecision::Lowered:
        return "lowered to " + at + ": its consumer never waited and each task was busy only " + busy;
    case TuneDecision::AtCpuBudget:
        return "kept at " + at + ": its consumer waited " + starved + " of the time, but the AUTOTUNE'd stages use the whole CPU budget";
    default:
        return "kept at " + at + ": its consumer waited " + starved + " of the time, each task busy " + busy;
    }
}

} // namespace sluice::pipeline
