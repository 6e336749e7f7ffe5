// shuffle: tf.data's buffered shuffle for any input; global_shuffle: a fresh permutation of a
// random-access input every pass, with no buffer to fill.
#include "pipeline/engine/build_context.h"
#include "pipeline/engine/op_registry.h"
#include "pipeline/engine/random_access.h"
#include "util/counter_random.h"

#include <atomic>

namespace sluice::pipeline {
namespace {

using random::combine;

// tf.data's algorithm: fill a buffer with the first buffer_size elements; then each output is a
// uniformly chosen buffer slot, refilled with the next input element; at the end of the input
// the rest of the buffer is drained in random order.
class ShuffleIterator final : public Iterator
{
public:
    ShuffleIterator(std::unique_ptr<Iterator> input, std::uint64_t bufferSize, std::uint64_t seed, StageStats *stats)
        : m_input(std::move(input)), m_bufferSize(bufferSize), m_rng(seed), m_stats(stats)
    {
    }
    ~ShuffleIterator() override
    {
        // A pass left while its buffer filled (a restart, a cancel): its fill time ends here.
        if (m_stats && !m_filled)
            if (const std::int64_t since = m_stats->fillingSinceNs.exchange(0, std::memory_order_relaxed))
                m_stats->add(m_stats->fillNs, nowNs() - since);
    }
    Result<Poll> next(Element &out) override
    {
        // The first fill of a pass is charged to the stage: everything downstream waits for it.
        if (m_stats && !m_filled && m_stats->fillingSinceNs.load(std::memory_order_relaxed) == 0)
            m_stats->fillingSinceNs.store(nowNs(), std::memory_order_relaxed);
        while (!m_inputEnded && m_buffer.size() < m_bufferSize) {
            Element e;
            auto r = m_input->next(e);
            if (!r.ok() || *r == Poll::Pending)
                return r;
            if (*r == Poll::End)
                m_inputEnded = true;
            else
                m_buffer.push_back(std::move(e));
            if (m_stats)
                m_stats->shuffleBuffered.store(m_buffer.size(), std::memory_order_relaxed);
        }
        if (!m_filled) {
            m_filled = true;
            if (m_stats)
                m_stats->add(m_stats->fillNs, nowNs() - m_stats->fillingSinceNs.exchange(0, std::memory_order_relaxed));
        }
        if (m_buffer.empty())
            return Poll::End;
        const std::uint64_t pick = m_rng.below(m_buffer.size());
        out = std::move(m_buffer[pick]);
        if (pick != m_buffer.size() - 1)
            m_buffer[pick] = std::move(m_buffer.back());
        m_buffer.pop_back();
        if (m_stats)
            m_stats->shuffleBuffered.store(m_buffer.size(), std::memory_order_relaxed);
        return Poll::Ready;
    }

private:
    std::unique_ptr<Iterator> m_input;
    std::uint64_t m_bufferSize;
    random::SplitMix64 m_rng;
    StageStats *m_stats;
    bool m_filled = false; // this pass's first fill is done
    bool m_inputEnded = false;
    std::vector<Element> m_buffer;
};

class ShuffleDataset final : public Dataset
{
public:
    ShuffleDataset(StageStats *stats, DatasetPtr input, std::uint64_t bufferSize, std::uint64_t seed, bool reshuffle,
                   std::shared_ptr<std::atomic<std::uint64_t>> passes)
        : Dataset(input->spec(), stats), m_input(std::move(input)), m_bufferSize(bufferSize), m_seed(seed), m_reshuffle(reshuffle),
          m_passes(std::move(passes))
    {
    }
    std::int64_t cardinality() const override { return m_input->cardinality(); }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        const std::uint64_t pass = m_passes->fetch_add(1);
        return std::make_unique<ShuffleIterator>(m_input->makeIterator(context), m_bufferSize, combine(m_seed, m_reshuffle ? pass : 0),
                                                 stats());
    }

private:
    DatasetPtr m_input;
    std::uint64_t m_bufferSize, m_seed;
    bool m_reshuffle;
    std::shared_ptr<std::atomic<std::uint64_t>> m_passes;
};

std::shared_ptr<Dataset> buildShuffle(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::int64_t bufferSize = params.integer("buffer_size", std::nullopt, 1);
    std::optional<std::int64_t> seed;
    if (params.has("seed"))
        seed = params.integer("seed", std::nullopt, INT64_MIN);
    const bool reshuffle = params.boolean("reshuffle_each_iteration", true);
    StageStats *stats = context.statsFor(params.node());
    stats->shuffleBufferSize = std::uint64_t(bufferSize);
    return std::make_shared<ShuffleDataset>(stats, inputs.at(0), std::uint64_t(bufferSize),
                                            context.seedFor(params.node(), seed), reshuffle, context.newPassCounter());
}

class PermutedMap final : public IndexMap
{
public:
    PermutedMap(std::shared_ptr<const IndexMap> inner, std::uint64_t seed) : m_inner(std::move(inner)), m_permutation(m_inner->size(), seed) {}
    std::uint64_t size() const override { return m_inner->size(); }
    std::uint64_t row(std::uint64_t p) const override { return m_inner->row(m_permutation(p)); }
    bool inOrder() const override { return false; }

private:
    std::shared_ptr<const IndexMap> m_inner;
    FeistelPermutation m_permutation;
};

std::shared_ptr<Dataset> buildGlobalShuffle(BuildContext &context, Params &params, const Inputs &inputs)
{
    std::optional<std::int64_t> ownSeed;
    if (params.has("seed"))
        ownSeed = params.integer("seed", std::nullopt, INT64_MIN);
    const bool reshuffle = params.boolean("reshuffle_each_iteration", true);
    DatasetPtr input = inputs.at(0);
    if (!input->randomAccess())
        params.fail("", "needs a random-access input (from_npy, from_npz, range, or take / skip / shard / global_shuffle over "
                        "them) directly before it; use shuffle(buffer_size) for streams such as TFRecord or CSV");
    const std::uint64_t seed = context.seedFor(params.node(), ownSeed);
    auto passes = context.newPassCounter();
    return std::make_shared<DerivedAccessDataset>(input, context.statsFor(params.node()),
                                                  [seed, reshuffle, passes](std::shared_ptr<const IndexMap> inner, bool newPass) {
                                                      const std::uint64_t pass = newPass ? passes->fetch_add(1) : 0;
                                                      return std::make_shared<PermutedMap>(std::move(inner), combine(seed, reshuffle ? pass : 0));
                                                  });
}

} // namespace

void registerShuffleOps(std::vector<OpInfo> &ops)
{
    ops.push_back({"shuffle", "transformations",
                   "Buffered shuffle, as tf.data shuffle: each output is drawn at random from a buffer of buffer_size elements.",
                   {{"buffer_size", "int", "", "elements in the shuffle buffer (the dataset size gives a full shuffle)", true},
                    {"seed", "int", "", "random seed (absent: from the pipeline seed, else random)"},
                    {"reshuffle_each_iteration", "bool", "true", "a different order on each pass (repeat, epochs)"}},
                   1, 1, buildShuffle});
    ops.push_back({"global_shuffle", "transformations",
                   "A new pseudo-random permutation of a random-access input (mapped arrays, range) on every pass, with no "
                   "buffer to fill (a seeded Fisher-Yates table up to 65,536 rows, a Feistel bijection in O(1) memory above), as "
                   "tf.data's global_shuffle. Batches after it are still gathered straight from the mapping.",
                   {{"seed", "int", "", "random seed (absent: from the pipeline seed, else random)"},
                    {"reshuffle_each_iteration", "bool", "true", "a fresh permutation on each pass"}},
                   1, 1, buildGlobalShuffle});
}

} // namespace sluice::pipeline
