// The model's cards as the canvas draws them, read from the model's JSON with core's defaults:
// two inputs, a layer without a name ("<Class>_<i>", as core names it), a layer without
// "inputs" taking the previous one, an output with its target and loss; and core's error placed
// on the card it names, by index or by name. (Shapes and parameter counts from a built model:
// tst_workbench_model.)
#include "document/model_graph.h"

#include <QtTest>

using namespace sluice::widgets;

class TestModelGraph : public QObject
{
    Q_OBJECT

    static nlohmann::json twoBranches()
    {
        return nlohmann::json::parse(R"({
          "inputs": [{"name": "a", "feature": "x"}, {"name": "b"}],
          "layers": [
            {"class_name": "Dense", "name": "da", "inputs": "a", "units": 4},
            {"class_name": "Dense", "inputs": ["b"], "units": 4},
            {"class_name": "Concatenate", "name": "c", "inputs": ["da", "Dense_1"]},
            {"class_name": "Dense", "name": "out", "units": 1}
          ],
          "outputs": [{"name": "y", "layer": "out", "target": "label", "loss": {"name": "huber", "delta": 1.0}}]})");
    }

private Q_SLOTS:
    void cardsAndWiringFollowCoresDefaults()
    {
        const ModelGraph graph = modelGraphOf(twoBranches(), nullptr, {});
        QStringList keys;
        for (const ModelCard &c : graph.cards)
            keys << c.key();
        QCOMPARE(keys, (QStringList{"input:a", "input:b", "layer:da", "layer:Dense_1", "layer:c", "layer:out", "output:y"}));
        QCOMPARE(graph.card("input:a")->detail, QString("feature x"));
        QCOMPARE(graph.card("input:b")->detail, QString("feature b")); // no feature: its own name
        QCOMPARE(graph.card("layer:da")->from, QStringList{"input:a"});
        QCOMPARE(graph.card("layer:Dense_1")->from, QStringList{"input:b"});
        QCOMPARE(graph.card("layer:c")->from, (QStringList{"layer:da", "layer:Dense_1"}));
        QCOMPARE(graph.card("layer:out")->from, QStringList{"layer:c"}); // no "inputs": the previous layer
        QCOMPARE(graph.card("output:y")->from, QStringList{"layer:out"});
        QCOMPARE(graph.card("output:y")->detail, QString("target label · huber"));
        QCOMPARE(graph.card("layer:c")->title, QString("Concatenate"));
        // Not built: no shapes, no parameter counts, no error.
        for (const ModelCard &c : graph.cards) {
            QVERIFY(c.shape.isEmpty());
            QCOMPARE(c.params, -1);
            QVERIFY(c.error.isEmpty());
        }
        QCOMPARE(graph.card("layer:c")->list(), QString("layers"));
        QCOMPARE(graph.card("output:y")->list(), QString("outputs"));
    }

    void theErrorIsOnTheCardItNames()
    {
        const QString byIndex = "model: layers[2] (c): Concatenate needs inputs of the same rank";
        ModelGraph graph = modelGraphOf(twoBranches(), nullptr, byIndex);
        QCOMPARE(graph.card("layer:c")->error, byIndex);
        QVERIFY(graph.card("layer:da")->error.isEmpty());
        const QString byName = "model: layer 'out': Dense parameter 'units': must be at least 1";
        graph = modelGraphOf(twoBranches(), nullptr, byName);
        QCOMPARE(graph.card("layer:out")->error, byName);
        const QString output = "model: outputs[0] (y): target 'label' is not a feature of the pipeline's output";
        graph = modelGraphOf(twoBranches(), nullptr, output);
        QCOMPARE(graph.card("output:y")->error, output);
        QVERIFY(graph.card("input:a")->error.isEmpty());
    }

    void noModelNoCards()
    {
        QVERIFY(modelGraphOf(nlohmann::json(), nullptr, {}).isEmpty());
        QVERIFY(modelGraphOf(nlohmann::json::parse("[1]"), nullptr, {}).isEmpty());
        // Odd entries are shown as far as they go, never a crash.
        const ModelGraph odd = modelGraphOf(nlohmann::json::parse(R"({"inputs": 3, "layers": [7, {"inputs": 5}], "outputs": [{}]})"), nullptr, {});
        QCOMPARE(odd.cards.size(), 3);
    }
};

QTEST_MAIN(TestModelGraph)
#include "tst_model_graph.moc"
