#include "pipeline/engine/random_access.h"

#include "io/storage/read_pass.h"
#include "pipeline/storage/pass_storage.h"
#include "util/counter_random.h"

namespace sluice::pipeline {
namespace {

class RandomAccessIterator final : public Iterator
{
public:
    RandomAccessIterator(const RandomAccess &access, StageStats *own, std::vector<StageStats *> chain)
        : m_rows(access.rows()), m_pass(access.openPass()), m_chain(std::move(chain))
    {
        StageStats *source = m_chain.empty() ? own : m_chain.back();
        if (source && source->readsMappedRows)
            m_storage = PassStorage::open(m_rows, m_pass, source->storage, kChunk);
    }

    ~RandomAccessIterator() override
    {
        if (m_storage && m_position > m_chunkBegin)
            m_storage->afterRead(m_chunkBegin, m_position, nullptr, nullptr);
    }

    Result<Poll> next(Element &out) override
    {
        // Rows its source skipped (from_files' on_error: skip) come back without tensors.
        for (;;) {
            auto r = nextRow(out);
            if (!r.ok() || *r != Poll::Ready || !out.tensors.empty())
                return r;
        }
    }

private:
    Result<Poll> nextRow(Element &out)
    {
        if (m_position >= m_pass->size())
            return Poll::End;
        // Elements are views read later by other stages: the pass's storage is told about them
        // a chunk at a time (read-ahead before, release after), never per element.
        if (m_storage && m_position % kChunk == 0) {
            if (m_position > m_chunkBegin)
                m_storage->afterRead(m_chunkBegin, m_position, nullptr, nullptr);
            m_chunkBegin = m_position;
            m_storage->beforeRead(m_position, std::min(m_pass->size(), m_position + kChunk));
        }
        auto element = m_rows.element(m_pass->row(m_position++));
        if (!element.ok())
            return element.error();
        out = std::move(element).value();
        if (out.tensors.empty())
            return Poll::Ready; // skipped: not counted
        // The rows are read here on behalf of the whole chain (source, shuffle, shard…).
        const std::uint64_t bytes = out.nbytes();
        for (StageStats *s : m_chain) {
            s->elements.fetch_add(1, std::memory_order_relaxed);
            s->bytes.fetch_add(bytes, std::memory_order_relaxed);
        }
        return Poll::Ready;
    }

private:
    const RowSource &m_rows;
    std::shared_ptr<const IndexMap> m_pass;
    std::vector<StageStats *> m_chain;
    std::uint64_t m_position = 0;
    static constexpr std::uint64_t kChunk = 256;
    std::shared_ptr<PassStorage> m_storage;
    std::uint64_t m_chunkBegin = 0;
};

using random::splitMixAt;

} // namespace

std::shared_ptr<const IndexMap> RowSourceDataset::openPass(bool) const
{
    struct Identity final : IndexMap
    {
        std::uint64_t rows;
        explicit Identity(std::uint64_t count) : rows(count) {}
        std::uint64_t size() const override { return rows; }
        std::uint64_t row(std::uint64_t p) const override { return p; }
    };
    return std::make_shared<Identity>(m_rows->rowCount());
}

std::int64_t RandomAccessDataset::cardinality() const
{
    return std::int64_t(openPass(false)->size());
}

std::unique_ptr<Iterator> RandomAccessDataset::makeRawIterator(const IteratorContext &) const
{
    return std::make_unique<RandomAccessIterator>(*this, stats(), chainBelow(stats()));
}

FeistelPermutation::FeistelPermutation(std::uint64_t n, std::uint64_t seed) : m_n(n)
{
    if (n <= kTableRows) {
        const std::vector<std::uint64_t> order = seededPermutation(n, seed);
        m_table.assign(order.begin(), order.end());
        return;
    }
    unsigned bits = 2;
    while (bits < 64 && (std::uint64_t(1) << bits) < n)
        ++bits;
    // An unbalanced network on the next power of two (not the next even one): the domain is
    // under 2n, so cycle walking takes under two passes on average instead of under four.
    m_leftBits = bits / 2;
    m_rightBits = bits - m_leftBits;
    m_leftMask = (std::uint64_t(1) << m_leftBits) - 1;
    m_rightMask = (std::uint64_t(1) << m_rightBits) - 1;
    std::uint64_t s = seed;
    for (auto &k : m_keys)
        k = s = splitMixAt(s);
}

std::uint64_t FeistelPermutation::operator()(std::uint64_t i) const
{
    if (!m_table.empty())
        return m_table[i];
    // Cycle walking: the network permutes [0, 2^bits); re-apply until the value lands in [0, n).
    // Rounds alternate which half they change, each by a keyed hash of the other half: every
    // round is invertible whatever the halves' widths, and each half is changed kRounds / 2
    // times, as in a balanced network of kRounds rounds.
    std::uint64_t x = i;
    do {
        std::uint64_t left = x >> m_rightBits, right = x & m_rightMask;
        for (int r = 0; r < kRounds; r += 2) {
            right ^= splitMixAt(left ^ m_keys[r]) & m_rightMask;
            left ^= splitMixAt(right ^ m_keys[r + 1]) & m_leftMask;
        }
        x = (left << m_rightBits) | right;
    } while (x >= m_n);
    return x;
}

} // namespace sluice::pipeline
