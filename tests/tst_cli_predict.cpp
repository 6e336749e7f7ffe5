// sluice predict: a trained run's weights applied to a pipeline node's batches, each model output
// written as DIR/<output>.npy. Checked against the same model computed here by hand from the
// weights file (in double), in inference mode (Dropout is the identity), on a node that has the
// targets and on one that has none; bad arguments exit 2 naming what is wrong.
#include "io/formats/npy_file.h"
#include "io/formats/npz_file.h"
#include "support/test_support.h"
#include "support/train_test_support.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <map>

using namespace sluice;
using namespace sluice::test;

namespace {

constexpr int kRows = 50;

// x → Dense(16, relu) → Dropout(0.5) → Dense(2): dropout must not act in predictions.
nlohmann::json droppingModel(int units = 16)
{
    return {{"inputs", {{{"name", "x"}, {"feature", "x"}}}},
            {"layers",
             {{{"class_name", "Dense"}, {"name", "d1"}, {"units", units}, {"activation", "relu"}},
              {{"class_name", "Dropout"}, {"name", "drop"}, {"rate", 0.5}},
              {{"class_name", "Dense"}, {"name", "d2"}, {"units", 2}}}},
            {"outputs", {{{"name", "y"}, {"layer", "d2"}, {"target", "y"}, {"loss", "mse"}}}}};
}

std::map<std::string, std::vector<float>> readArrays(const std::string &path)
{
    std::map<std::string, std::vector<float>> arrays;
    auto npz = NpzFile::open(path);
    if (!npz)
        return arrays;
    for (const auto &m : npz->members()) {
        auto a = npz->load(m);
        if (!a)
            continue;
        const float *p = reinterpret_cast<const float *>(a->data().data());
        arrays[m.name] = std::vector<float>(p, p + a->count());
    }
    return arrays;
}

std::vector<float> readNpyFloats(const std::string &path, std::vector<std::uint64_t> *shape = nullptr)
{
    auto a = openNpy(path);
    if (!a)
        return {};
    if (shape)
        *shape = a->shape();
    const float *p = reinterpret_cast<const float *>(a->data().data());
    return std::vector<float>(p, p + a->count());
}

// The model by hand, in double: relu(x·K1 + b1)·K2 + b2.
std::vector<double> byHand(const std::vector<float> &x, const std::map<std::string, std::vector<float>> &w)
{
    const auto &k1 = w.at("d1/kernel"), &b1 = w.at("d1/bias"), &k2 = w.at("d2/kernel"), &b2 = w.at("d2/bias");
    const std::size_t in = 6, hidden = b1.size(), out = b2.size(), rows = x.size() / in;
    std::vector<double> y(rows * out);
    std::vector<double> h(hidden);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t j = 0; j < hidden; ++j) {
            double s = b1[j];
            for (std::size_t i = 0; i < in; ++i)
                s += double(x[r * in + i]) * k1[i * hidden + j];
            h[j] = std::max(0.0, s);
        }
        for (std::size_t j = 0; j < out; ++j) {
            double s = b2[j];
            for (std::size_t i = 0; i < hidden; ++i)
                s += h[i] * k2[i * out + j];
            y[r * out + j] = s;
        }
    }
    return y;
}

double worstRelative(const std::vector<float> &got, const std::vector<double> &want)
{
    if (got.size() != want.size())
        return INFINITY;
    double scale = 0, worst = 0;
    for (double v : want)
        scale = std::max(scale, std::abs(v));
    for (std::size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::abs(double(got[i]) - want[i]) / scale);
    return worst;
}

} // namespace

class TestCliPredict : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_d;
    QString m_project, m_run;

    QString writeProject(const QString &name, const nlohmann::json &document)
    {
        const QString path = m_dir.path() + "/" + name;
        writeFile(path.toStdString(), document.dump(2));
        return path;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_d = m_dir.path().toStdString();
        writeTrainingData(m_d, kRows);
        // Batches of 16: 16, 16, 16 and a last one of 2 rows.
        m_project = writeProject("p.sluice", trainingProject(droppingModel(), {{"epochs", 2}, {"seed", 5}, {"optimizer", "adam"}}, 16));
        m_run = m_dir.path() + "/run";
        const auto r = runSluice({"run", m_project, "--out", m_run});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    }

    // The predictions are the model's outputs for every row, in the pipeline's order, with the
    // trained weights and without dropout; a run folder and its weights.npz give the same.
    void predictionsAreTheModelsOutputs()
    {
        const QString out = m_dir.path() + "/pred";
        const auto r = runSluice({"predict", m_project, "--weights", m_run, "--out", out, "--threads", "2"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("y: (50, 2) float32"), qPrintable(r.out));
        std::vector<std::uint64_t> shape;
        const auto got = readNpyFloats(out.toStdString() + "/y.npy", &shape);
        QCOMPARE(shape, (std::vector<std::uint64_t>{kRows, 2}));
        const auto weights = readArrays(m_run.toStdString() + "/weights.npz");
        QVERIFY(weights.count("d1/kernel"));
        const auto x = readNpyFloats(m_d + "/x.npy");
        const double worst = worstRelative(got, byHand(x, weights));
        QVERIFY2(worst < 1e-5, qPrintable(QString::number(worst)));

        const QString again = m_dir.path() + "/pred-npz";
        const auto r2 = runSluice({"predict", m_project, "--weights", m_run + "/weights.npz", "--out", again, "--threads", "1"});
        QVERIFY2(r2.exitCode == 0, qPrintable(r2.err));
        QCOMPARE(readNpyFloats(again.toStdString() + "/y.npy"), got);
    }

    // A node without the targets (here a pipeline of x alone): predictions need none.
    void aNodeWithoutTargetsIsEnough()
    {
        nlohmann::json document = trainingProject(droppingModel(), {{"epochs", 1}}, 7);
        document["pipeline"]["nodes"][0]["params"]["features"] = {{"x", "x.npy"}};
        const QString project = writeProject("inputs-only.sluice", document);
        const QString out = m_dir.path() + "/pred-inputs";
        const auto r = runSluice({"predict", project, "--weights", m_run, "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto got = readNpyFloats(out.toStdString() + "/y.npy");
        const double worst = worstRelative(got, byHand(readNpyFloats(m_d + "/x.npy"), readArrays(m_run.toStdString() + "/weights.npz")));
        QVERIFY2(worst < 1e-5, qPrintable(QString::number(worst)));
        // --node picks the stage: the source emits single rows, which the model refuses by name.
        const auto unbatched = runSluice({"predict", project, "--weights", m_run, "--out", out, "--node", "src"});
        QCOMPARE(unbatched.exitCode, 2);
        QVERIFY2(unbatched.err.startsWith("sluice: "), qPrintable(unbatched.err));
    }

    void badArgumentsExit2NamingWhat_data()
    {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("project");
        QTest::addColumn<QString>("expected");
        QTest::newRow("no --weights") << QStringList{"--out", "o"} << "p.sluice" << "--weights: is required";
        QTest::newRow("no --out") << QStringList{"--weights", "run"} << "p.sluice" << "--out: is required";
        QTest::newRow("missing weights") << QStringList{"--weights", "nowhere.npz", "--out", "o"} << "p.sluice" << "nowhere.npz";
        QTest::newRow("weights of another model") << QStringList{"--weights", "run", "--out", "o"} << "narrow.sluice" << "d1/kernel";
        QTest::newRow("unknown node") << QStringList{"--weights", "run", "--out", "o", "--node", "nope"} << "p.sluice" << "nope";
        QTest::newRow("input not a feature") << QStringList{"--weights", "run", "--out", "o"} << "no-input.sluice" << "zz";
        QTest::newRow("no model") << QStringList{"--weights", "run", "--out", "o"} << "pipeline.sluice" << "no model";
    }

    void badArgumentsExit2NamingWhat()
    {
        QFETCH(QStringList, extra);
        QFETCH(QString, project);
        QFETCH(QString, expected);
        writeProject("narrow.sluice", trainingProject(droppingModel(8), {{"epochs", 1}}, 16));
        nlohmann::json noInput = trainingProject(droppingModel(), {{"epochs", 1}}, 16);
        noInput["model"]["inputs"][0]["feature"] = "zz";
        writeProject("no-input.sluice", noInput);
        nlohmann::json pipelineOnly = trainingProject(droppingModel(), {{"epochs", 1}}, 16);
        pipelineOnly.erase("model");
        pipelineOnly.erase("training");
        writeProject("pipeline.sluice", pipelineOnly);
        const auto r = runSluice(QStringList{"predict", project} + extra, m_dir.path());
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.startsWith("sluice: ") && r.err.contains(expected), qPrintable(r.err));
        QVERIFY(!std::filesystem::exists(m_d + "/o/y.npy"));
    }
};

QTEST_GUILESS_MAIN(TestCliPredict)
#include "tst_cli_predict.moc"
