// Streaming statistics against numpy's own answers (fixtures.json), NaN handling, exact
// integer extremes, and independence from the thread count.
#include "io/array_stats.h"
#include "io/formats/npy_file.h"
#include "io/writers/npy_writer.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace sluice;
using sluice::test::fixture;
using sluice::test::manifest;

class TestArrayStats : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void matchesNumpy_data()
    {
        QTest::addColumn<QString>("name");
        for (const auto &[name, entry] : manifest().items())
            if (name.ends_with(".npy"))
                QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
    void matchesNumpy()
    {
        QFETCH(QString, name);
        const auto &expected = manifest()[name.toStdString()]["stats"];
        auto a = openNpy(fixture(name.toStdString()));
        QVERIFY(a.ok());
        const ArrayStats s = computeStats(*a, 2);
        QCOMPARE(s.nanCount, expected["nan_count"].get<std::uint64_t>());
        // numpy sums pairwise, we sum in chunks: equal to float64 rounding on these sizes.
        // Summation order differs from numpy's pairwise sum, so the tolerance scales with the
        // largest term (int64 extremes cancel differently in any order).
        const double largest = expected["min"].is_null() ? 1.0
                                                          : std::max({1.0, std::abs(test::jsonNumber(expected["min"])),
                                                                      std::abs(test::jsonNumber(expected["max"]))});
        auto close = [&](double got, double want) {
            return !std::isfinite(want) ? got == want : std::abs(got - want) <= 1e-12 * std::max(largest, std::abs(want));
        };
        const double sum = test::jsonNumber(expected["sum"]);
        QVERIFY2(close(s.sum, sum), qPrintable(QString::number(s.sum, 'g', 17)));
        if (expected["mean"].is_null()) {
            QVERIFY(!s.mean.has_value());
            QVERIFY(std::holds_alternative<std::monostate>(s.min));
        } else {
            QVERIFY(s.mean.has_value());
            QVERIFY(close(*s.mean, test::jsonNumber(expected["mean"])));
            QCOMPARE(extremeAsDouble(s.min), test::jsonNumber(expected["min"]));
            QCOMPARE(extremeAsDouble(s.max), test::jsonNumber(expected["max"]));
        }
    }

    void integerExtremesAreExact()
    {
        auto a = openNpy(fixture("int64_be.npy"));
        QVERIFY(a.ok());
        const ArrayStats s = computeStats(*a);
        QCOMPARE(std::get<std::int64_t>(s.min), std::numeric_limits<std::int64_t>::min());
        QCOMPARE(std::get<std::int64_t>(s.max), std::numeric_limits<std::int64_t>::max());
        auto u = openNpy(fixture("uint64_le.npy"));
        QVERIFY(u.ok());
        QCOMPARE(std::get<std::uint64_t>(computeStats(*u).max), std::numeric_limits<std::uint64_t>::max());
    }

    void infinitiesAreExtremes()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("inf.npy").toStdString();
        auto w = NpyWriter::create(path, {DType::Float64, nativeByteOrder()}, {});
        const std::vector<double> values{INFINITY, INFINITY};
        QVERIFY(w->appendRows(std::span<const double>(values)).ok());
        QVERIFY(w->finish().ok());
        const ArrayStats s = computeStats(*openNpy(path));
        QCOMPARE(std::get<double>(s.min), double(INFINITY)); // numpy: np.nanmin([inf, inf]) == inf
        QCOMPARE(std::get<double>(s.max), double(INFINITY));
    }

    void sameResultOnOneOrTwoThreads()
    {
        // Large enough for several chunks and windows; values chosen so summation order matters.
        QTemporaryDir dir;
        const std::string path = dir.filePath("many.npy").toStdString();
        auto w = NpyWriter::create(path, {DType::Float32, nativeByteOrder()}, {});
        QVERIFY(w.ok());
        std::vector<float> values(3'000'000);
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = float(std::sin(double(i)) * 1e4 + 1e-3 * double(i % 7));
        values[12345] = NAN;
        QVERIFY(w->appendRows(std::span<const float>(values)).ok());
        QVERIFY(w->finish().ok());
        auto a = openNpy(path);
        QVERIFY(a.ok());
        const ArrayStats one = computeStats(*a, 1), two = computeStats(*a, 2);
        QCOMPARE(one.sum, two.sum); // bitwise
        QCOMPARE(one.nanCount, std::uint64_t(1));
        QCOMPARE(two.nanCount, std::uint64_t(1));
        QCOMPARE(std::get<double>(one.min), std::get<double>(two.min));
        double reference = 0;
        for (float v : values)
            if (!std::isnan(v))
                reference += v;
        QVERIFY(std::abs(one.sum - reference) <= 1e-9 * std::abs(reference) + 1e-6);
    }
};

QTEST_GUILESS_MAIN(TestArrayStats)
#include "tst_array_stats.moc"
