// The model is checked on every edit, as the stages are: a layer edit that breaks a shape marks
// that layer at once (in red, with core's message) without running anything, Ctrl+Z clears it,
// and a model that builds shows its Keras-style summary (output shapes, parameter counts).
#include "document/project_document.h"
#include "gui/main_window.h"
#include "model/json_list_model.h"
#include "model/model_panel.h"
#include "model/object_list_editor.h"
#include "support/test_support.h"
#include "support/train_test_support.h"

#include <QJsonDocument>
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

        // Ctrl+Z: fixed, and the mark goes.
        QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
        QTRY_VERIFY_WITH_TIMEOUT(panel->modelErrorLabel()->isHidden(), 20000);
        QTRY_VERIFY(panel->summaryView()->toPlainText().contains("Total params: 146"));
    }
};

QTEST_MAIN(TestWorkbenchModel)
#include "tst_workbench_model.moc"
