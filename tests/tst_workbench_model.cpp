// The model is checked on every edit, as the stages are: a layer edit that breaks a shape marks
// that layer at once (in red, with core's message) without running anything, Ctrl+Z clears it,
// and a model that builds shows its Keras-style summary (output shapes, parameter counts). The
// model is drawn on the canvas below the pipeline: a card per input, layer and output, with
// shapes and parameter counts, wired as the model is and fed from the pipeline's output stage;
// the broken layer's card is marked and cleared with the panel; a double-click on a card opens
// that layer in the model panel.
#include "canvas/model_card_item.h"
#include "canvas/model_graph_items.h"
#include "canvas/node_item.h"
#include "canvas/pipeline_scene.h"
#include "canvas/pipeline_view.h"
#include "document/project_document.h"
#include "gui/main_window.h"
#include "model/json_list_model.h"
#include "model/model_panel.h"
#include "model/object_list_editor.h"
#include "support/test_support.h"
#include "support/train_test_support.h"

#include <QJsonDocument>
#include <QSignalSpy>
#include <QUndoStack>
#include <QLabel>
#include <QListView>
#include <QPlainTextEdit>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace sluice;
using namespace sluice::test;

class TestWorkbenchModel : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("sluice-tests-model");
        QCoreApplication::setApplicationName("sluice");
        writeTrainingData(m_dir.path().toStdString(), 64);
        nlohmann::json doc = trainingProject(mlpModel(), {{"epochs", 1}}, 8);
        doc["name"] = "mlp";
        writeFile(m_dir.filePath("mlp.sluice").toStdString(), doc.dump(2));
    }

    void importingAKerasModelIsOneUndoableEdit()
    {
        // A project over the inputs Keras predicted on and its predictions as the target
        // (tests/data/keras), without a model yet.
        const nlohmann::json doc = {
            {"format", "sluice-project"},
            {"version", 1},
            {"name", "keras"},
            {"pipeline",
             {{"nodes", {{{"id", "arrays"}, {"op", "from_npy"}, {"params", {{"features", {{"x", dataFile("keras/mlp.x.npy")}, {"probs", dataFile("keras/mlp.probs.npy")}}}}}},
                         {{"id", "batch"}, {"op", "batch"}, {"params", {{"batch_size", 4}}}}}},
              {"edges", nlohmann::json::array({nlohmann::json::array({"arrays", "batch"})})}}}};
        writeFile(m_dir.filePath("keras.sluice").toStdString(), doc.dump(2));
        gui::MainWindow window;
        window.show();
        QVERIFY(window.openProject(m_dir.filePath("keras.sluice")));
        QVERIFY(window.action("importKeras")->isEnabled());
        QSignalSpy imported(window.importJob(), &bridge::ModelImportJob::finished);
        window.importKerasModelFrom(QString::fromStdString(dataFile("keras/mlp.keras")), {}, false);
        QVERIFY(imported.wait(60000));
        const Project &project = window.document()->project();
        QCOMPARE(project.model["layers"][0]["name"].get<std::string>(), std::string("hidden"));
        QCOMPARE(project.training["initial_weights"].get<std::string>(), std::string("mlp.weights.npz"));
        QVERIFY(QFile::exists(m_dir.filePath("mlp.weights.npz")));
        // The model panel builds it against the pipeline: Dense 6->8, BatchNormalization 8, Dense 8->3.
        QTRY_VERIFY_WITH_TIMEOUT(window.modelPanel()->summaryView()->toPlainText().contains("Total params: 115"), 20000);
        window.document()->undoStack()->undo(); // one step takes the model and its weights setting back
        QVERIFY(window.document()->project().model.is_null());
        QVERIFY(window.document()->project().training.is_null());
    }

    void aBrokenShapeMarksTheLayerAtOnceAndClearsWhenFixed()
    {
        gui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QVERIFY(window.openProject(m_dir.filePath("mlp.sluice")));
        widgets::ModelPanel *panel = window.modelPanel();
        // Built against the pipeline's output: x is (6,), d1 (16,), d2 (2,): 6·16+16 + 16·2+2 = 146.
        QTRY_VERIFY_WITH_TIMEOUT(panel->summaryView()->toPlainText().contains("Total params: 146"), 20000);
        QVERIFY2(panel->summaryView()->toPlainText().contains("(None, 16)"), qPrintable(panel->summaryView()->toPlainText()));
        QVERIFY(panel->modelErrorLabel()->isHidden());

        // A Reshape to 7 values in front of the 6 of x: the layer is marked, nothing ran.
        QJsonObject model = QJsonDocument::fromJson(QByteArray::fromStdString(window.document()->project().model.dump())).object();
        QJsonArray layers = model.value("layers").toArray();
        layers.prepend(QJsonObject{{"class_name", "Reshape"}, {"name", "r"}, {"target_shape", QJsonArray{7}}});
        model["layers"] = layers;
        window.document()->setModel(model);
        QTRY_VERIFY_WITH_TIMEOUT(!panel->modelErrorLabel()->isHidden(), 20000);
        QVERIFY2(panel->modelErrorLabel()->text().contains("layer 'r'") && panel->modelErrorLabel()->text().contains("reshape"), qPrintable(panel->modelErrorLabel()->text()));
        const QModelIndex first = panel->layersEditor()->listModel()->index(0, 0);
        QVERIFY2(!first.data(Qt::ToolTipRole).toString().isEmpty(), "the layer itself carries the message");
        QVERIFY(!window.runSession()->isRunning());
        QVERIFY(window.lastRunFolder().isEmpty()); // found without running
        QTRY_VERIFY(window.scene()->modelCard("layer:r"));
        QVERIFY2(window.scene()->modelCard("layer:r")->card().error.contains("reshape"), "the card of the layer that breaks");
        QVERIFY(window.scene()->modelCard("layer:d1")->card().error.isEmpty());

        // Ctrl+Z: fixed, and the mark goes.
        QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
        QTRY_VERIFY_WITH_TIMEOUT(panel->modelErrorLabel()->isHidden(), 20000);
        QTRY_VERIFY(panel->summaryView()->toPlainText().contains("Total params: 146"));
        QVERIFY(!window.scene()->modelCard("layer:r"));
    }

    void theModelIsDrawnOnTheCanvas()
    {
        gui::MainWindow window;
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openProject(m_dir.filePath("mlp.sluice")));
        widgets::PipelineScene *scene = window.scene();
        QTRY_VERIFY_WITH_TIMEOUT(scene->modelCard("layer:d1") && !scene->modelCard("layer:d1")->card().shape.isEmpty(), 20000);
        // Inputs, layers, outputs, with what the summary says: x (6,), d1 16 units (6·16+16 = 112).
        QCOMPARE(scene->modelItems().cardCount(), 4);
        const widgets::ModelCard x = scene->modelCard("input:x")->card(), d1 = scene->modelCard("layer:d1")->card(),
                                 d2 = scene->modelCard("layer:d2")->card(), y = scene->modelCard("output:y")->card();
        QCOMPARE(x.shape, QString("(None, 6)"));
        QCOMPARE(x.detail, QString("feature x"));
        QCOMPARE(d1.shape, QString("(None, 16)"));
        QCOMPARE(d1.params, 112);
        QCOMPARE(d1.title, QString("Dense"));
        QCOMPARE(d2.params, 34);
        QCOMPARE(y.detail, QString("target y · mse"));
        QCOMPARE(scene->modelCard("layer:d1")->detailText(), QString("(None, 16) · 112 params"));
        // Wired as the model is, fed from the pipeline's output stage: 3 lines and 1 dashed one.
        QCOMPARE(d1.from, QStringList{"input:x"});
        QCOMPARE(d2.from, QStringList{"layer:d1"});
        QCOMPARE(y.from, QStringList{"layer:d2"});
        QCOMPARE(scene->modelItems().lineCount(), 4);
        const QString feeding = scene->modelItems().graph().feedingNode;
        QVERIFY(scene->node(feeding));
        // Below the stages and left to right, so neither covers the other.
        QRectF stages;
        for (const QString &id : window.document()->nodeIds())
            stages |= scene->node(id)->sceneBoundingRect();
        QVERIFY(scene->modelCard("input:x")->sceneBoundingRect().top() > stages.bottom());
        QVERIFY(scene->modelCard("layer:d1")->x() > scene->modelCard("input:x")->x());
        QVERIFY(scene->modelCard("output:y")->x() > scene->modelCard("layer:d2")->x());
        // Not part of the pipeline: Select All and Delete leave them alone.
        QCOMPARE(scene->modelCard("layer:d1")->flags() & QGraphicsItem::ItemIsSelectable, QGraphicsItem::GraphicsItemFlags{});

        // A double-click on d2's card opens it in the model panel.
        window.view()->fitAll();
        const QPoint at = window.view()->mapFromScene(scene->modelCard("layer:d2")->sceneBoundingRect().center());
        QTest::mouseDClick(window.view()->viewport(), Qt::LeftButton, {}, at);
        widgets::ModelPanel *panel = window.modelPanel();
        QTRY_VERIFY(panel->isVisible());
        QCOMPARE(panel->tabs()->currentIndex(), 0);
        QCOMPARE(panel->layersEditor()->currentRow(), 1);
    }
};

QTEST_MAIN(TestWorkbenchModel)
#include "tst_workbench_model.moc"
