// Adding stages the KNIME way, with real keys and mouse: Enter in the palette's search adds the
// best match after the selected stage, connected (so a chain is typed stage by stage), between
// it and its next stage when it has one; a double-click in the palette does the same; a link let
// go on empty canvas offers the stages that take an input and adds the chosen one there,
// connected; Arrange lays the stages out and fits them in view.
#include "canvas/node_item.h"
#include "canvas/pipeline_scene.h"
#include "canvas/pipeline_view.h"
#include "document/project_document.h"
#include "gui/main_window.h"

#include <QAction>
#include <QLineEdit>
#include <QMenu>
#include <QStandardPaths>
#include <QTreeView>
#include <QtTest>

using namespace sluice;

namespace {

QStringList edgesOf(const widgets::ProjectDocument &document)
{
    QStringList edges;
    for (const PipelineEdge &e : document.project().edges)
        edges << QString::fromStdString(e.from + "->" + e.to);
    return edges;
}

} // namespace

class TestWorkbenchAdding : public QObject
{
    Q_OBJECT

    // A fresh window with an empty project, shown.
    std::unique_ptr<gui::MainWindow> newWindow()
    {
        auto window = std::make_unique<gui::MainWindow>();
        window->resize(1280, 760);
        window->show();
        window->newProject();
        return window;
    }

    void typeInSearch(gui::MainWindow &window, const QString &text)
    {
        auto *search = window.findChild<QLineEdit *>("paletteSearch");
        search->setFocus();
        search->selectAll();
        QTest::keyClicks(search, text);
        QTest::keyClick(search, Qt::Key_Return);
    }

    void clickStage(gui::MainWindow &window, const QString &id)
    {
        widgets::NodeItem *item = window.scene()->node(id);
        QVERIFY(item);
        const QPoint at = window.view()->mapFromScene(item->sceneBoundingRect().center());
        QTest::mouseClick(window.view()->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(window.scene()->selectedNodeIds(), QStringList{id});
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("sluice-tests-adding");
        QCoreApplication::setApplicationName("sluice");
    }

    void enterAddsTheBestMatchAfterTheSelectedStage()
    {
        auto window = newWindow();
        typeInSearch(*window, "range"); // nothing selected: added on its own
        typeInSearch(*window, "batch"); // the best match is batch, not unbatch
        typeInSearch(*window, "pref");
        widgets::ProjectDocument &doc = *window->document();
        QCOMPARE(doc.nodeIds(), (QStringList{"range", "batch", "prefetch"}));
        QCOMPARE(edgesOf(doc), (QStringList{"range->batch", "batch->prefetch"}));
        QCOMPARE(window->scene()->selectedNodeIds(), QStringList{"prefetch"});
        QVERIFY(doc.position("batch").x() > doc.position("range").x());
        QCOMPARE(window->focusWidget(), window->findChild<QLineEdit *>("paletteSearch")); // ready for the next one

        doc.undoStack()->undo(); // one step: the stage and its link
        QCOMPARE(doc.nodeIds(), (QStringList{"range", "batch"}));
        QCOMPARE(edgesOf(doc), QStringList{"range->batch"});

        typeInSearch(*window, "no such stage"); // nothing added, and said so
        QCOMPARE(doc.nodeIds().size(), 2);
    }

    void insertingBetweenTwoStagesSplicesTheLink()
    {
        auto window = newWindow();
        typeInSearch(*window, "range");
        typeInSearch(*window, "batch");
        widgets::ProjectDocument &doc = *window->document();
        const double batchX = doc.position("batch").x();
        clickStage(*window, "range");
        typeInSearch(*window, "shuffle");
        QCOMPARE(edgesOf(doc), (QStringList{"range->shuffle", "shuffle->batch"}));
        QVERIFY(doc.position("shuffle").x() > doc.position("range").x());
        QVERIFY(doc.position("batch").x() > batchX); // moved right to make room
        doc.undoStack()->undo();
        QCOMPARE(edgesOf(doc), QStringList{"range->batch"});
        QCOMPARE(doc.position("batch").x(), batchX);
    }

    void doubleClickInThePaletteInsertsAfterTheSelection()
    {
        auto window = newWindow();
        typeInSearch(*window, "range");
        auto *palette = window->findChild<QTreeView *>("palette");
        auto *search = window->findChild<QLineEdit *>("paletteSearch");
        search->setText("take");
        QModelIndex take;
        for (int g = 0; g < palette->model()->rowCount() && !take.isValid(); ++g)
            for (int r = 0; r < palette->model()->rowCount(palette->model()->index(g, 0)); ++r)
                if (const QModelIndex i = palette->model()->index(r, 0, palette->model()->index(g, 0)); i.data().toString().startsWith("take"))
                    take = i;
        QVERIFY(take.isValid());
        palette->scrollTo(take);
        const QPoint at = palette->visualRect(take).center();
        QTest::mouseClick(palette->viewport(), Qt::LeftButton, {}, at);
        QTest::mouseDClick(palette->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(edgesOf(*window->document()), QStringList{"range->take"});
    }

    void aLinkLetGoOnEmptyCanvasOffersTheStagesThatFit()
    {
        auto window = newWindow();
        typeInSearch(*window, "range");
        widgets::PipelineView *view = window->view();
        widgets::NodeItem *range = window->scene()->node("range");
        const QPointF from = range->outputPort();
        const QPointF to = from + QPointF(260, 40); // empty canvas
        QWidget *viewport = view->viewport();
        QTest::mousePress(viewport, Qt::LeftButton, {}, view->mapFromScene(from));
        QTest::mouseMove(viewport, view->mapFromScene((from + to) / 2));
        QTest::mouseMove(viewport, view->mapFromScene(to));
        QTest::mouseRelease(viewport, Qt::LeftButton, {}, view->mapFromScene(to));
        QMenu *menu = view->linkMenu();
        QVERIFY(menu && menu->isVisible());
        QStringList offered;
        QAction *batch = nullptr;
        for (QAction *a : menu->actions())
            if (!a->isSeparator()) {
                offered << a->text();
                if (a->text() == "batch")
                    batch = a;
            }
        QVERIFY(offered.contains("map") && offered.contains("prefetch") && batch);
        QVERIFY(!offered.contains("range") && !offered.contains("from_npy")); // sources take no input
        batch->trigger();
        QCOMPARE(edgesOf(*window->document()), QStringList{"range->batch"});
        QVERIFY(QLineF(window->document()->position("batch"), to).length() < 1.0);
    }

    void arrangeFitsEveryStageInView()
    {
        auto window = newWindow();
        typeInSearch(*window, "range");
        typeInSearch(*window, "batch");
        window->document()->moveNodes({{"batch", QPointF(6000, 4000)}}); // far out of view
        window->view()->zoomIn();                                         // and no longer following
        window->action("arrange")->trigger();
        const QRectF visible = window->view()->mapToScene(window->view()->viewport()->rect()).boundingRect();
        for (const QString &id : window->document()->nodeIds())
            QVERIFY2(visible.contains(window->scene()->node(id)->sceneBoundingRect()), qPrintable(id));
    }
};

QTEST_MAIN(TestWorkbenchAdding)
#include "tst_workbench_adding.moc"
