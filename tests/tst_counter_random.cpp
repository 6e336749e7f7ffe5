// The one counter-based random generator (util/counter_random.h) against independent values:
// SplitMix64's published sequence for seed 0 (Vigna's splitmix64.c), and the other mixers'
// values computed by a separate implementation of their formulas (Python integers, written
// from the formulas each stream used before they met in this header), so that every stream
// users depend on (shuffle orders, initial weights, Dropout masks, `sluice gen` data) is pinned
// bit for bit.
#include "util/counter_random.h"

#include <QtTest>

#include <cstdint>

using namespace sluice;

class TestCounterRandom : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void splitMix64IsThePublishedSequence()
    {
        random::SplitMix64 rng(0);
        QCOMPARE(rng.next(), 0xe220a8397b1dcdafull);
        QCOMPARE(rng.next(), 0x6e789e6aa1b965f4ull);
        QCOMPARE(rng.next(), 0x06c45d188009454full);
        QCOMPARE(rng.state(), 3 * random::kGolden);
        // The value at a counter is what a generator seeded there gives first.
        random::SplitMix64 at(12345);
        QCOMPARE(random::splitMixAt(12345), at.next());
        static_assert(random::splitMixAt(0) == 0xe220a8397b1dcdafull, "usable at compile time");
    }

    void theMixersKeepTheirValues()
    {
        QCOMPARE(random::mixHash(42, 7), 0x4cdb82aa233d0058ull);
        QCOMPARE(random::hash3(1, 2, 3), 0x3a2fc1f28c7c8f93ull);
        QCOMPARE(random::combine(5, 1), 0x0a507dda9b4a30d7ull);
        QCOMPARE(random::draw(7, 3, 1000), 0x3294d184500c3a8cull);
        QCOMPARE(random::murmurFinal(1), 0xb456bcfc34c2cb2cull);
        QVERIFY(random::mixHash(42, 7) != random::mixHash(7, 42)); // the order of the words matters
    }

    void belowIsLemiresMultiplyShift()
    {
        random::SplitMix64 rng(12345);
        QCOMPARE(rng.below(1000), std::uint64_t(133)); // 0x22118258a9d111a0 * 1000 >> 64
        random::SplitMix64 many(9);
        for (int i = 0; i < 10000; ++i)
            QVERIFY(many.below(7) < 7);
        QCOMPARE(random::SplitMix64(1).below(1), std::uint64_t(0));
    }

    void unitIntervalIsHalfOpen()
    {
        QCOMPARE(random::unitInterval(0), 0.0);
        QVERIFY(random::unitInterval(~std::uint64_t(0)) < 1.0);
        QCOMPARE(random::unitInterval(std::uint64_t(1) << 63), 0.5);
    }
};

QTEST_MAIN(TestCounterRandom)
#include "tst_counter_random.moc"
