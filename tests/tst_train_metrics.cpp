// Keras metrics: results against Keras 3 (keras_reference.json, written by the script next to
// it), states of two halves of a batch merged into the whole's; accuracy resolved from the loss
// and from_logits; weighted mean errors; AUC against an exact weighted AUC; unknown names.
#include "train/objectives/metrics.h"
#include "support/train_reference.h"

#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace sluice;
using namespace sluice::train;
using nlohmann::json;

namespace {

// Exact weighted ROC AUC: P(score_pos > score_neg) + P(equal) / 2, over weighted pairs.
double exactAuc(const std::vector<float> &p, const std::vector<float> &t, const std::vector<float> &w)
{
    double num = 0, pos = 0, neg = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        (t[i] != 0 ? pos : neg) += w[i];
        if (t[i] == 0)
            continue;
        for (std::size_t j = 0; j < p.size(); ++j)
            if (t[j] == 0)
                num += w[i] * w[j] * (p[i] > p[j] ? 1.0 : (p[i] == p[j] ? 0.5 : 0.0));
    }
    return num / (pos * neg);
}

} // namespace

class TestTrainMetrics : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void metricsMatchKeras_data()
    {
        QTest::addColumn<int>("index");
        const json &cases = test::trainReference("keras_reference.json")["metrics"];
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i]["name"].get<std::string>().c_str()) << int(i);
    }
    void metricsMatchKeras()
    {
        QFETCH(int, index);
        const json &c = test::trainReference("keras_reference.json")["metrics"][std::size_t(index)];
        const std::string name = c["metric"].get<std::string>();
        auto make = [&] {
            auto m = createMetric(name, c["loss"].get<std::string>(), c["from_logits"].get<bool>());
            return m.ok() ? std::move(*m) : nullptr;
        };
        auto whole = make();
        QVERIFY(whole);
        QCOMPARE(whole->name(), name);
        const FloatTensor pred = test::tensorFrom(c["pred"]), target = test::tensorFrom(c["target"]);
        const auto weights = c["weights"].get<std::vector<float>>();
        whole->update(pred, target, weights);
        const double want = c["result"].get<double>();
        QVERIFY2(test::closeTo(whole->result(), want, 1e-5), qPrintable(QString("%1, Keras %2").arg(whole->result(), 0, 'g', 9).arg(want, 0, 'g', 9)));

        // Two halves on two "replicas", states summed into a third: the whole batch's result.
        auto half = [&](const FloatTensor &t, std::int64_t from, std::int64_t to) {
            Shape s = t.shape;
            s[0] = to - from;
            FloatTensor h(s);
            std::copy(t.data.begin() + from * t.rowSize(), t.data.begin() + to * t.rowSize(), h.data.begin());
            return h;
        };
        const std::int64_t B = pred.rows(), mid = B / 3;
        auto a = make(), b = make(), merged = make();
        const std::span<const float> w(weights);
        a->update(half(pred, 0, mid), half(target, 0, mid), w.empty() ? w : w.subspan(0, std::size_t(mid)));
        b->update(half(pred, mid, B), half(target, mid, B), w.empty() ? w : w.subspan(std::size_t(mid)));
        std::vector<double> state = a->state();
        const std::vector<double> other = b->state();
        QCOMPARE(state.size(), other.size());
        for (std::size_t i = 0; i < state.size(); ++i)
            state[i] += other[i];
        merged->setState(state);
        QVERIFY(test::closeTo(merged->result(), whole->result(), 1e-12));
        merged->reset();
        QCOMPARE(merged->result(), 0.0);
    }

    void accuracyResolution()
    {
        auto resolve = [](const char *loss, bool logits) { return createMetric("accuracy", loss, logits).value(); };
        // binary_crossentropy: threshold 0.5, or 0 with logits.
        FloatTensor p({4, 1}), t({4, 1});
        p.data = {-0.4f, 0.6f, -0.2f, 0.2f};
        t.data = {0.0f, 1.0f, 0.0f, 1.0f};
        auto probs = resolve("binary_crossentropy", false), logits = resolve("binary_crossentropy", true);
        probs->update(p, t, {});
        logits->update(p, t, {});
        QCOMPARE(probs->result(), 0.75); // 0.2 < 0.5 misses
        QCOMPARE(logits->result(), 1.0);
        QCOMPARE(probs->name(), std::string("accuracy"));
        // sparse and categorical from the loss.
        FloatTensor scores({2, 3});
        scores.data = {0.1f, 0.7f, 0.2f, 0.5f, 0.2f, 0.3f};
        FloatTensor idx({2});
        idx.data = {1.0f, 2.0f};
        auto sparse = resolve("sparse_categorical_crossentropy", true);
        sparse->update(scores, idx, {});
        QCOMPARE(sparse->result(), 0.5);
        FloatTensor onehot({2, 3});
        onehot.data = {0, 1, 0, 1, 0, 0};
        auto categorical = resolve("categorical_crossentropy", false);
        categorical->update(scores, onehot, {});
        QCOMPARE(categorical->result(), 1.0);
        // Other losses: Keras's rule from the shapes.
        auto byShape = resolve("mean_squared_error", false);
        byShape->update(p, t, {}); // (1,) predictions: binary
        QCOMPARE(byShape->result(), 0.75);
        byShape->reset();
        byShape->update(scores, idx, {}); // targets of lower rank: sparse
        QCOMPARE(byShape->result(), 0.5);
        byShape->reset();
        byShape->update(scores, onehot, {}); // same shapes: categorical
        QCOMPARE(byShape->result(), 1.0);
        // Weights: a weighted mean over samples; all-zero weights give 0 (divide_no_nan).
        categorical->reset();
        const std::vector<float> w{0.0f, 0.0f};
        categorical->update(scores, onehot, w);
        QCOMPARE(categorical->result(), 0.0);
    }

    void meanErrorsWeighted()
    {
        auto mae = createMetric("mae", "mse", false).value();
        auto mse = createMetric("mean_squared_error", "mse", false).value();
        FloatTensor p({3, 2}), t({3, 2});
        p.data = {1, 2, 3, 4, 5, 6};
        t.data = {1, 1, 1, 1, 1, 1};
        const std::vector<float> w{1.0f, 3.0f, 0.0f};
        mae->update(p, t, w);
        mse->update(p, t, w);
        // sample values: mae 0.5, 2.5, 4.5; mse 0.5, 6.5, 20.5.
        QVERIFY(test::closeTo(mae->result(), (0.5 + 3 * 2.5) / 4, 1e-12));
        QVERIFY(test::closeTo(mse->result(), (0.5 + 3 * 6.5) / 4, 1e-12));
        QCOMPARE(mse->name(), std::string("mean_squared_error"));
    }

    void aucMatchesExactAuc()
    {
        // Predictions in distinct buckets (or sharing one exactly): the 200-threshold trapezoid
        // AUC is the exact weighted AUC, ties counting half.
        const int n = 120;
        FloatTensor p({n}), t({n});
        std::vector<float> w(n);
        for (int i = 0; i < n; ++i) {
            const int bucket = (i * 37) % 150 + (i % 7 == 0 ? 0 : 20);
            p.data[std::size_t(i)] = (float(std::min(bucket, 198)) + 0.5f) / 199.0f;
            t.data[std::size_t(i)] = ((i * 13) % 5 < 2) != (bucket > 100 && i % 3 == 0) ? 1.0f : 0.0f;
            w[std::size_t(i)] = 0.5f + float(i % 4);
        }
        auto auc = createMetric("auc", "binary_crossentropy", false).value();
        auc->update(p, t, w);
        const double exact = exactAuc(p.data, t.data, w);
        QVERIFY2(test::closeTo(auc->result(), exact, 1e-12), qPrintable(QString("%1 vs exact %2").arg(auc->result()).arg(exact)));
        QVERIFY(auc->result() > 0.3 && auc->result() < 0.9);
        QCOMPARE(auc->state().size(), std::size_t(400));
        // One class only: Keras's divide_no_nan makes it 0.
        auto single = createMetric("auc", "binary_crossentropy", false).value();
        t.fill(1.0f);
        single->update(p, t, {});
        QCOMPARE(single->result(), 0.0);
    }

    void unknownMetric()
    {
        auto m = createMetric("f1", "mse", false);
        QVERIFY(!m.ok());
        QCOMPARE(m.error().what, std::string("metrics"));
        QCOMPARE(m.error().reason, std::string("unknown metric \"f1\"; known: accuracy, binary_accuracy, categorical_accuracy, "
                                               "sparse_categorical_accuracy, mae, mean_absolute_error, mse, mean_squared_error, auc"));
    }
};

QTEST_GUILESS_MAIN(TestTrainMetrics)
#include "tst_train_metrics.moc"
