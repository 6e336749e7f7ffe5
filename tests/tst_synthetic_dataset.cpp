// Synthetic datasets: shapes and dtypes as asked, the same bytes whatever the thread count,
// labels in range, targets that really depend on the features, class shares under
// --imbalance, sensor windows (smooth, anomalies flagged), and refused specs.
#include "io/formats/npy_file.h"
#include "io/synthetic/synthetic_dataset.h"
#include "support/test_support.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace sluice;

namespace {

SyntheticSpec multiIoSpec(SyntheticSpec::Task task)
{
    SyntheticSpec s;
    s.task = task;
    s.rows = 5000;
    s.seed = 7;
    s.features = {{"image", {4, 4}, DType::UInt8}, {"meta", {3}, DType::Float16}, {"x", {8}, DType::Float32}};
    if (task == SyntheticSpec::Task::Classification) {
        s.targets = {{"label", {}, DType::Int64}};
        s.classes = {5};
    } else {
        s.targets = {{"y", {2}, DType::Float32}, {"z", {}, DType::Float64}};
    }
    return s;
}

SyntheticSpec imbalancedSpec(double share)
{
    SyntheticSpec s;
    s.task = SyntheticSpec::Task::Classification;
    s.rows = 20000;
    s.seed = 3;
    s.features = {{"x", {12}, DType::Float32}};
    s.targets = {{"label", {}, DType::Int64}, {"kind", {}, DType::UInt8}};
    s.classes = {3, 5};
    s.imbalance = share;
    return s;
}

template <typename T>
std::vector<double> classShares(const QString &path, int classes)
{
    auto a = openNpy(path.toStdString());
    const auto v = a->view<T>();
    std::vector<double> shares(std::size_t(classes), 0.0);
    for (std::uint64_t i = 0; i < v->size(); ++i)
        shares.at(std::size_t(v->flat(i))) += 1.0 / double(v->size());
    return shares;
}

bool sameFiles(const QTemporaryDir &a, const QTemporaryDir &b, std::initializer_list<const char *> names)
{
    for (const char *name : names)
        if (test::readFile(a.filePath(name).toStdString()) != test::readFile(b.filePath(name).toStdString()))
            return false;
    return true;
}

} // namespace

class TestSyntheticDataset : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void writesTheColumnsAsked()
    {
        QTemporaryDir dir;
        const SyntheticSpec spec = multiIoSpec(SyntheticSpec::Task::Regression);
        std::vector<std::uint64_t> progress;
        QVERIFY(writeSyntheticDataset(spec, dir.path().toStdString(), 2, [&](std::uint64_t done) { progress.push_back(done); }).ok());
        QVERIFY(!progress.empty());
        QCOMPARE(progress.back(), spec.rows);
        QVERIFY(std::is_sorted(progress.begin(), progress.end()));
        const std::pair<const char *, std::vector<std::uint64_t>> expected[] = {
            {"image", {5000, 4, 4}}, {"meta", {5000, 3}}, {"x", {5000, 8}}, {"y", {5000, 2}}, {"z", {5000}}};
        for (const auto &[name, shape] : expected) {
            auto a = openNpy(dir.filePath(QString(name) + ".npy").toStdString());
            QVERIFY2(a.ok(), name);
            QCOMPARE(a->shape(), shape);
        }
        QCOMPARE(openNpy(dir.filePath("meta.npy").toStdString())->dtype(), DType::Float16);
        QCOMPARE(totalBytes(spec), std::uint64_t(5000 * (16 + 6 + 32 + 8 + 8)));
    }

    void sameBytesWhateverTheThreadCount()
    {
        QTemporaryDir one, two;
        const SyntheticSpec spec = multiIoSpec(SyntheticSpec::Task::Regression);
        QVERIFY(writeSyntheticDataset(spec, one.path().toStdString(), 1).ok());
        QVERIFY(writeSyntheticDataset(spec, two.path().toStdString(), 2).ok());
        for (const char *name : {"image.npy", "meta.npy", "x.npy", "y.npy", "z.npy"})
            QVERIFY2(test::readFile(one.filePath(name).toStdString()) == test::readFile(two.filePath(name).toStdString()), name);
        SyntheticSpec other = spec;
        other.seed = 8;
        QTemporaryDir three;
        QVERIFY(writeSyntheticDataset(other, three.path().toStdString(), 2).ok());
        QVERIFY(test::readFile(one.filePath("x.npy").toStdString()) != test::readFile(three.filePath("x.npy").toStdString()));
    }

    void featuresLookLikeTheirDistributions()
    {
        QTemporaryDir dir;
        SyntheticSpec spec = multiIoSpec(SyntheticSpec::Task::Regression);
        QVERIFY(writeSyntheticDataset(spec, dir.path().toStdString(), 2).ok());
        auto x = openNpy(dir.filePath("x.npy").toStdString());
        const auto v = x->view<float>();
        double sum = 0, sq = 0;
        for (std::uint64_t i = 0; i < v->size(); ++i) {
            sum += v->flat(i);
            sq += double(v->flat(i)) * v->flat(i);
        }
        const double n = double(v->size()), mean = sum / n, var = sq / n - mean * mean;
        QVERIFY2(std::abs(mean) < 0.03 && std::abs(var - 1) < 0.05, qPrintable(QString("mean %1 var %2").arg(mean).arg(var)));
        auto image = openNpy(dir.filePath("image.npy").toStdString());
        const auto u = image->view<std::uint8_t>();
        QVERIFY(*std::max_element(u->data(), u->data() + u->size()) <= 99);
    }

    void classificationLabelsAreInRangeAndLearnable()
    {
        QTemporaryDir dir;
        const SyntheticSpec spec = multiIoSpec(SyntheticSpec::Task::Classification);
        QVERIFY(writeSyntheticDataset(spec, dir.path().toStdString(), 2).ok());
        auto labels = openNpy(dir.filePath("label.npy").toStdString());
        QVERIFY(labels.ok());
        QCOMPARE(labels->shape(), std::vector<std::uint64_t>{5000});
        const auto l = labels->view<std::int64_t>();
        std::vector<int> counts(5, 0);
        for (std::uint64_t i = 0; i < l->size(); ++i) {
            QVERIFY(l->flat(i) >= 0 && l->flat(i) < 5);
            ++counts[std::size_t(l->flat(i))];
        }
        for (int c : counts) // a random linear map over many inputs uses every class
            QVERIFY(c > 200);
    }

    void imbalanceGivesClassZeroItsShare()
    {
        // Class 0 takes the share asked in every target, the other classes split the rest evenly.
        for (const double share : {0.9, 0.5, 0.2}) {
            QTemporaryDir dir;
            QVERIFY(writeSyntheticDataset(imbalancedSpec(share), dir.path().toStdString(), 2).ok());
            const auto label = classShares<std::int64_t>(dir.filePath("label.npy"), 3);
            const auto kind = classShares<std::uint8_t>(dir.filePath("kind.npy"), 5);
            const auto shares = QString("share %1: label %2 %3 %4").arg(share).arg(label[0]).arg(label[1]).arg(label[2]);
            QVERIFY2(std::abs(label[0] - share) < 0.015 && std::abs(kind[0] - share) < 0.015, qPrintable(shares));
            for (std::size_t c = 1; c < 3; ++c)
                QVERIFY2(std::abs(label[c] - (1 - share) / 2) < 0.15 * (1 - share) / 2 + 0.005, qPrintable(shares));
            for (std::size_t c = 1; c < 5; ++c)
                QVERIFY2(std::abs(kind[c] - (1 - share) / 4) < 0.15 * (1 - share) / 4 + 0.005, qPrintable(shares));
        }
    }

    void imbalancedLabelsDependOnTheFeatures()
    {
        // Labels stay the argmax of a linear map of the features (plus a per-class offset): the
        // rare classes' rows sit far from class 0's in feature space (independent labels would put
        // their means within ~0.1 of each other).
        QTemporaryDir dir;
        QVERIFY(writeSyntheticDataset(imbalancedSpec(0.9), dir.path().toStdString(), 2).ok());
        const auto x = openNpy(dir.filePath("x.npy").toStdString());
        const auto l = openNpy(dir.filePath("label.npy").toStdString());
        const auto xv = x->view<float>();
        const auto lv = l->view<std::int64_t>();
        std::vector<std::vector<double>> mean(3, std::vector<double>(12, 0.0));
        std::vector<double> count(3, 0.0);
        for (std::uint64_t r = 0; r < lv->size(); ++r) {
            const auto c = std::size_t(lv->flat(r));
            count[c] += 1;
            for (std::size_t e = 0; e < 12; ++e)
                mean[c][e] += xv->flat(r * 12 + e);
        }
        for (std::size_t c = 1; c < 3; ++c) {
            double distance = 0;
            for (std::size_t e = 0; e < 12; ++e)
                distance += std::pow(mean[c][e] / count[c] - mean[0][e] / count[0], 2);
            QVERIFY2(std::sqrt(distance) > 1.0, qPrintable(QString("class %1: distance %2").arg(c).arg(std::sqrt(distance))));
        }
    }

    void imbalancedDataIsDeterministic()
    {
        // The same bytes on any thread count, other bytes for another seed, and fewer rows give a
        // prefix of more (the offsets depend on the spec, not on the row count).
        QTemporaryDir one, two, three, fewer;
        SyntheticSpec spec = imbalancedSpec(0.9);
        QVERIFY(writeSyntheticDataset(spec, one.path().toStdString(), 1).ok());
        QVERIFY(writeSyntheticDataset(spec, two.path().toStdString(), 2).ok());
        QVERIFY(sameFiles(one, two, {"x.npy", "label.npy", "kind.npy"}));
        SyntheticSpec other = spec;
        other.seed = 4;
        QVERIFY(writeSyntheticDataset(other, three.path().toStdString(), 2).ok());
        QVERIFY(!sameFiles(one, three, {"label.npy"}));
        SyntheticSpec small = spec;
        small.rows = 700;
        QVERIFY(writeSyntheticDataset(small, fewer.path().toStdString(), 2).ok());
        const auto all = openNpy(one.filePath("label.npy").toStdString());
        const auto part = openNpy(fewer.filePath("label.npy").toStdString());
        QCOMPARE(part->shape(), std::vector<std::uint64_t>{700});
        QVERIFY(std::equal(part->view<std::int64_t>()->data(), part->view<std::int64_t>()->data() + 700, all->view<std::int64_t>()->data()));
    }

    void sensorWindowsHaveTheirShapeAndAreSmooth()
    {
        QTemporaryDir dir;
        SyntheticSpec spec = sensorSpec(3000, 24, 4);
        spec.seed = 5;
        spec.noise = 0.05;
        QVERIFY(validate(spec).ok());
        QVERIFY(writeSyntheticDataset(spec, dir.path().toStdString(), 2).ok());
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"signal.npy"}); // no anomaly column without anomalies
        auto signal = openNpy(dir.filePath("signal.npy").toStdString());
        QVERIFY(signal.ok());
        QCOMPARE(signal->shape(), (std::vector<std::uint64_t>{3000, 24, 4}));
        QCOMPARE(signal->dtype(), DType::Float32);
        QCOMPARE(totalBytes(spec), std::uint64_t(3000 * 24 * 4 * 4));
        // Smooth: a step changes a reading far less than readings vary; and windows differ.
        const auto v = signal->view<float>();
        double sum = 0, sq = 0, step = 0, firstDiff = 0;
        for (std::uint64_t w = 0; w < 3000; ++w)
            for (std::uint64_t t = 0; t < 24; ++t)
                for (std::uint64_t c = 0; c < 4; ++c) {
                    const double x = v->flat((w * 24 + t) * 4 + c);
                    sum += x;
                    sq += x * x;
                    if (t > 0)
                        step += std::abs(x - v->flat((w * 24 + t - 1) * 4 + c));
                    if (w > 0 && t == 0)
                        firstDiff += std::abs(x - v->flat(((w - 1) * 24) * 4 + c));
                }
        const double n = 3000.0 * 24 * 4, stddev = std::sqrt(sq / n - (sum / n) * (sum / n));
        const double meanStep = step / (3000.0 * 23 * 4), meanWindowChange = firstDiff / (2999.0 * 4);
        QVERIFY2(stddev > 0.5 && stddev < 1.5, qPrintable(QString::number(stddev)));
        QVERIFY2(meanStep < 0.5 * stddev, qPrintable(QString("step %1 stddev %2").arg(meanStep).arg(stddev)));
        QVERIFY2(meanWindowChange > 2 * meanStep, qPrintable(QString("window change %1 step %2").arg(meanWindowChange).arg(meanStep)));
    }

    void sensorAnomaliesAreFlaggedAndOnlyThoseWindowsChange()
    {
        QTemporaryDir clean, flagged, again;
        SyntheticSpec spec = sensorSpec(4000, 16, 3);
        spec.seed = 9;
        QVERIFY(writeSyntheticDataset(spec, clean.path().toStdString(), 2).ok());
        SyntheticSpec withAnomalies = sensorSpec(4000, 16, 3, 0.1);
        withAnomalies.seed = 9;
        QVERIFY(writeSyntheticDataset(withAnomalies, flagged.path().toStdString(), 2).ok());
        QVERIFY(writeSyntheticDataset(withAnomalies, again.path().toStdString(), 1).ok());
        QVERIFY(sameFiles(flagged, again, {"signal.npy", "anomaly.npy"}));

        auto flags = openNpy(flagged.filePath("anomaly.npy").toStdString());
        QCOMPARE(flags->shape(), std::vector<std::uint64_t>{4000});
        QCOMPARE(flags->dtype(), DType::Int64);
        const auto f = flags->view<std::int64_t>();
        const auto a = openNpy(clean.filePath("signal.npy").toStdString());
        const auto b = openNpy(flagged.filePath("signal.npy").toStdString());
        const auto av = a->view<float>();
        const auto bv = b->view<float>();
        int anomalies = 0;
        for (std::uint64_t w = 0; w < 4000; ++w) {
            QVERIFY(f->flat(w) == 0 || f->flat(w) == 1);
            const bool same = std::equal(av->data() + w * 48, av->data() + (w + 1) * 48, bv->data() + w * 48);
            QVERIFY2(same == (f->flat(w) == 0), qPrintable(QString("window %1").arg(w)));
            anomalies += int(f->flat(w));
        }
        QVERIFY2(anomalies > 330 && anomalies < 470, qPrintable(QString::number(anomalies))); // 10% of 4000, +-5 sigma

        SyntheticSpec otherSeed = withAnomalies;
        otherSeed.seed = 10;
        QTemporaryDir other;
        QVERIFY(writeSyntheticDataset(otherSeed, other.path().toStdString(), 2).ok());
        QVERIFY(!sameFiles(flagged, other, {"signal.npy"}));
    }

    void outOfRangeTargetsSaturate()
    {
        // A regression target stored as uint8 gets negative and large values: they are clamped
        // (a plain float-to-int conversion would be undefined behaviour; UBSan runs this test).
        QTemporaryDir dir;
        SyntheticSpec s;
        s.rows = 2000;
        s.features = {{"x", {4}, DType::Float32}};
        s.targets = {{"y", {}, DType::UInt8}};
        s.noise = 50;
        QVERIFY(writeSyntheticDataset(s, dir.path().toStdString(), 2).ok());
        auto y = openNpy(dir.filePath("y.npy").toStdString());
        const auto v = y->view<std::uint8_t>();
        QVERIFY(std::count(v->data(), v->data() + v->size(), std::uint8_t(0)) > 100); // negatives clamp to 0
    }

    void invalidSpecsAreRefused()
    {
        QTemporaryDir dir;
        SyntheticSpec s = multiIoSpec(SyntheticSpec::Task::Regression);
        s.rows = 0;
        QVERIFY(!validate(s).ok());
        s = multiIoSpec(SyntheticSpec::Task::Regression);
        s.features.push_back({"x", {1}, DType::Float32});
        QVERIFY(QString::fromStdString(validate(s).error().reason).contains("used twice"));
        s = multiIoSpec(SyntheticSpec::Task::Regression);
        s.features[0].name = "../escape";
        QVERIFY(!validate(s).ok());
        s = multiIoSpec(SyntheticSpec::Task::Classification);
        s.targets[0].dtype = DType::Float32;
        QVERIFY(QString::fromStdString(validate(s).error().reason).contains("integer dtype"));
        s = multiIoSpec(SyntheticSpec::Task::Classification);
        s.targets[0].dtype = DType::Int8;
        s.classes = {300};
        QVERIFY(QString::fromStdString(validate(s).error().reason).contains("do not fit in int8"));
        s = multiIoSpec(SyntheticSpec::Task::Regression);
        s.features[0].rowShape = {1u << 20, 1u << 20};
        QVERIFY(QString::fromStdString(validate(s).error().reason).contains("too large"));
        s = multiIoSpec(SyntheticSpec::Task::Regression);
        s.features[0].rowShape = {1u << 14};
        s.targets[0].rowShape = {1u << 15};
        QVERIFY(QString::fromStdString(validate(s).error().reason).contains("too large for the target map"));
        s = multiIoSpec(SyntheticSpec::Task::Classification);
        s.classes = {1};
        QVERIFY(!validate(s).ok());
        s = multiIoSpec(SyntheticSpec::Task::Regression);
        s.imbalance = 0.9;
        QVERIFY(QString::fromStdString(validate(s).error().reason).contains("classification only"));
        for (const double share : {1.0, -0.1, 1.5}) {
            s = imbalancedSpec(share);
            QVERIFY(QString::fromStdString(validate(s).error().reason).contains("between 0 and 1"));
        }
        s = imbalancedSpec(0.9);
        s.classes = {3, 5000};
        s.targets[1].dtype = DType::Int64;
        QVERIFY(QString::fromStdString(validate(s).error().reason).contains("at most 4096 classes"));
        s = sensorSpec(10, 1, 4);
        QCOMPARE(validate(s).error().what, std::string("--timesteps"));
        s = sensorSpec(10, 8, 4, 0.1);
        s.targets.clear();
        QVERIFY(QString::fromStdString(validate(s).error().reason).contains("needs a target column"));
        s = sensorSpec(10, 8, 4, 0.1);
        s.targets[0].dtype = DType::Float32;
        QVERIFY(!validate(s).ok());
        s = sensorSpec(10, 8, 4);
        s.features[0].rowShape = {32};
        QVERIFY(QString::fromStdString(validate(s).error().reason).contains("(timesteps, channels)"));
        s = multiIoSpec(SyntheticSpec::Task::Classification);
        s.anomalyShare = 0.1;
        QVERIFY(QString::fromStdString(validate(s).error().reason).contains("sensors only"));
        s = multiIoSpec(SyntheticSpec::Task::Classification);
        s.classes = {1};
        QVERIFY(!writeSyntheticDataset(s, dir.path().toStdString(), 1).ok());
        QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestSyntheticDataset)
#include "tst_synthetic_dataset.moc"
