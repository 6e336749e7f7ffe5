// The workbench on a laptop screen: with every example open, the window fits 1280×800 and
// 1600×1000, and every dock, the canvas and the status bar (with the input-bound verdict) lie
// inside it with room to use; long forms scroll inside their dock instead of growing it.
#include "document/project_document.h"
#include "gui/main_window.h"
#include "gui/welcome_page.h"
#include "support/test_support.h"

#include <QDir>
#include <QDockWidget>
#include <QScrollArea>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

using namespace sluice;

namespace {

QString examplesFolder() { return QString::fromUtf8(SLUICE_SOURCE_DIR) + "/projects"; }

// Where `widget` lies in `window`'s coordinates.
QRect placeIn(const QWidget *widget, const QWidget *window) { return QRect(widget->mapTo(window, QPoint(0, 0)), widget->size()); }

} // namespace

class TestWorkbenchLayout : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("sluice-tests-layout");
        QCoreApplication::setApplicationName("sluice");
        // The examples are opened from copies: opening never writes, but runs/ would go there.
        for (const QString &name : QDir(examplesFolder()).entryList({"*.sluice"}))
            QVERIFY(QFile::copy(examplesFolder() + "/" + name, m_dir.filePath(name)));
    }

    void everyDockFitsTheScreen_data()
    {
        QTest::addColumn<QString>("example");
        QTest::addColumn<QSize>("screen");
        const QStringList examples = QDir(examplesFolder()).entryList({"*.sluice"});
        QVERIFY(examples.size() >= 4);
        for (const QSize screen : {QSize(1280, 800), QSize(1600, 1000)})
            for (const QString &name : examples)
                QTest::addRow("%s at %dx%d", qPrintable(name), screen.width(), screen.height()) << name << screen;
    }

    void everyDockFitsTheScreen()
    {
        QFETCH(QString, example);
        QFETCH(QSize, screen);
        gui::MainWindow window;
        QVERIFY(window.openProject(m_dir.filePath(example)));
        // The window frame and a desktop panel take some of the screen: 40 px is left for them.
        const QSize room(screen.width(), screen.height() - 40);
        window.resize(room);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.applyDefaultLayout();
        QCoreApplication::processEvents();
        const QSize minimum = window.minimumSizeHint().expandedTo(window.minimumSize());
        QVERIFY2(minimum.width() <= room.width() && minimum.height() <= room.height(),
                 qPrintable(QStringLiteral("the window needs at least %1x%2").arg(minimum.width()).arg(minimum.height())));
        QCOMPARE(window.size(), room);

        const QRect inside(QPoint(0, 0), window.size());
        const QStringList docks{"paletteDock", "inspectorDock", "modelDock", "chartsDock", "profileDock", "consoleDock", "previewDock"};
        for (const QString &name : docks) {
            auto *dock = window.findChild<QDockWidget *>(name);
            QVERIFY2(dock, qPrintable(name));
            dock->raise(); // a tab behind another comes to the front, as a click on its tab does
            QCoreApplication::processEvents();
            QVERIFY2(dock->isVisible() && !dock->visibleRegion().isEmpty(), qPrintable(name));
            const QRect place = placeIn(dock, &window);
            QVERIFY2(inside.contains(place), qPrintable(QStringLiteral("%1 lies at %2,%3 %4x%5, outside the window")
                                                            .arg(name)
                                                            .arg(place.x())
                                                            .arg(place.y())
                                                            .arg(place.width())
                                                            .arg(place.height())));
            QVERIFY2(place.height() >= 120 && place.width() >= 180,
                     qPrintable(QStringLiteral("%1 is %2x%3: too small to use").arg(name).arg(place.width()).arg(place.height())));
        }
        QVERIFY(window.statusBar()->isVisible());
        QVERIFY(inside.contains(placeIn(window.statusBar(), &window)));
        // The canvas keeps the largest share.
        const QRect canvas = placeIn(window.centralWidget(), &window);
        QVERIFY2(canvas.width() >= room.width() / 3 && canvas.height() >= room.height() / 3,
                 qPrintable(QStringLiteral("the canvas is %1x%2").arg(canvas.width()).arg(canvas.height())));
    }

    // A first start fits the screen it opens on, and keeps to a comfortable size on large ones.
    void defaultSizeFollowsTheScreen()
    {
        QCOMPARE(gui::MainWindow::defaultSize(QSize(1280, 760)), QSize(1280, 760));
        QCOMPARE(gui::MainWindow::defaultSize(QSize(1600, 960)), QSize(1400, 900));
        QCOMPARE(gui::MainWindow::defaultSize(QSize(3840, 2100)), QSize(1400, 900));
    }

    // The forms of the inspector and of the model panel scroll: however long, they never set the
    // window's minimum height.
    void longFormsScrollInsideTheirDock()
    {
        gui::MainWindow window;
        QVERIFY(window.openProject(m_dir.filePath("sensor-autoencoder.sluice")));
        for (const char *name : {"inspectorDock", "modelDock"}) {
            auto *dock = window.findChild<QDockWidget *>(name);
            QVERIFY(dock);
            auto *scroll = qobject_cast<QScrollArea *>(dock->widget());
            QVERIFY2(scroll, name);
            QVERIFY(scroll->widgetResizable());
            QVERIFY2(dock->minimumSizeHint().height() < 300, qPrintable(QString::number(dock->minimumSizeHint().height())));
        }
    }
};

QTEST_MAIN(TestWorkbenchLayout)
#include "tst_workbench_layout.moc"
