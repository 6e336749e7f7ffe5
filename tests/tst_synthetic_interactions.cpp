// Synthetic interactions (`sluice gen interactions`): the same file from the same seed whatever the
// thread count or chunk size, columns the CSV reader parses with values in range, the structure a
// model is meant to learn (clicks and ratings follow the hidden affinity, popularity is skewed),
// and refused specs and cancelled writes that leave nothing behind.
#include "io/formats/csv_reader.h"
#include "io/synthetic/synthetic_interactions.h"
#include "support/test_support.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

using namespace sluice;

namespace {

SyntheticInteractionsSpec smallSpec(std::uint64_t rows = 3000)
{
    SyntheticInteractionsSpec s;
    s.rows = rows;
    s.users = 500;
    s.items = 100;
    s.seed = 11;
    return s;
}

// Writes the spec into a fresh folder of `dir` and returns the file's bytes ("" on failure, after
// a warning).
std::string written(const QTemporaryDir &dir, const QString &name, const SyntheticInteractionsSpec &spec, int threads,
                    std::uint64_t chunkRows = 0)
{
    const QString folder = dir.filePath(name);
    const Status s = writeSyntheticInteractions(spec, folder.toStdString(), threads, {}, nullptr, chunkRows);
    if (!s) {
        QWARN(s.error().message().c_str());
        return {};
    }
    return test::readFile((folder + "/interactions.csv").toStdString());
}

// A file's rows as the reader gives them, parsed into the generator's row type.
std::vector<Interaction> readRows(const std::string &path)
{
    std::vector<Interaction> rows;
    auto reader = CsvReader::open(path);
    if (!reader)
        return rows;
    const auto &devices = syntheticInteractionDevices();
    const auto &countries = syntheticInteractionCountries();
    auto indexOf = [](const std::vector<std::string> &names, std::string_view name) {
        return int(std::find(names.begin(), names.end(), name) - names.begin());
    };
    for (;;) {
        auto row = reader->next();
        if (!row || !*row)
            return rows;
        const auto &f = **row;
        Interaction r;
        r.user = std::uint64_t(parseCsvInt(f[0]).value_or(-1));
        r.item = std::uint64_t(parseCsvInt(f[1]).value_or(-1));
        r.device = indexOf(devices, f[2]);
        r.country = indexOf(countries, f[3]);
        r.hour = int(parseCsvInt(f[4]).value_or(-1));
        r.price = parseCsvDouble(f[5]).value_or(NAN);
        r.userAge = parseCsvDouble(f[6]).value_or(NAN);
        r.click = int(parseCsvInt(f[7]).value_or(-1));
        r.rating = parseCsvDouble(f[8]).value_or(NAN);
        rows.push_back(r);
    }
}

double mean(const std::vector<double> &v) { return v.empty() ? NAN : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }

} // namespace

class TestSyntheticInteractions : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void sameSeedSameFile()
    {
        QTemporaryDir dir;
        const SyntheticInteractionsSpec spec = smallSpec();
        const std::string one = written(dir, "one", spec, 1), two = written(dir, "two", spec, 2);
        QVERIFY(!one.empty());
        QVERIFY(one == two);
        SyntheticInteractionsSpec other = spec;
        other.seed = 12;
        QVERIFY(written(dir, "other", other, 2) != one);
        // The hidden factors are a function of the seed too.
        QVERIFY(syntheticUserFactor(spec, 7) == syntheticUserFactor(smallSpec(), 7));
        QVERIFY(syntheticUserFactor(spec, 7) != syntheticUserFactor(other, 7));
        QVERIFY(syntheticUserFactor(spec, 7) != syntheticItemFactor(spec, 7));
    }

    // Chunks of 1, 7 or 1000 rows, the default, or one chunk bigger than the file: the same bytes;
    // and fewer rows are a prefix of more.
    void anyChunkingGivesTheSameFile()
    {
        QTemporaryDir dir;
        const SyntheticInteractionsSpec spec = smallSpec();
        const std::string reference = written(dir, "reference", spec, 2);
        QVERIFY(!reference.empty());
        for (const std::uint64_t chunk : {1ull, 7ull, 1000ull, 5000ull})
            QVERIFY2(written(dir, "chunk" + QString::number(chunk), spec, 2, chunk) == reference, qPrintable(QString::number(chunk)));
        const std::string fewer = written(dir, "fewer", smallSpec(1234), 2);
        QVERIFY(!fewer.empty());
        QVERIFY(reference.compare(0, fewer.size(), fewer) == 0);
    }

    void columnsParseAndValuesAreInRange()
    {
        QTemporaryDir dir;
        const SyntheticInteractionsSpec spec = smallSpec();
        std::vector<std::uint64_t> progress;
        QVERIFY(writeSyntheticInteractions(spec, dir.path().toStdString(), 2, [&](std::uint64_t done) { progress.push_back(done); }, nullptr, 1000)
                    .ok());
        QCOMPARE(progress, (std::vector<std::uint64_t>{1000, 2000, 3000}));
        const std::string path = dir.filePath("interactions.csv").toStdString();
        auto reader = CsvReader::open(path);
        QVERIFY(reader.ok());
        QCOMPARE(reader->columns(),
                 (std::vector<std::string>{"user_id", "item_id", "device", "country", "hour", "price", "user_age", "click", "rating"}));

        const auto rows = readRows(path);
        QCOMPARE(rows.size(), std::size_t(spec.rows));
        std::map<std::uint64_t, double> ageOf;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const Interaction &r = rows[i];
            const QString where = "row " + QString::number(i);
            QVERIFY2(r.user < spec.users && r.item < spec.items, qPrintable(where));
            QVERIFY2(r.device >= 0 && r.device < 4 && r.country >= 0 && r.country < int(syntheticInteractionCountries().size()), qPrintable(where));
            QVERIFY2(r.hour >= 0 && r.hour <= 23, qPrintable(where));
            QVERIFY2(r.price >= 0.01 && r.price < 1e5, qPrintable(where));
            QVERIFY2(r.userAge >= 18 && r.userAge <= 80, qPrintable(where));
            QVERIFY2(r.click == 0 || r.click == 1, qPrintable(where));
            QVERIFY2(r.rating >= 1 && r.rating <= 5, qPrintable(where));
            // The file holds what the generator says the row is, and a user keeps one age.
            const Interaction expected = syntheticInteraction(spec, i);
            QVERIFY2(r.user == expected.user && r.item == expected.item && r.device == expected.device && r.hour == expected.hour &&
                         r.click == expected.click && r.rating == expected.rating && r.price == expected.price,
                     qPrintable(where));
            QVERIFY2(ageOf.emplace(r.user, r.userAge).first->second == r.userAge, qPrintable(where));
        }
        // Every category is used (the rarest device has 8% of the rows, tv).
        std::vector<int> devices(4, 0);
        for (const auto &r : rows)
            ++devices[std::size_t(r.device)];
        QVERIFY(*std::min_element(devices.begin(), devices.end()) > 50);
    }

    // What a model is meant to learn is in the data: pairs of high affinity (from the generator's
    // factors) click and rate far more than pairs of low affinity.
    void clicksAndRatingsFollowTheAffinity()
    {
        QTemporaryDir dir;
        const SyntheticInteractionsSpec spec = smallSpec(20000);
        QVERIFY(writeSyntheticInteractions(spec, dir.path().toStdString(), 2).ok());
        const auto rows = readRows(dir.filePath("interactions.csv").toStdString());
        QCOMPARE(rows.size(), std::size_t(spec.rows));
        std::vector<double> affinity;
        for (const auto &r : rows) {
            const InteractionFactor u = syntheticUserFactor(spec, r.user), i = syntheticItemFactor(spec, r.item);
            affinity.push_back(std::inner_product(u.begin(), u.end(), i.begin(), 0.0));
            QCOMPARE(affinity.back(), syntheticAffinity(spec, r.user, r.item));
        }
        std::vector<double> sorted = affinity;
        std::sort(sorted.begin(), sorted.end());
        const double low = sorted[sorted.size() / 4], high = sorted[sorted.size() * 3 / 4];
        std::vector<double> lowClicks, highClicks, lowRatings, highRatings, lowProbability, highProbability;
        for (std::size_t k = 0; k < rows.size(); ++k) {
            const double probability = syntheticInteraction(spec, k).clickProbability;
            if (affinity[k] <= low) {
                lowClicks.push_back(rows[k].click);
                lowRatings.push_back(rows[k].rating);
                lowProbability.push_back(probability);
            } else if (affinity[k] >= high) {
                highClicks.push_back(rows[k].click);
                highRatings.push_back(rows[k].rating);
                highProbability.push_back(probability);
            }
        }
        const QString figures = QString("click rate %1 vs %2 (probability %3 vs %4), rating %5 vs %6")
                                    .arg(mean(highClicks))
                                    .arg(mean(lowClicks))
                                    .arg(mean(highProbability))
                                    .arg(mean(lowProbability))
                                    .arg(mean(highRatings))
                                    .arg(mean(lowRatings));
        QVERIFY2(mean(highClicks) > mean(lowClicks) + 0.3, qPrintable(figures));
        QVERIFY2(mean(highProbability) > mean(lowProbability) + 0.3, qPrintable(figures));
        QVERIFY2(mean(highRatings) > mean(lowRatings) + 1.0, qPrintable(figures));
    }

    // A few users and items take much of the traffic, as in real logs: with Zipf-like exponents
    // 0.7 (users) and 0.9 (items) the top 1% of users have about 19% of the rows and the top 10%
    // of items about 59%.
    void popularityIsSkewed()
    {
        SyntheticInteractionsSpec spec = smallSpec(20000);
        spec.users = 5000;
        spec.items = 1000;
        std::vector<double> users(spec.users, 0), items(spec.items, 0);
        for (std::uint64_t row = 0; row < spec.rows; ++row) {
            const Interaction r = syntheticInteraction(spec, row);
            users[r.user] += 1.0 / double(spec.rows);
            items[r.item] += 1.0 / double(spec.rows);
        }
        std::sort(users.rbegin(), users.rend());
        std::sort(items.rbegin(), items.rend());
        const double topUsers = std::accumulate(users.begin(), users.begin() + 50, 0.0);
        const double topItems = std::accumulate(items.begin(), items.begin() + 100, 0.0);
        QVERIFY2(topUsers > 0.12 && topItems > 0.35, qPrintable(QString("top users %1, top items %2").arg(topUsers).arg(topItems)));
        // The popular ids are spread over the range, not the smallest ones.
        std::vector<double> byId(spec.items, 0);
        for (std::uint64_t row = 0; row < spec.rows; ++row)
            byId[syntheticInteraction(spec, row).item] += 1;
        const double firstTenth = std::accumulate(byId.begin(), byId.begin() + 100, 0.0) / double(spec.rows);
        QVERIFY2(firstTenth < 0.35, qPrintable(QString::number(firstTenth)));
    }

    void factorsHaveTheirScale()
    {
        const SyntheticInteractionsSpec spec = smallSpec();
        double squares = 0;
        for (std::uint64_t id = 0; id < 2000; ++id)
            for (double v : syntheticItemFactor(spec, id))
                squares += v * v;
        const double variance = squares / (2000.0 * kInteractionFactors);
        QVERIFY2(std::abs(variance - 0.5625) < 0.03, qPrintable(QString::number(variance)));
    }

    void badSpecsAreRefused_data()
    {
        QTest::addColumn<quint64>("rows");
        QTest::addColumn<quint64>("users");
        QTest::addColumn<quint64>("items");
        QTest::addColumn<QString>("option");
        QTest::newRow("no rows") << quint64(0) << quint64(10) << quint64(10) << "--rows";
        QTest::newRow("no users") << quint64(5) << quint64(0) << quint64(10) << "--users";
        QTest::newRow("no items") << quint64(5) << quint64(10) << quint64(0) << "--items";
        QTest::newRow("users beyond int32") << quint64(5) << (quint64(1) << 31) << quint64(10) << "--users";
        QTest::newRow("items beyond int32") << quint64(5) << quint64(10) << (quint64(1) << 31) << "--items";
    }
    void badSpecsAreRefused()
    {
        QFETCH(quint64, rows);
        QFETCH(quint64, users);
        QFETCH(quint64, items);
        QFETCH(QString, option);
        SyntheticInteractionsSpec spec;
        spec.rows = rows;
        spec.users = users;
        spec.items = items;
        const Status s = validate(spec);
        QVERIFY(!s.ok());
        QVERIFY2(QString::fromStdString(s.error().message()).contains(option), s.error().message().c_str());
        QTemporaryDir dir;
        QVERIFY(!writeSyntheticInteractions(spec, dir.path().toStdString(), 1).ok());
        QVERIFY(QDir(dir.path()).isEmpty());
    }

    // A cancelled write stops between chunks and leaves no file, not even a temporary one; an
    // earlier file of the same name stays as it was.
    void cancelledWriteLeavesNothing()
    {
        QTemporaryDir dir;
        const std::string earlier = written(dir, "data", smallSpec(10), 1);
        QVERIFY(!earlier.empty());
        std::atomic<bool> cancel{false};
        const Status s = writeSyntheticInteractions(smallSpec(5000), dir.filePath("data").toStdString(), 2,
                                                    [&](std::uint64_t) { cancel = true; }, &cancel, 100);
        QVERIFY(!s.ok());
        QVERIFY(s.error().isCancelled());
        QCOMPARE(QDir(dir.filePath("data")).entryList(QDir::Files | QDir::Hidden), QStringList{"interactions.csv"});
        QVERIFY(test::readFile(dir.filePath("data/interactions.csv").toStdString()) == earlier);
    }
};

QTEST_GUILESS_MAIN(TestSyntheticInteractions)
#include "tst_synthetic_interactions.moc"
