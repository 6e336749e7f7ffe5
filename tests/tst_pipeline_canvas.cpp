// The canvas driven as a user drives it: stages dropped from the palette and data files dropped
// from the file manager, ports connected by dragging with the mouse (refused connections say
// why), stages moved and edges deleted — every one an undoable edit of the document — plus zoom,
// validation marks on the stage at fault and the live busy/bottleneck colouring.
#include "canvas/edge_item.h"
#include "canvas/node_item.h"
#include "canvas/pipeline_scene.h"
#include "canvas/pipeline_view.h"
#include "document/project_document.h"
#include "document/project_validator.h"
#include "io/formats/image_codec.h"
#include "stage_palette_model.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QJsonArray>
#include <QMimeData>
#include <QProgressDialog>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUrl>

#include <QtTest>

using namespace sluice;
using namespace sluice::test;
using namespace sluice::widgets;

namespace {

// Sends a drag-enter / drag-move / drop sequence carrying `data` to the view at `at`, as a
// drag from the palette or the file manager delivers it.
bool drop(PipelineView &view, QMimeData *data, QPoint at)
{
    QDragEnterEvent enter(at, Qt::CopyAction, data, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(view.viewport(), &enter);
    if (!enter.isAccepted())
        return false;
    QDragMoveEvent move(at, Qt::CopyAction, data, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(view.viewport(), &move);
    QDropEvent dropEvent(at, Qt::CopyAction, data, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(view.viewport(), &dropEvent);
    return dropEvent.isAccepted();
}

QMimeData *paletteDrag(const QString &op)
{
    StagePaletteModel model;
    for (int g = 0; g < model.rowCount(); ++g) {
        const QModelIndex group = model.index(g, 0);
        for (int r = 0; r < model.rowCount(group); ++r) {
            const QModelIndex stage = model.index(r, 0, group);
            if (stage.data(StagePaletteModel::OpNameRole).toString() == op)
                return model.mimeData({stage});
        }
    }
    return nullptr;
}

} // namespace

class TestPipelineCanvas : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<ProjectDocument> m_doc;
    std::unique_ptr<PipelineScene> m_scene;
    std::unique_ptr<PipelineView> m_view;

    QPoint at(QPointF scenePos) const { return m_view->mapFromScene(scenePos); }

    void dragWithMouse(QPointF fromScene, QPointF toScene)
    {
        QWidget *viewport = m_view->viewport();
        QTest::mousePress(viewport, Qt::LeftButton, {}, at(fromScene));
        const QPointF mid = (fromScene + toScene) / 2;
        QTest::mouseMove(viewport, at(mid));
        QTest::mouseMove(viewport, at(toScene));
        QTest::mouseRelease(viewport, Qt::LeftButton, {}, at(toScene));
    }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_doc = std::make_unique<ProjectDocument>(m_dir.path());
        m_scene = std::make_unique<PipelineScene>(m_doc.get());
        m_view = std::make_unique<PipelineView>(m_scene.get());
        m_view->resize(1000, 700);
        m_view->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_view.get()));
        m_view->centerOn(QPointF(300, 100));
    }

    void cleanup()
    {
        m_view.reset();
        m_scene.reset();
        m_doc.reset();
    }

    // An empty canvas says how to start, drawn in its middle; the first stage takes it away.
    void anEmptyCanvasSaysHowToStart()
    {
        const auto inkInTheMiddle = [this] {
            const QImage shot = m_view->viewport()->grab().toImage();
            const QColor background = shot.pixelColor(2, 2);
            int ink = 0; // pixels far darker or lighter than the background: text, not the faint dot grid
            for (int y = shot.height() / 3; y < 2 * shot.height() / 3; ++y)
                for (int x = shot.width() / 4; x < 3 * shot.width() / 4; ++x)
                    ink += std::abs(qGray(shot.pixel(x, y)) - qGray(background.rgb())) > 70;
            return ink;
        };
        QVERIFY(m_view->emptyHint().contains("Drag a stage"));
        QVERIFY(m_view->emptyHint().contains("Drop data files"));
        QVERIFY2(inkInTheMiddle() > 200, "the hint is not drawn");
        QVERIFY(drop(*m_view, paletteDrag("range"), at(QPointF(-400, -300)))); // a stage away from the middle
        QVERIFY(m_view->emptyHint().isEmpty());
        m_view->centerOn(QPointF(2000, 2000)); // nothing of the stage in view either
        QCOMPARE(inkInTheMiddle(), 0);
        m_doc->undoStack()->undo();
        QVERIFY(!m_view->emptyHint().isEmpty());
    }

    void paletteDropAddsTheStageWhereItLands()
    {
        const QPoint where = at(QPointF(100, 100));
        QVERIFY(drop(*m_view, paletteDrag("range"), where));
        QCOMPARE(m_doc->nodeIds(), QStringList({"range"}));
        NodeItem *item = m_scene->node("range");
        QVERIFY(item);
        QVERIFY(item->sceneBoundingRect().contains(m_view->mapToScene(where)));
        QVERIFY(item->isSelected());
        // Something that is neither a stage nor a data file is not accepted.
        auto *text = new QMimeData;
        text->setText("hello");
        QVERIFY(!drop(*m_view, text, where));
        delete text;
        QCOMPARE(m_doc->nodeIds().size(), 1);
    }

    void portsConnectByDraggingAndRefusalsSayWhy()
    {
        const QString src = m_view->addStage("range", {0, 0});
        const QString batch = m_view->addStage("batch", {260, 0});
        QSignalSpy messages(m_scene.get(), &PipelineScene::statusMessage);
        // Output port of range → body of batch.
        dragWithMouse(m_scene->node(src)->outputPort(), m_scene->node(batch)->sceneBoundingRect().center());
        QCOMPARE(m_doc->project().inputsOf(batch.toStdString()), std::vector<std::string>{src.toStdString()});
        QVERIFY(m_scene->edge(src, batch));
        // batch → range: a source takes no input; nothing changes and the reason is given.
        const int steps = m_doc->undoStack()->count();
        dragWithMouse(m_scene->node(batch)->outputPort(), m_scene->node(src)->sceneBoundingRect().center());
        QCOMPARE(m_doc->undoStack()->count(), steps);
        QCOMPARE(messages.count(), 1);
        QVERIFY2(messages.last().at(0).toString().contains("takes no input"), qPrintable(messages.last().at(0).toString()));
        QCOMPARE(m_scene->edgeCount(), 1);
        // Undo removes the edge from the canvas too.
        m_doc->undoStack()->undo();
        QCOMPARE(m_scene->edgeCount(), 0);
    }

    void draggingAStageMovesItAsOneUndoableStep()
    {
        const QString id = m_view->addStage("range", {0, 0});
        const QPointF before = m_doc->position(id);
        NodeItem *item = m_scene->node(id);
        const QPointF grab = item->sceneBoundingRect().center() + QPointF(-40, 0); // the body, not a port
        dragWithMouse(grab, grab + QPointF(120, 60));
        const QPointF after = m_doc->position(id);
        QVERIFY2(QLineF(after, before + QPointF(120, 60)).length() < 2.0, qPrintable(QString("moved to %1,%2").arg(after.x()).arg(after.y())));
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->position(id), before);
        QCOMPARE(m_scene->node(id)->pos(), before);
    }

    void selectedEdgesAndStagesAreDeletedTogether()
    {
        const QString a = m_view->addStage("range", {0, 0});
        const QString b = m_view->addStage("batch", {260, 0});
        const QString c = m_view->addStage("prefetch", {520, 0});
        QVERIFY(!m_doc->connectNodes(a, b));
        QVERIFY(!m_doc->connectNodes(b, c));
        // Click on the middle of the edge a → b selects it.
        EdgeItem *edge = m_scene->edge(a, b);
        const QPointF middle = edge->path().pointAtPercent(0.5);
        m_scene->clearSelection();
        QTest::mouseClick(m_view->viewport(), Qt::LeftButton, {}, at(middle));
        QVERIFY(edge->isSelected());
        m_scene->node(c)->setSelected(true);
        const int steps = m_doc->undoStack()->count();
        m_scene->deleteSelection();
        QCOMPARE(m_doc->undoStack()->count(), steps + 1); // one step
        QCOMPARE(m_doc->nodeIds(), QStringList({a, b}));
        QVERIFY(m_doc->project().edges.empty());
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->nodeIds().size(), 3);
        QCOMPARE(m_doc->project().edges.size(), std::size_t(2));
    }

    void droppedDataFilesBecomeSourcesShowingTheirFeatures()
    {
        const std::string x = m_dir.filePath("images.npy").toStdString(), y = m_dir.filePath("labels.npy").toStdString();
        writeNpy<float>(x, std::vector<float>(6 * 3, 0.5f), {3});
        writeNpy<std::int64_t>(y, {0, 1, 0, 1, 1, 0});
        writeFile(m_dir.filePath("notes.txt").toStdString(), "not data");
        auto *files = new QMimeData;
        files->setUrls({QUrl::fromLocalFile(QString::fromStdString(x)), QUrl::fromLocalFile(QString::fromStdString(y)),
                        QUrl::fromLocalFile(m_dir.filePath("notes.txt"))});
        QSignalSpy messages(m_view.get(), &PipelineView::statusMessage);
        QVERIFY(drop(*m_view, files, at(QPointF(50, 50))));
        delete files;
        QCOMPARE(m_doc->nodeIds(), QStringList({"from_npy"}));
        const auto &params = m_doc->project().findNode("from_npy")->params;
        QCOMPARE(params["features"]["images"].get<std::string>(), std::string("images.npy")); // relative to the project
        QCOMPARE(params["features"]["labels"].get<std::string>(), std::string("labels.npy"));
        QVERIFY(!messages.isEmpty() && messages.last().at(0).toString().contains("notes.txt"));
        // The background check fills in what the source emits.
        m_scene->setCheck(checkProject(m_doc->project()));
        QCOMPARE(m_scene->node("from_npy")->error(), QString());
        QVERIFY(m_scene->node("from_npy")->toolTip().contains("images: float32 (3,)"));
    }

    // A folder of class sub-folders of pictures, dropped from the file manager, becomes a
    // from_files over it whose labels are its classes.
    void aDroppedImageFolderBecomesALabelledSource()
    {
        QDir(m_dir.path()).mkpath("pictures/cat");
        QDir(m_dir.path()).mkpath("pictures/dog");
        const std::uint8_t px[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        for (const char *name : {"pictures/cat/a.png", "pictures/dog/b.png", "pictures/dog/c.png"})
            writeFile(m_dir.filePath(name).toStdString(), encodePng(px, 2, 2, 3, name).value());
        auto *files = new QMimeData;
        files->setUrls({QUrl::fromLocalFile(m_dir.filePath("pictures"))});
        QVERIFY(drop(*m_view, files, at(QPointF(50, 50))));
        delete files;
        QCOMPARE(m_doc->nodeIds(), QStringList({"from_files"}));
        QCOMPARE(m_doc->project().findNode("from_files")->params["directory"].get<std::string>(), std::string("pictures"));
        m_scene->setCheck(checkProject(m_doc->project()));
        QCOMPARE(m_scene->node("from_files")->error(), QString());
        QVERIFY(m_scene->node("from_files")->toolTip().contains("label: int64"));
        // The source says its classes, in label order.
        auto pipeline = sluice::pipeline::Pipeline::build(m_doc->project());
        QVERIFY(pipeline.ok());
        QVERIFY(QString::fromStdString((*pipeline)->snapshot().stages.at(0).note).contains("2 classes: cat, dog"));
    }

    void aDroppedCsvFileReadsItsColumns()
    {
        writeFile(m_dir.filePath("sensors.tsv").toStdString(), "t\tvalue\tsite\n1\t0.5\tnorth\n2\t0.25\tsouth\n");
        auto *files = new QMimeData;
        files->setUrls({QUrl::fromLocalFile(m_dir.filePath("sensors.tsv"))});
        QSignalSpy added(m_view.get(), &PipelineView::sourcesAdded);
        QVERIFY(drop(*m_view, files, at(QPointF(50, 50))));
        delete files;
        // Read through on a thread of its own: the sources come in once it is done.
        QVERIFY(m_view->readingProgress());
        QTRY_COMPARE(added.size(), 1);
        QCOMPARE(m_doc->nodeIds(), QStringList({"from_csv"}));
        QCOMPARE(added.first().at(0).toStringList(), QStringList({"from_csv"}));
        const auto &params = m_doc->project().findNode("from_csv")->params;
        QCOMPARE(params["columns"], nlohmann::json::parse(R"({"t": "int64", "value": "float32", "site": "string"})"));
        QCOMPARE(params["field_delim"].get<std::string>(), std::string("\t"));
        // It builds as dropped: the columns are the file's.
        m_scene->setCheck(checkProject(m_doc->project()));
        QCOMPARE(m_scene->node("from_csv")->error(), QString());
        QVERIFY(m_scene->node("from_csv")->toolTip().contains("site: string"));
    }

    // A large TFRecord or CSV file takes a while to read: Cancel in the progress dialog drops
    // the result, and nothing is added.
    void readingADropCanBeCancelled()
    {
        writeFile(m_dir.filePath("rows.csv").toStdString(), "a,b\n1,2\n");
        auto *files = new QMimeData;
        files->setUrls({QUrl::fromLocalFile(m_dir.filePath("rows.csv"))});
        QSignalSpy messages(m_view.get(), &PipelineView::statusMessage);
        QVERIFY(drop(*m_view, files, at(QPointF(50, 50))));
        delete files;
        QPointer<QProgressDialog> progress = m_view->readingProgress();
        QVERIFY(progress);
        progress->show(); // shown at once here; on its own after 300 ms
        auto *cancel = progress->findChild<QPushButton *>();
        QVERIFY(cancel && cancel->text().contains("Cancel"));
        QTest::mouseClick(cancel, Qt::LeftButton);
        QTRY_VERIFY(!progress); // gone once the reading thread is done
        QVERIFY(m_doc->nodeIds().isEmpty());
        QVERIFY(!messages.isEmpty() && messages.last().at(0).toString().contains("cancelled"));
    }

    void validationErrorsAppearOnTheStageThatHasThem()
    {
        const QString src = m_view->addStage("range", {0, 0});
        const QString b = m_view->addStage("batch", {260, 0});
        QVERIFY(!m_doc->connectNodes(src, b));
        m_doc->setParameter(src, "stop", 10);
        m_doc->setParameter(b, "batch_size", 0);
        m_scene->setCheck(checkProject(m_doc->project()));
        QCOMPARE(m_scene->node(src)->error(), QString());
        QVERIFY2(m_scene->node(b)->error().contains("batch_size"), qPrintable(m_scene->node(b)->error()));
        QVERIFY(m_scene->node(b)->toolTip().contains("at least 1"));
    }

    void zoomFollowsTheWheelWithinLimits()
    {
        m_view->addStage("range", {0, 0});
        const double start = m_view->zoom();
        QWheelEvent up(QPointF(200, 200), m_view->viewport()->mapToGlobal(QPointF(200, 200)), {}, QPoint(0, 120), Qt::NoButton, Qt::ControlModifier,
                       Qt::NoScrollPhase, false);
        QCoreApplication::sendEvent(m_view->viewport(), &up);
        QVERIFY(m_view->zoom() > start);
        for (int i = 0; i < 50; ++i)
            m_view->zoomOut();
        QVERIFY(m_view->zoom() >= 0.149);
        for (int i = 0; i < 50; ++i)
            m_view->zoomIn();
        QVERIFY(m_view->zoom() <= 4.001);
        m_view->fitAll();
        QVERIFY(m_view->zoom() <= 1.0);
    }

    void liveStatsColourStagesAndMarkTheBottleneck()
    {
        const QString a = m_view->addStage("range", {0, 0});
        const QString b = m_view->addStage("batch", {260, 0});
        const QJsonObject snapshot{{"bottleneck", b},
                                   {"stages", QJsonArray{QJsonObject{{"id", a}, {"utilisation", 0.1}}, QJsonObject{{"id", b}, {"utilisation", 0.95}}}}};
        m_scene->setStats(sluice::test::snapshotOf(snapshot));
        QCOMPARE(m_scene->node(a)->utilisation(), 0.1);
        QVERIFY(!m_scene->node(a)->isBottleneck());
        QVERIFY(m_scene->node(b)->isBottleneck());
        QVERIFY(m_scene->node(b)->toolTip().contains("bottleneck"));
        m_scene->clearActivity();
        QVERIFY(m_scene->node(b)->utilisation() < 0);
        QVERIFY(!m_scene->node(b)->isBottleneck());
    }
};

QTEST_MAIN(TestPipelineCanvas)
#include "tst_pipeline_canvas.moc"
