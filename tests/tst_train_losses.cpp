// Keras losses: values and gradients against PyTorch (torch_reference.json) and Keras 3 itself
// (keras_reference.json), both written by the scripts next to them; per-sample values against a
// naive double reference written here from the Keras formulas; every gradient against finite
// differences (weighted, scaled, class-weighted); class weights; shape and spec errors. The
// metrics are tst_train_metrics's.
#include "train/objectives/loss.h"
#include "support/gradient_check.h"
#include "support/train_reference.h"

#include <QtTest>

#include <cmath>

using namespace sluice;
using namespace sluice::train;
using nlohmann::json;

namespace {

Shape sampleShape(const FloatTensor &t) { return Shape(t.shape.begin() + 1, t.shape.end()); }

std::unique_ptr<Loss> makeLoss(const json &spec, const json &options = json::object())
{
    auto loss = createLoss(spec, options);
    if (!loss.ok())
        qWarning("%s", loss.error().message().c_str());
    return loss.ok() ? std::move(*loss) : nullptr;
}

// ---- a naive double reference, written from the Keras formulas ----------------------------

struct Naive
{
    std::string name;
    bool logits = false;
    double delta = 1.0, smoothing = 0.0;
};

std::vector<double> naiveLoss(const Naive &n, const FloatTensor &pred, const FloatTensor &target)
{
    const double eps = 1e-7;
    auto clip = [&](double p) { return std::clamp(p, eps, 1.0 - eps); };
    const std::int64_t B = pred.rows(), N = pred.rowSize(), C = pred.shape.back();
    std::vector<double> out;
    for (std::int64_t i = 0; i < B; ++i) {
        const float *p = pred.ptr() + i * N;
        double sum = 0;
        if (n.name == "categorical_crossentropy" || n.name == "sparse_categorical_crossentropy") {
            const std::int64_t T = N / C;
            for (std::int64_t s = 0; s < T; ++s) {
                const float *x = p + s * C;
                std::vector<double> t(std::size_t(C), 0.0);
                if (n.name == "sparse_categorical_crossentropy")
                    t[std::size_t(target.ptr()[i * T + s])] = 1.0;
                else
                    for (std::int64_t k = 0; k < C; ++k)
                        t[std::size_t(k)] = target.ptr()[i * N + s * C + k] * (1 - n.smoothing) + n.smoothing / double(C);
                std::vector<double> q(static_cast<std::size_t>(C));
                double total = 0;
                for (std::int64_t k = 0; k < C; ++k) {
                    q[std::size_t(k)] = n.logits ? std::exp(double(x[k])) : (n.name == "sparse_categorical_crossentropy" ? clip(x[k]) : x[k]);
                    total += q[std::size_t(k)];
                }
                for (std::int64_t k = 0; k < C; ++k) {
                    double qk = q[std::size_t(k)] / total;
                    if (!n.logits && n.name == "categorical_crossentropy")
                        qk = clip(qk); // normalised, then clipped
                    sum -= t[std::size_t(k)] * std::log(qk);
                }
            }
            out.push_back(sum / double(T));
            continue;
        }
        for (std::int64_t j = 0; j < N; ++j) {
            const double x = p[j], e = x - target.ptr()[i * N + j];
            double t = target.ptr()[i * N + j];
            if (n.name == "mse")
                sum += e * e;
            else if (n.name == "mae")
                sum += std::abs(e);
            else if (n.name == "huber")
                sum += std::abs(e) <= n.delta ? 0.5 * e * e : n.delta * std::abs(e) - 0.5 * n.delta * n.delta;
            else { // binary_crossentropy
                t = t * (1 - n.smoothing) + 0.5 * n.smoothing;
                const double q = n.logits ? 1.0 / (1.0 + std::exp(-x)) : clip(x);
                sum -= t * std::log(q) + (1 - t) * std::log(1 - q);
            }
        }
        out.push_back(sum / double(N));
    }
    return out;
}

json specOf(const Naive &n)
{
    return {{"name", n.name}, {"from_logits", n.logits}, {"delta", n.delta}, {"label_smoothing", n.smoothing}};
}

} // namespace

class TestTrainLosses : public QObject
{
    Q_OBJECT
private:
    // Values and gradients of one reference case (a loss spec, inputs, per_sample, dpred).
    void checkReferenceCase(const json &c)
    {
        auto loss = makeLoss(c["loss"]);
        QVERIFY(loss);
        const FloatTensor pred = test::tensorFrom(c["pred"]), target = test::tensorFrom(c["target"]);
        QVERIFY2(loss->checkShapes(sampleShape(pred), sampleShape(target)).ok(), c["name"].get<std::string>().c_str());
        const std::vector<float> weights = c["weights"].get<std::vector<float>>();
        std::vector<float> perSample(std::size_t(pred.rows()));
        FloatTensor dPred;
        loss->compute(pred, target, weights, c["scale"].get<float>(), perSample, &dPred);
        const auto want = c["per_sample"].get<std::vector<double>>();
        for (std::size_t i = 0; i < want.size(); ++i)
            QVERIFY2(test::closeTo(perSample[i], want[i], 2e-5), qPrintable(QString("sample %1: %2, expected %3").arg(i).arg(perSample[i]).arg(want[i])));
        const FloatTensor wantGrad = test::tensorFrom(c["dpred"]);
        QCOMPARE(dPred.shape, pred.shape);
        double largest = 0;
        for (float g : wantGrad.data)
            largest = std::max(largest, double(std::abs(g)));
        for (std::size_t i = 0; i < wantGrad.size(); ++i)
            QVERIFY2(std::abs(dPred.data[i] - wantGrad.data[i]) <= 2e-5 * std::max(1.0, largest),
                     qPrintable(QString("dpred[%1]: %2, expected %3").arg(i).arg(dPred.data[i]).arg(wantGrad.data[i])));
    }

    static void addReferenceRows(const char *file)
    {
        QTest::addColumn<int>("index");
        const json &cases = test::trainReference(file)["losses"];
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i]["name"].get<std::string>().c_str()) << int(i);
    }

    // scale * sum_i w_i loss_i, from the loss's own per-sample values, for finite differences.
    static double weightedLoss(const Loss &loss, const FloatTensor &pred, const FloatTensor &target, const std::vector<float> &w, float scale)
    {
        std::vector<float> perSample(std::size_t(pred.rows()));
        loss.compute(pred, target, w, scale, perSample, nullptr);
        double sum = 0;
        for (std::size_t i = 0; i < perSample.size(); ++i)
            sum += double(scale) * (w.empty() ? 1.0 : w[i]) * perSample[i];
        return sum;
    }

private Q_SLOTS:
    void matchesTorch_data() { addReferenceRows("torch_reference.json"); }
    void matchesTorch()
    {
        QFETCH(int, index);
        checkReferenceCase(test::trainReference("torch_reference.json")["losses"][std::size_t(index)]);
    }

    void matchesKeras_data() { addReferenceRows("keras_reference.json"); }
    void matchesKeras()
    {
        QFETCH(int, index);
        checkReferenceCase(test::trainReference("keras_reference.json")["losses"][std::size_t(index)]);
    }

    void matchesNaiveReference_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("logits");
        QTest::addColumn<double>("delta");
        QTest::addColumn<double>("smoothing");
        QTest::addColumn<QList<qint64>>("shape");
        QTest::newRow("mse") << "mse" << false << 1.0 << 0.0 << QList<qint64>{6, 4};
        QTest::newRow("mae") << "mae" << false << 1.0 << 0.0 << QList<qint64>{6, 2, 3};
        QTest::newRow("huber") << "huber" << false << 1.0 << 0.0 << QList<qint64>{6, 4};
        QTest::newRow("huber 0.3") << "huber" << false << 0.3 << 0.0 << QList<qint64>{6, 4};
        QTest::newRow("huber scalar") << "huber" << false << 1.0 << 0.0 << QList<qint64>{6};
        QTest::newRow("bce") << "binary_crossentropy" << false << 1.0 << 0.0 << QList<qint64>{6, 4};
        QTest::newRow("bce smoothing") << "binary_crossentropy" << false << 1.0 << 0.3 << QList<qint64>{6, 4};
        QTest::newRow("bce logits") << "binary_crossentropy" << true << 1.0 << 0.1 << QList<qint64>{6, 3, 2};
        QTest::newRow("cce") << "categorical_crossentropy" << false << 1.0 << 0.0 << QList<qint64>{6, 5};
        QTest::newRow("cce smoothing") << "categorical_crossentropy" << false << 1.0 << 0.2 << QList<qint64>{6, 5};
        QTest::newRow("cce logits seq") << "categorical_crossentropy" << true << 1.0 << 0.1 << QList<qint64>{6, 3, 5};
        QTest::newRow("sparse") << "sparse_categorical_crossentropy" << false << 1.0 << 0.0 << QList<qint64>{6, 5};
        QTest::newRow("sparse logits seq") << "sparse_categorical_crossentropy" << true << 1.0 << 0.0 << QList<qint64>{6, 3, 5};
    }
    void matchesNaiveReference()
    {
        QFETCH(QString, name);
        QFETCH(bool, logits);
        QFETCH(double, delta);
        QFETCH(double, smoothing);
        QFETCH(QList<qint64>, shape);
        const Naive n{name.toStdString(), logits, delta, smoothing};
        const Shape s(shape.begin(), shape.end());
        const bool ce = n.name.find("crossentropy") != std::string::npos;
        const bool sparse = n.name == "sparse_categorical_crossentropy";
        FloatTensor pred = test::randomTensor(s, 11, logits || !ce ? -3.0f : 0.0f, logits || !ce ? 3.0f : 1.0f);
        FloatTensor target = test::randomTensor(s, 12, ce ? 0.0f : -3.0f, ce ? 1.0f : 3.0f);
        if (sparse) {
            target.resize(Shape(s.begin(), s.end() - 1));
            for (std::size_t i = 0; i < target.size(); ++i)
                target.data[i] = float((i * 7) % std::size_t(s.back()));
        }
        pred.data[0] = ce && !logits ? 1e-9f : pred.data[0]; // a clipped probability
        auto loss = makeLoss(specOf(n));
        QVERIFY(loss);
        QVERIFY(loss->checkShapes(sampleShape(pred), sampleShape(target)).ok());
        std::vector<float> perSample(std::size_t(pred.rows()));
        loss->compute(pred, target, {}, 1.0f, perSample, nullptr);
        const auto want = naiveLoss(n, pred, target);
        for (std::size_t i = 0; i < want.size(); ++i)
            QVERIFY2(test::closeTo(perSample[i], want[i], 1e-5), qPrintable(QString("sample %1: %2, expected %3").arg(i).arg(perSample[i]).arg(want[i])));
    }

    void gradientsMatchFiniteDifferences_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<bool>("weighted");
        QTest::addColumn<bool>("classWeighted");
        auto row = [](const char *tag, const char *spec, QList<qint64> shape, bool weighted, bool classWeighted = false) {
            QTest::newRow(tag) << QString(spec) << shape << weighted << classWeighted;
        };
        row("mse", R"("mse")", {5, 3}, true);
        row("mse sequence", R"("mse")", {3, 2, 3}, false);
        row("mae", R"("mae")", {5, 3}, true);
        row("huber", R"({"name": "huber"})", {5, 6}, true);
        row("huber 0.4", R"({"name": "huber", "delta": 0.4})", {5, 6}, false);
        row("bce", R"("binary_crossentropy")", {5, 3}, true);
        row("bce class-weighted", R"("binary_crossentropy")", {6, 1}, true, true);
        row("bce logits smoothing", R"({"name": "binary_crossentropy", "from_logits": true, "label_smoothing": 0.2})", {5, 3}, true);
        row("cce", R"("categorical_crossentropy")", {5, 4}, true);
        row("cce class-weighted", R"({"name": "categorical_crossentropy", "label_smoothing": 0.1})", {6, 4}, false, true);
        row("cce logits", R"({"name": "categorical_crossentropy", "from_logits": true})", {5, 4}, true);
        row("cce logits sequence", R"({"name": "categorical_crossentropy", "from_logits": true})", {3, 2, 4}, true);
        row("sparse", R"("sparse_categorical_crossentropy")", {5, 4}, true);
        row("sparse logits class-weighted", R"({"name": "sparse_categorical_crossentropy", "from_logits": true})", {6, 4}, true, true);
        row("sparse logits sequence", R"({"name": "sparse_categorical_crossentropy", "from_logits": true})", {3, 2, 4}, true);
    }
    void gradientsMatchFiniteDifferences()
    {
        QFETCH(QString, spec);
        QFETCH(QList<qint64>, shape);
        QFETCH(bool, weighted);
        QFETCH(bool, classWeighted);
        auto loss = makeLoss(json::parse(spec.toStdString()));
        QVERIFY(loss);
        const std::string name = loss->name();
        const bool logits = spec.contains("from_logits");
        const bool probabilities = name.find("crossentropy") != std::string::npos && !logits;
        const Shape s(shape.begin(), shape.end());
        FloatTensor pred = test::randomTensor(s, 5, probabilities ? 0.1f : -2.0f, probabilities ? 0.9f : 2.0f);
        FloatTensor target = test::randomTensor(s, 6, -2.0f, 2.0f);
        const std::int64_t classes = s.back();
        if (name == "sparse_categorical_crossentropy") {
            target.resize(Shape(s.begin(), s.end() - 1));
            for (std::size_t i = 0; i < target.size(); ++i)
                target.data[i] = float((i * 3 + 1) % std::size_t(classes));
        } else if (name == "categorical_crossentropy") {
            target.zero();
            for (std::size_t r = 0; r < target.size() / std::size_t(classes); ++r)
                target.data[r * std::size_t(classes) + (r * 3 + 1) % std::size_t(classes)] = 1.0f;
        } else if (name == "binary_crossentropy") {
            for (auto &t : target.data)
                t = t > 0 ? 1.0f : (t < -1.0f ? 0.0f : 0.3f);
        } else {
            // Keep errors away from the kinks (|e| = 0 for mae, |e| = delta for huber) by more
            // than the finite-difference step.
            const double delta = spec.contains("0.4") ? 0.4 : 1.0;
            for (std::size_t i = 0; i < pred.size(); ++i) {
                const double e = std::abs(double(pred.data[i]) - target.data[i]);
                if (e < 0.05 || std::abs(e - delta) < 0.05)
                    target.data[i] += 0.2f;
            }
        }
        std::vector<float> w;
        if (weighted) {
            w.resize(std::size_t(s[0]));
            for (std::size_t i = 0; i < w.size(); ++i)
                w[i] = 0.25f + 0.5f * float(i % 4);
        }
        if (classWeighted) {
            if (w.empty())
                w.assign(std::size_t(s[0]), 1.0f);
            applyClassWeights(target, {{0, 3.0f}, {1, 0.5f}, {2, 0.0f}}, w);
        }
        const float scale = 1.0f / float(s[0]);
        std::vector<float> perSample(static_cast<std::size_t>(s[0]));
        FloatTensor dPred;
        loss->compute(pred, target, w, scale, perSample, &dPred);
        const auto check = test::checkGradient(pred.span(), dPred.span(), [&] { return weightedLoss(*loss, pred, target, w, scale); }, 1e-2f, 200);
        QVERIFY2(check.maxRelativeError < 1e-2, qPrintable(check.text()));
    }

    void sampleWeightsAndScale()
    {
        auto loss = makeLoss(R"({"name": "categorical_crossentropy", "from_logits": true})"_json);
        const FloatTensor pred = test::randomTensor({3, 4}, 1);
        FloatTensor target({3, 4});
        target.zero();
        target.data[1] = target.data[4] = target.data[11] = 1.0f;
        std::vector<float> plain(3), weighted(3);
        FloatTensor d1, d2;
        loss->compute(pred, target, {}, 1.0f, plain, &d1);
        const std::vector<float> w{2.0f, 0.0f, 0.5f};
        loss->compute(pred, target, w, 0.25f, weighted, &d2);
        QCOMPARE(weighted, plain); // per-sample values are unweighted
        for (std::size_t i = 0; i < d1.size(); ++i)
            QVERIFY(std::abs(d2.data[i] - 0.25f * w[i / 4] * d1.data[i]) <= 1e-7f);
        for (std::size_t i = 4; i < 8; ++i)
            QCOMPARE(d2.data[i], 0.0f); // weight 0: no gradient
        // Without dPred only the values are computed.
        std::vector<float> again(3);
        loss->compute(pred, target, w, 0.25f, again, nullptr);
        QCOMPARE(again, plain);
    }

    void numericallyStable()
    {
        auto bce = makeLoss(R"({"name": "binary_crossentropy", "from_logits": true})"_json);
        FloatTensor x({1, 4}), t({1, 4});
        x.data = {100.0f, -100.0f, 1e4f, -1e4f};
        t.data = {0.0f, 1.0f, 1.0f, 0.0f};
        std::vector<float> l(1);
        FloatTensor d;
        bce->compute(x, t, {}, 1.0f, l, &d);
        QVERIFY(test::closeTo(l[0], (100.0 + 100.0) / 4, 1e-6));
        QCOMPARE(d.data, (std::vector<float>{0.25f, -0.25f, 0.0f, 0.0f}));
        auto bceProb = makeLoss("binary_crossentropy");
        x.data = {0.0f, 1.0f, 0.0f, 1.0f};
        bceProb->compute(x, t, {}, 1.0f, l, &d);
        // Two wrong, clipped to 1e-7 and to 1 - 1e-7 in fp32 (1 - 0.99999988 = 1.19e-7); two right.
        QVERIFY(test::closeTo(l[0], (-std::log(double(1e-7f)) - std::log(1.0 - double(1.0f - 1e-7f))) / 4, 1e-5));
        QCOMPARE(d.data, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f})); // clipped: no gradient
        auto cce = makeLoss(R"({"name": "categorical_crossentropy", "from_logits": true})"_json);
        x.data = {1000.0f, 0.0f, -1000.0f, 999.0f};
        t.data = {0.0f, 0.0f, 0.0f, 1.0f};
        cce->compute(x, t, {}, 1.0f, l, &d);
        QVERIFY(test::closeTo(l[0], 1.0 + std::log1p(std::exp(-1.0)), 1e-6));
        for (float g : d.data)
            QVERIFY(std::isfinite(g));
    }

    void sparseOutOfRangeClassDoesNotCrash()
    {
        // Clamped to the nearest class (the trainer validates class indices and reports them).
        auto loss = makeLoss(R"({"name": "sparse_categorical_crossentropy", "from_logits": true})"_json);
        const FloatTensor pred = test::randomTensor({4, 3}, 2);
        FloatTensor bad({4}), clamped({4});
        bad.data = {7.0f, -3.0f, NAN, INFINITY};
        clamped.data = {2.0f, 0.0f, 0.0f, 2.0f};
        std::vector<float> l1(4), l2(4);
        FloatTensor d1, d2;
        loss->compute(pred, bad, {}, 1.0f, l1, &d1);
        loss->compute(pred, clamped, {}, 1.0f, l2, &d2);
        QCOMPARE(l1, l2);
        QCOMPARE(d1.data, d2.data);
        // Keras casts to int; a class stored as 1.9999999 still names class 2 here (rounded).
        FloatTensor nearly({4});
        nearly.data = {1.9999999f, 0.0000001f, 0.0f, 2.0f};
        loss->compute(pred, nearly, {}, 1.0f, l1, nullptr);
        QCOMPARE(l1, l2);
    }

    void classWeights()
    {
        const std::vector<std::pair<std::int64_t, float>> cw{{0, 0.5f}, {1, 2.0f}, {2, 3.0f}};
        // Sparse targets: the rounded value (half to even); classes missing from the map weigh 1.
        FloatTensor sparse({7});
        sparse.data = {0.0f, 2.0f, 1.0f, 5.0f, 2.4f, 2.5f, NAN};
        std::vector<float> w(7, 1.0f);
        w[0] = 4.0f; // starts from a sample weight
        applyClassWeights(sparse, cw, w);
        QCOMPARE(w, (std::vector<float>{2.0f, 3.0f, 2.0f, 1.0f, 3.0f, 3.0f, 1.0f}));
        // Binary targets of shape (1,).
        FloatTensor binary({3, 1});
        binary.data = {1.0f, 0.0f, 1.0f};
        std::vector<float> wb(3, 1.0f);
        applyClassWeights(binary, cw, wb);
        QCOMPARE(wb, (std::vector<float>{2.0f, 0.5f, 2.0f}));
        // One-hot targets: the argmax (the first, on ties).
        FloatTensor onehot({3, 3});
        onehot.data = {0, 0, 1, 0, 1, 0, 0.5f, 0.5f, 0};
        std::vector<float> wo(3, 1.0f);
        applyClassWeights(onehot, cw, wo);
        QCOMPARE(wo, (std::vector<float>{3.0f, 2.0f, 0.5f}));
        // No class weights: untouched.
        applyClassWeights(onehot, {}, wo);
        QCOMPARE(wo, (std::vector<float>{3.0f, 2.0f, 0.5f}));
    }

    void shapeChecks_data()
    {
        QTest::addColumn<QString>("loss");
        QTest::addColumn<QList<qint64>>("pred");
        QTest::addColumn<QList<qint64>>("target");
        QTest::addColumn<QString>("reason"); // empty: accepted
        QTest::newRow("mse equal") << "mse" << QList<qint64>{3, 4} << QList<qint64>{3, 4} << "";
        QTest::newRow("mse (n,)") << "mse" << QList<qint64>{5} << QList<qint64>{5} << "";
        QTest::newRow("mse (1,) vs ()") << "mse" << QList<qint64>{1} << QList<qint64>{} << "";
        QTest::newRow("mse () vs (1,)") << "mse" << QList<qint64>{} << QList<qint64>{1} << "";
        QTest::newRow("mse (1, 1) vs ()") << "mse" << QList<qint64>{1, 1} << QList<qint64>{} << "mse expects targets of the same shape as the predictions (1, 1), got ()";
        QTest::newRow("mse transposed") << "mse" << QList<qint64>{3, 4} << QList<qint64>{4, 3} << "mse expects targets of the same shape as the predictions (3, 4), got (4, 3)";
        QTest::newRow("huber count") << "huber" << QList<qint64>{10} << QList<qint64>{3} << "huber expects targets of the same shape as the predictions (10,), got (3,)";
        QTest::newRow("bce (1,) vs ()") << "binary_crossentropy" << QList<qint64>{1} << QList<qint64>{} << "";
        QTest::newRow("bce (2,) vs ()") << "binary_crossentropy" << QList<qint64>{2} << QList<qint64>{} << "binary_crossentropy expects targets of the same shape as the predictions (2,), got ()";
        QTest::newRow("cce equal") << "categorical_crossentropy" << QList<qint64>{10} << QList<qint64>{10} << "";
        QTest::newRow("cce sparse targets") << "categorical_crossentropy" << QList<qint64>{10} << QList<qint64>{1} << "categorical_crossentropy expects one-hot targets of the same shape as the predictions (10,), got (1,)";
        QTest::newRow("cce no class axis") << "categorical_crossentropy" << QList<qint64>{} << QList<qint64>{} << "categorical_crossentropy expects predictions with a class axis (one score per class), got ()";
        QTest::newRow("sparse ()") << "sparse_categorical_crossentropy" << QList<qint64>{10} << QList<qint64>{} << "";
        QTest::newRow("sparse (1,)") << "sparse_categorical_crossentropy" << QList<qint64>{10} << QList<qint64>{1} << "";
        QTest::newRow("sparse sequence") << "sparse_categorical_crossentropy" << QList<qint64>{7, 10} << QList<qint64>{7} << "";
        QTest::newRow("sparse sequence (T, 1)") << "sparse_categorical_crossentropy" << QList<qint64>{7, 10} << QList<qint64>{7, 1} << "";
        QTest::newRow("sparse one-hot") << "sparse_categorical_crossentropy" << QList<qint64>{10} << QList<qint64>{10} << "sparse_categorical_crossentropy expects targets of shape () or (1,) for predictions (10,), got (10,)";
        QTest::newRow("sparse sequence wrong") << "sparse_categorical_crossentropy" << QList<qint64>{7, 10} << QList<qint64>{} << "sparse_categorical_crossentropy expects targets of shape (7,) or (7, 1) for predictions (7, 10), got ()";
        QTest::newRow("sparse no class axis") << "sparse_categorical_crossentropy" << QList<qint64>{} << QList<qint64>{} << "sparse_categorical_crossentropy expects predictions with a class axis (one score per class), got ()";
    }
    void shapeChecks()
    {
        QFETCH(QString, loss);
        QFETCH(QList<qint64>, pred);
        QFETCH(QList<qint64>, target);
        QFETCH(QString, reason);
        auto l = makeLoss(loss.toStdString());
        QVERIFY(l);
        const Status st = l->checkShapes(Shape(pred.begin(), pred.end()), Shape(target.begin(), target.end()));
        if (reason.isEmpty()) {
            QVERIFY2(st.ok(), st.ok() ? "" : st.error().message().c_str());
        } else {
            QVERIFY(!st.ok());
            QCOMPARE(QString::fromStdString(st.error().reason), reason);
        }
    }

    void specForms()
    {
        QCOMPARE(makeLoss(R"({"loss": "mean_squared_error"})"_json)->name(), std::string("mse"));
        QCOMPARE(makeLoss("mean_absolute_error")->name(), std::string("mae"));
        QCOMPARE(makeLoss(R"({"loss": {"name": "huber", "delta": 2.0}})"_json)->name(), std::string("huber"));
        // Options from the second argument; the spec's own override them.
        auto logits = makeLoss("binary_crossentropy", R"({"from_logits": true, "delta": 1.0, "label_smoothing": 0})"_json);
        auto probs = makeLoss(R"({"name": "binary_crossentropy", "from_logits": false})"_json, R"({"from_logits": true})"_json);
        FloatTensor x({1, 1}), t({1, 1});
        x.data = {0.5f};
        t.data = {1.0f};
        std::vector<float> a(1), b(1);
        logits->compute(x, t, {}, 1.0f, a, nullptr);
        probs->compute(x, t, {}, 1.0f, b, nullptr);
        QVERIFY(test::closeTo(a[0], std::log1p(std::exp(-0.5)), 1e-6));
        QVERIFY(test::closeTo(b[0], -std::log(0.5), 1e-6));
        // Default-valued options that a loss does not have are accepted (shared option objects).
        QVERIFY(makeLoss("mse", R"({"from_logits": false, "delta": 1.0, "label_smoothing": 0.0})"_json));
        QCOMPARE(knownLosses().size(), std::size_t(8));
    }

    void specErrors_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("options");
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("reason"); // a part of it
        QTest::newRow("unknown") << R"("cross_entropy")" << "{}" << "loss" << "unknown loss \"cross_entropy\"; known: mse, mean_squared_error, mae, mean_absolute_error, huber, binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy";
        QTest::newRow("not a name") << "42" << "{}" << "loss" << "expected a loss name";
        QTest::newRow("object without name") << R"({"delta": 2})" << "{}" << "loss.name" << "expected the loss's name";
        QTest::newRow("delta") << R"({"name": "huber", "delta": -1})" << "{}" << "loss.delta" << "expected a number greater than 0, got -1";
        QTest::newRow("from_logits type") << R"("binary_crossentropy")" << R"({"from_logits": 1})" << "loss.from_logits" << "expected true or false, got 1";
        QTest::newRow("smoothing range") << R"({"name": "categorical_crossentropy", "label_smoothing": 1.5})" << "{}" << "loss.label_smoothing" << "expected a number in [0, 1], got 1.5";
        QTest::newRow("unknown option") << R"({"name": "mse", "reduction": "sum"})" << "{}" << "loss.reduction" << "unknown key for loss; known keys: delta, from_logits, label_smoothing, name";
        QTest::newRow("options not an object") << R"("mse")" << "[1]" << "loss" << "expected the options as an object, got [1]";
        QTest::newRow("mse from_logits") << R"("mse")" << R"({"from_logits": true})" << "loss.from_logits" << "mse takes no from_logits";
        QTest::newRow("mae delta") << R"({"name": "mae", "delta": 2})" << "{}" << "loss.delta" << "mae takes no delta";
        QTest::newRow("sparse smoothing") << R"({"name": "sparse_categorical_crossentropy", "label_smoothing": 0.1})" << "{}" << "loss.label_smoothing" << "sparse_categorical_crossentropy takes no label_smoothing";
    }
    void specErrors()
    {
        QFETCH(QString, spec);
        QFETCH(QString, options);
        QFETCH(QString, what);
        QFETCH(QString, reason);
        auto loss = createLoss(json::parse(spec.toStdString()), json::parse(options.toStdString()));
        QVERIFY(!loss.ok());
        QCOMPARE(QString::fromStdString(loss.error().what), what);
        QVERIFY2(QString::fromStdString(loss.error().reason).contains(reason), loss.error().reason.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTrainLosses)
#include "tst_train_losses.moc"
