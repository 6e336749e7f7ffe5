// The workbench's actions: menus, toolbar, keyboard shortcuts, theme, about box, clipboard.
#include "gui/main_window.h"

#include "canvas/pipeline_scene.h"
#include "canvas/pipeline_view.h"
#include "document/project_document.h"
#include "gui/theme.h"
#include "gui/toolbar_icons.h"
#include "gui/user_guide.h"
#include "train/gpu/device_query.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QDockWidget>
#include <QJsonDocument>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QToolBar>

namespace sluice::gui {

namespace {

// Icons come from refreshIcons(), drawn for the palette (toolbar_icons.h).
QAction *make(QObject *parent, const QString &name, const QString &text, const QKeySequence &shortcut, const QString &tip)
{
    auto *a = new QAction(text, parent);
    a->setObjectName(name);
    if (!shortcut.isEmpty())
        a->setShortcut(shortcut);
    a->setToolTip(shortcut.isEmpty() ? tip : QStringLiteral("%1 (%2)").arg(tip, shortcut.toString(QKeySequence::NativeText)));
    a->setStatusTip(tip);
    return a;
}

} // namespace

QAction *MainWindow::action(const QString &name) const { return findChild<QAction *>(name); }

void MainWindow::refreshIcons()
{
    for (const QString &name : toolbarIconNames())
        if (QAction *a = action(name))
            a->setIcon(toolbarIcon(name, palette()));
}

void MainWindow::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        refreshIcons(); // a theme switch: icons in the new text colour
    QMainWindow::changeEvent(event);
}

void MainWindow::createActions()
{
    connect(make(this, QStringLiteral("new"), tr("&New Project"), QKeySequence::New, tr("Start an empty project")),
            &QAction::triggered, this, &MainWindow::newProject);
    connect(make(this, QStringLiteral("open"), tr("&Open…"), QKeySequence::Open, tr("Open a .sluice project")),
            &QAction::triggered, this, &MainWindow::open);
    connect(make(this, QStringLiteral("save"), tr("&Save"), QKeySequence::Save, tr("Save the project")),
            &QAction::triggered, this, &MainWindow::save);
    connect(make(this, QStringLiteral("saveAs"), tr("Save &As…"), QKeySequence::SaveAs, tr("Save the project under another name")),
            &QAction::triggered, this, &MainWindow::saveAs);
    connect(make(this, QStringLiteral("close"), tr("&Close"), QKeySequence(Qt::CTRL | Qt::Key_W), tr("Close the project (asks to save changes)")),
            &QAction::triggered, this, &MainWindow::closeProject);
    connect(make(this, QStringLiteral("quit"), tr("&Quit"), QKeySequence::Quit, tr("Close the workbench")), &QAction::triggered, this,
            &QWidget::close);

    connect(make(this, QStringLiteral("undo"), tr("&Undo"), QKeySequence::Undo, tr("Undo the last edit")),
            &QAction::triggered, this, [this] {
                if (m_document)
                    m_document->undoStack()->undo();
            });
    connect(make(this, QStringLiteral("redo"), tr("&Redo"), QKeySequence::Redo, tr("Redo the edit undone last")),
            &QAction::triggered, this, [this] {
                if (m_document)
                    m_document->undoStack()->redo();
            });
    connect(make(this, QStringLiteral("cut"), tr("Cu&t"), QKeySequence::Cut, tr("Cut the selected stages")), &QAction::triggered, this,
            &MainWindow::cutSelection);
    connect(make(this, QStringLiteral("copy"), tr("&Copy"), QKeySequence::Copy, tr("Copy the selected stages")), &QAction::triggered, this,
            &MainWindow::copySelection);
    connect(make(this, QStringLiteral("paste"), tr("&Paste"), QKeySequence::Paste, tr("Paste stages")), &QAction::triggered, this,
            &MainWindow::pasteClipboard);
    connect(make(this, QStringLiteral("delete"), tr("&Delete"), QKeySequence::Delete, tr("Delete the selected stages and edges")),
            &QAction::triggered, this, [this] {
                if (m_scene)
                    m_scene->deleteSelection();
            });
    connect(make(this, QStringLiteral("selectAll"), tr("Select &All"), QKeySequence::SelectAll, tr("Select every stage")), &QAction::triggered,
            this, [this] {
                if (m_scene && m_document)
                    m_scene->selectNodes(m_document->nodeIds());
            });
    connect(make(this, QStringLiteral("findStage"), tr("&Find Stage…"), QKeySequence::Find, tr("Search the stage palette")), &QAction::triggered,
            this, [this] {
                m_paletteDock->show();
                m_paletteSearch->setFocus();
                m_paletteSearch->selectAll();
            });

    connect(make(this, QStringLiteral("zoomIn"), tr("Zoom &In"), QKeySequence::ZoomIn, tr("Zoom into the canvas")), &QAction::triggered, this,
            [this] {
                if (m_view)
                    m_view->zoomIn();
            });
    connect(make(this, QStringLiteral("zoomOut"), tr("Zoom &Out"), QKeySequence::ZoomOut, tr("Zoom out of the canvas")), &QAction::triggered,
            this, [this] {
                if (m_view)
                    m_view->zoomOut();
            });
    connect(make(this, QStringLiteral("fit"), tr("&Fit Pipeline"), QKeySequence(Qt::CTRL | Qt::Key_0), tr("Show every stage")),
            &QAction::triggered, this, [this] {
                if (m_view)
                    m_view->fitAll();
            });
    connect(make(this, QStringLiteral("arrange"), tr("&Arrange Stages"), QKeySequence(Qt::CTRL | Qt::Key_L), tr("Lay the stages out left to right")),
            &QAction::triggered, this, [this] {
                if (m_document)
                    m_document->autoLayout();
                if (m_view)
                    m_view->fitAll(); // every stage in view after the move
            });

    connect(make(this, QStringLiteral("run"), tr("&Run"), QKeySequence(Qt::Key_F5), tr("Run the project: train its model, or profile its pipeline")),
            &QAction::triggered, this, &MainWindow::startRun);
    connect(make(this, QStringLiteral("pause"), tr("&Pause"), QKeySequence(Qt::Key_F8), tr("Pause or resume the run between steps")),
            &QAction::triggered, this, &MainWindow::togglePause);
    connect(make(this, QStringLiteral("stop"), tr("S&top"), QKeySequence(Qt::SHIFT | Qt::Key_F5), tr("Stop the run (a checkpoint is kept)")),
            &QAction::triggered, this, &MainWindow::stopRun);
    connect(make(this, QStringLiteral("preview"), tr("Pre&view Stage"), QKeySequence(Qt::Key_F6), tr("Show the first elements the selected stage emits")),
            &QAction::triggered, this, &MainWindow::previewSelected);
    connect(make(this, QStringLiteral("overlay"), tr("&Compare With Past Runs…"), QKeySequence(), tr("Overlay this project's past runs on the charts, or take them off")),
            &QAction::triggered, this, &MainWindow::overlayPastRun);
    connect(make(this, QStringLiteral("importKeras"), tr("&Import Keras Model…"), QKeySequence(),
                 tr("Make a Keras 3 model (.keras, or to_json + .weights.h5) the project's model, its weights the initial ones")),
            &QAction::triggered, this, &MainWindow::importKerasModel);
    connect(make(this, QStringLiteral("exportModel"), tr("&Export Model…"), QKeySequence(),
                 tr("Write the shown run's model as safetensors, with model.py: the same model for PyTorch")),
            &QAction::triggered, this, &MainWindow::exportModel);
    connect(make(this, QStringLiteral("tryAdvice"), tr("&Try Advice"), QKeySequence(Qt::CTRL | Qt::Key_T),
                 tr("Measure the change the bottleneck's advice names (after a run whose advice is a parameter)")),
            &QAction::triggered, this, &MainWindow::tryAdvice);
    connect(make(this, QStringLiteral("userGuide"), tr("User &Guide"), QKeySequence::HelpContents,
                 tr("Read the guides shipped with Sluice: getting started, pipeline ops, training, profiling, Python")),
            &QAction::triggered, this, &MainWindow::showUserGuide);
    connect(make(this, QStringLiteral("about"), tr("&About Sluice"), QKeySequence(), tr("Version and build features")), &QAction::triggered, this,
            &MainWindow::showAbout);
    // Redo answers both habits (Ctrl+Shift+Z and Ctrl+Y), whatever the platform's table says.
    QList<QKeySequence> redoKeys = QKeySequence::keyBindings(QKeySequence::Redo);
    for (const QKeySequence &k : {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)})
        if (!redoKeys.contains(k))
            redoKeys << k;
    action(QStringLiteral("redo"))->setShortcuts(redoKeys);
    action(QStringLiteral("pause"))->setCheckable(true);
    refreshIcons();
    for (QAction *a : findChildren<QAction *>())
        addAction(a); // shortcuts work wherever the focus is in the window
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(action(QStringLiteral("new")));
    file->addAction(action(QStringLiteral("open")));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addSeparator();
    file->addAction(action(QStringLiteral("save")));
    file->addAction(action(QStringLiteral("saveAs")));
    file->addAction(action(QStringLiteral("close")));
    file->addSeparator();
    file->addAction(action(QStringLiteral("importKeras")));
    file->addSeparator();
    file->addAction(action(QStringLiteral("quit")));

    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    for (const char *name : {"undo", "redo", "", "cut", "copy", "paste", "delete", "", "selectAll", "findStage"})
        name[0] ? (void)edit->addAction(action(QString::fromLatin1(name))) : (void)edit->addSeparator();

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    for (const char *name : {"zoomIn", "zoomOut", "fit", "arrange"})
        m_viewMenu->addAction(action(QString::fromLatin1(name)));
    m_viewMenu->addSeparator();
    for (QDockWidget *d : {m_paletteDock, m_inspectorDock, m_modelDock, m_chartsDock, m_profileDock, m_consoleDock, m_previewDock, m_historyDock})
        m_viewMenu->addAction(d->toggleViewAction());
    m_viewMenu->addSeparator();
    QMenu *themes = m_viewMenu->addMenu(tr("&Theme"));
    auto *group = new QActionGroup(themes);
    for (Theme theme : {Theme::System, Theme::Light, Theme::Dark}) {
        const QString label = theme == Theme::System ? tr("Follow the &System") : theme == Theme::Light ? tr("&Light") : tr("&Dark");
        QAction *a = themes->addAction(label);
        a->setObjectName(QStringLiteral("theme-") + themeName(theme));
        a->setCheckable(true);
        a->setChecked(savedTheme() == theme);
        group->addAction(a);
        connect(a, &QAction::triggered, this, [this, theme] {
            applyTheme(theme);
            if (m_scene)
                m_scene->update();
        });
    }

    QMenu *run = menuBar()->addMenu(tr("&Run"));
    for (const char *name : {"run", "pause", "stop", "", "preview", "tryAdvice", "", "overlay", "exportModel"})
        name[0] ? (void)run->addAction(action(QString::fromLatin1(name))) : (void)run->addSeparator();

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(action(QStringLiteral("userGuide")));
    help->addSeparator();
    help->addAction(action(QStringLiteral("about")));

    QToolBar *bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    for (const char *name : {"new", "open", "save", "", "undo", "redo", "", "run", "pause", "stop", "preview", "", "fit", "arrange"})
        name[0] ? (void)bar->addAction(action(QString::fromLatin1(name))) : (void)bar->addSeparator();
}

void MainWindow::updateActions()
{
    const bool open = m_document != nullptr;
    const bool running = m_session->isRunning();
    const bool oneSelected = open && m_scene && m_scene->selectedNodeIds().size() == 1;
    for (const char *name : {"save", "saveAs", "close", "cut", "copy", "paste", "delete", "selectAll", "zoomIn", "zoomOut", "fit", "arrange", "overlay"})
        action(QString::fromLatin1(name))->setEnabled(open);
    action(QStringLiteral("undo"))->setEnabled(open && m_document->undoStack()->canUndo());
    action(QStringLiteral("redo"))->setEnabled(open && m_document->undoStack()->canRedo());
    action(QStringLiteral("run"))->setEnabled(open && !running);
    action(QStringLiteral("pause"))->setEnabled(running);
    action(QStringLiteral("pause"))->setChecked(running && m_session->isPaused()); // shown pressed while paused
    action(QStringLiteral("pause"))->setText(m_session->isPaused() ? tr("Res&ume") : tr("&Pause"));
    action(QStringLiteral("stop"))->setEnabled(running);
    action(QStringLiteral("preview"))->setEnabled(oneSelected);
    action(QStringLiteral("tryAdvice"))->setEnabled(canTryAdvice());
    action(QStringLiteral("exportModel"))->setEnabled(canExportModel());
    action(QStringLiteral("importKeras"))->setEnabled(open && !running && !m_importJob->isRunning());
}

UserGuide *MainWindow::userGuide() const { return m_userGuide; }

void MainWindow::showUserGuide()
{
    if (!m_userGuide)
        m_userGuide = new UserGuide(this); // kept: it reopens where the user left it
    m_userGuide->show();
    m_userGuide->raise();
    m_userGuide->activateWindow();
}

void MainWindow::showAbout()
{
    const DeviceQuery devices = queryGpuDevices();
    QString gpus = devices.devices.empty() ? tr("no GPU found (%1)").arg(QString::fromStdString(devices.reason)) : QString();
    for (const auto &d : devices.devices)
        gpus += QStringLiteral("%1<br>").arg(QString::fromStdString(d.name).toHtmlEscaped());
    QMessageBox::about(this, tr("About Sluice"),
                       tr("<h3>Sluice %1</h3><p>A workbench for machine-learning input pipelines and data-parallel training: "
                          "tf.data stages on a canvas over memory-mapped data, Keras-style models mirrored over every device, "
                          "live per-stage throughput and the bottleneck.</p>"
                          "<p>CUDA: %2<br>MPI: %3<br>GPUs: %4</p>")
                           .arg(QCoreApplication::applicationVersion(), devices.builtWithCuda ? tr("built in") : tr("not built"),
                                QStringLiteral(SLUICE_MPI_TEXT), gpus));
}

void MainWindow::copySelection()
{
    if (!m_scene || m_scene->selectedNodeIds().isEmpty())
        return;
    auto *mime = new QMimeData;
    const QByteArray json = QJsonDocument(m_document->copy(m_scene->selectedNodeIds())).toJson(QJsonDocument::Compact);
    mime->setData(widgets::ProjectDocument::mimeType(), json);
    mime->setText(QString::fromUtf8(json)); // readable when pasted into an editor
    QApplication::clipboard()->setMimeData(mime);
}

void MainWindow::cutSelection()
{
    if (!m_scene || m_scene->selectedNodeIds().isEmpty())
        return;
    copySelection();
    m_scene->deleteSelection();
}

void MainWindow::pasteClipboard()
{
    if (!m_document)
        return;
    const QMimeData *mime = QApplication::clipboard()->mimeData();
    if (!mime || !mime->hasFormat(widgets::ProjectDocument::mimeType()))
        return;
    const QJsonObject fragment = QJsonDocument::fromJson(mime->data(widgets::ProjectDocument::mimeType())).object();
    const QStringList added = m_document->paste(fragment, QPointF(40, 40));
    m_scene->selectNodes(added);
}

} // namespace sluice::gui
