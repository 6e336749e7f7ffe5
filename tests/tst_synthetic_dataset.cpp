// Synthetic datasets: shapes and dtypes as asked, the same bytes whatever the thread count,
// labels in range, targets that really depend on the features, and refused specs.
#include "io/npy_file.h"
#include "io/synthetic_dataset.h"
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
        QVERIFY(!writeSyntheticDataset(s, dir.path().toStdString(), 1).ok());
        QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestSyntheticDataset)
#include "tst_synthetic_dataset.moc"
