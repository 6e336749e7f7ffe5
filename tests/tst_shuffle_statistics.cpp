// global_shuffle's permutations, tested as statistics over many seeds (the seeds are fixed, so the
// outcome is too): every element exactly once per pass; each element equally likely at each
// position (chi-square); no correlation between neighbours, nor between the orders of
// consecutive seeds (sluice.torch's set_epoch and each Keras epoch use seed + epoch). The family
// (random_access.h): a seeded Fisher–Yates table up to 65,536 rows, a 6-round Feistel network
// keyed from the seed above; pseudo-random, not a uniform draw from all n! orders
// (docs/reference.md says so). Small n is where a Feistel network alone failed these tests.
#include "pipeline/engine/random_access.h"
#include "support/pipeline_test_support.h"

#include <QtTest>

#include <cmath>
#include <numeric>

using namespace sluice;
using namespace sluice::test;

namespace {

std::vector<std::uint64_t> permutation(std::uint64_t n, std::uint64_t seed)
{
    const pipeline::FeistelPermutation p(n, seed);
    std::vector<std::uint64_t> order(n);
    for (std::uint64_t i = 0; i < n; ++i)
        order[i] = p(i);
    return order;
}

double chiSquare(const std::vector<std::vector<double>> &counts, double expected)
{
    double chi = 0;
    for (const auto &row : counts)
        for (double c : row)
            chi += (c - expected) * (c - expected) / expected;
    return chi;
}

// The chi-square value a test with `dof` degrees of freedom exceeds with probability 0.001
// (Wilson–Hilferty), so a fair permutation family fails it once in a thousand seeds' sets.
double chiSquareCritical(double dof)
{
    const double z = 3.0902; // the normal's 0.999 quantile
    const double t = 2.0 / (9.0 * dof);
    return dof * std::pow(1 - t + z * std::sqrt(t), 3);
}

double correlation(const std::vector<double> &a, const std::vector<double> &b)
{
    const double n = double(a.size());
    const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    return sab / std::sqrt(saa * sbb);
}

} // namespace

class TestShuffleStatistics : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyElementOncePerPass_data()
    {
        QTest::addColumn<qulonglong>("n");
        for (qulonglong n : {1ULL, 2ULL, 3ULL, 10ULL, 17ULL, 1000ULL, 65537ULL})
            QTest::newRow(qPrintable(QString::number(n))) << n;
    }
    void everyElementOncePerPass()
    {
        QFETCH(qulonglong, n);
        for (std::uint64_t seed : {0ULL, 1ULL, 0xFFFFFFFFFFFFFFFFULL}) {
            auto order = permutation(n, seed);
            std::sort(order.begin(), order.end());
            for (std::uint64_t i = 0; i < n; ++i)
                QCOMPARE(order[i], i);
        }
    }

    // Small n, element by position: a 10×10 (and 37×37) table over many seeds.
    void positionsAreUniform_data()
    {
        QTest::addColumn<qulonglong>("n");
        QTest::addColumn<int>("seeds");
        QTest::newRow("10") << 10ULL << 20000;
        QTest::newRow("37") << 37ULL << 20000;
    }
    void positionsAreUniform()
    {
        QFETCH(qulonglong, n);
        QFETCH(int, seeds);
        std::vector<std::vector<double>> counts(n, std::vector<double>(n, 0));
        for (int s = 0; s < seeds; ++s) {
            const auto order = permutation(n, std::uint64_t(s));
            for (std::uint64_t position = 0; position < n; ++position)
                counts[order[position]][position] += 1;
        }
        // Each row and column sums to `seeds`: (n-1)² degrees of freedom.
        const double chi = chiSquare(counts, double(seeds) / double(n)), critical = chiSquareCritical(double((n - 1) * (n - 1)));
        qInfo("n %llu: chi-square %.1f, critical %.1f (p = 0.001)", n, chi, critical);
        QVERIFY2(chi < critical, qPrintable(QString("chi-square %1 over %2").arg(chi).arg(critical)));
    }

    // Large n (the Feistel network, above the table's size): which share of the elements lands in
    // which share of the positions, in tenths and in fiftieths.
    void positionsAreUniformInBuckets_data()
    {
        QTest::addColumn<qulonglong>("n");
        QTest::addColumn<int>("buckets");
        QTest::newRow("100003 in tenths") << 100003ULL << 10; // prime: the domain (2^18) is walked back into range
        QTest::newRow("70001 in fiftieths") << 70001ULL << 50; // just above the table's size
        QTest::newRow("1048576 in fiftieths") << 1048576ULL << 50; // a power of four: no walking
    }
    void positionsAreUniformInBuckets()
    {
        QFETCH(qulonglong, n);
        QFETCH(int, buckets);
        QVERIFY(n > pipeline::FeistelPermutation::kTableRows);
        const int seeds = 40;
        std::vector<std::vector<double>> counts(buckets, std::vector<double>(buckets, 0));
        for (int s = 0; s < seeds; ++s) {
            const auto order = permutation(n, 1000 + std::uint64_t(s));
            for (std::uint64_t position = 0; position < n; ++position)
                counts[order[position] * buckets / n][position * buckets / n] += 1;
        }
        const double cells = double(buckets) * buckets;
        const double chi = chiSquare(counts, double(n) * seeds / cells), critical = chiSquareCritical((buckets - 1.0) * (buckets - 1.0));
        qInfo("n %llu in %d buckets: chi-square %.1f, critical %.1f", n, buckets, chi, critical);
        QVERIFY(chi < critical);
    }

    void neighboursAndConsecutiveSeedsAreUncorrelated()
    {
        const std::uint64_t n = 1000;
        const int seeds = 200;
        std::vector<double> here, next, thisSeed, nextSeed;
        for (int s = 0; s < seeds; ++s) {
            const auto order = permutation(n, std::uint64_t(s));
            const auto following = permutation(n, std::uint64_t(s) + 1);
            for (std::uint64_t i = 0; i + 1 < n; ++i) {
                here.push_back(double(order[i]));
                next.push_back(double(order[i + 1]));
            }
            for (std::uint64_t i = 0; i < n; ++i) {
                thisSeed.push_back(double(order[i]));
                nextSeed.push_back(double(following[i]));
            }
        }
        // About 200k pairs: a standard error near 0.0022 around -1/(n-1) for neighbours, 0 across seeds.
        const double neighbours = correlation(here, next), acrossSeeds = correlation(thisSeed, nextSeed);
        qInfo("neighbour correlation %.4f, seed and seed + 1: %.4f", neighbours, acrossSeeds);
        QVERIFY(std::abs(neighbours + 1.0 / double(n - 1)) < 0.01);
        QVERIFY(std::abs(acrossSeeds) < 0.01);
        // Where an element goes under seed s says nothing of where it goes under s + 1: the share
        // of elements that keep their position is about 1/n.
        int kept = 0;
        for (std::size_t i = 0; i < thisSeed.size(); ++i)
            kept += thisSeed[i] == nextSeed[i] ? 1 : 0;
        QVERIFY2(kept < 3 * seeds, qPrintable(QString::number(kept))); // expected: seeds (one per permutation)
    }

    // Through the pipeline: each pass every row once, and a new order each pass.
    void thePipelineDrawsANewPermutationEachPass()
    {
        auto p = buildPipeline(chain({op("src", "range", {{"stop", 500}}), op("shuf", "global_shuffle", {{"seed", 9}})}));
        QVERIFY(p);
        const auto first = collect(*p).firstValues();
        p->restart();
        const auto second = collect(*p).firstValues();
        QCOMPARE(sorted(first), iota(0, 500));
        QCOMPARE(sorted(second), iota(0, 500));
        QVERIFY(first != second);
    }
};

QTEST_MAIN(TestShuffleStatistics)
#include "tst_shuffle_statistics.moc"
