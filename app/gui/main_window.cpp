#include "gui/main_window.h"

#include "document/json_qt.h"

#include "canvas/pipeline_scene.h"
#include "canvas/pipeline_view.h"
#include "charts/charts_panel.h"
#include "console/run_console.h"
#include "document/project_document.h"
#include "gui/autosave.h"
#include "gui/welcome_page.h"
#include "inspector/parameter_inspector.h"
#include "model/model_panel.h"
#include "pipeline/ops/host_ops.h"
#include "pipeline/engine/op_registry.h"
#include "preview/preview_panel.h"
#include "profile/profile_panel.h"
#include "stage_palette_filter.h"
#include "stage_palette_model.h"
#include "telemetry/cpu_usage.h"
#include "telemetry/nvml_telemetry.h"

#include <utility>
#include <QDir>
#include <QDockWidget>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QGuiApplication>
#include <QScreen>
#include <QScrollArea>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTreeView>
#include <QUndoView>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

// The icons live in sluice_gui, a static library: its resources must be registered by hand.
static void initResources() { Q_INIT_RESOURCE(sluice); }

namespace sluice::gui {

namespace {

// Where the project's "module:function" names are looked for: its folder, then its python_path.
QStringList moduleFolders(const Project &project)
{
    QStringList folders;
    if (auto path = pipeline::hostSearchPath(project); path.ok())
        for (const std::string &folder : *path)
            folders << QString::fromStdString(folder);
    return folders;
}

} // namespace

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent)
{
    initResources();
    setObjectName(QStringLiteral("workbench"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/sluice.svg")));
    m_centre = new QStackedWidget(this);
    m_welcome = new WelcomePage(m_centre);
    m_centre->addWidget(m_welcome);
    setCentralWidget(m_centre);
    connect(m_welcome, &WelcomePage::newProjectRequested, this, &MainWindow::newProject);
    connect(m_welcome, &WelcomePage::openRequested, this, &MainWindow::open);
    connect(m_welcome, &WelcomePage::openPathRequested, this, [this](const QString &path) { openProject(path); });
    connect(m_welcome, &WelcomePage::openExampleRequested, this, [this](const QString &path) { openExample(path); });

    m_session = new bridge::RunSession(this);
    connect(m_session, &bridge::RunSession::runEvents, this, &MainWindow::onRunEvents);
    connect(m_session, &bridge::RunSession::pipelineStats, this, &MainWindow::onPipelineStats);
    connect(m_session, &bridge::RunSession::finished, this, &MainWindow::onRunFinished);
    connect(m_session, &bridge::RunSession::pausedChanged, this, [this] { updateActions(); });
    m_previewJob = new bridge::PreviewJob(this);
    m_adviceJob = new bridge::AdviceTrialJob(this);
    connect(m_adviceJob, &bridge::AdviceTrialJob::finished, this, &MainWindow::onAdviceTried);
    connect(m_adviceJob, &bridge::AdviceTrialJob::failed, this, &MainWindow::onAdviceFailed);
    m_exportJob = new bridge::ModelExportJob(this);
    connect(m_exportJob, &bridge::ModelExportJob::finished, this, &MainWindow::onModelExported);
    connect(m_exportJob, &bridge::ModelExportJob::failed, this, &MainWindow::onModelExportFailed);
    m_importJob = new bridge::ModelImportJob(this);
    connect(m_importJob, &bridge::ModelImportJob::finished, this, &MainWindow::onModelImported);
    connect(m_importJob, &bridge::ModelImportJob::failed, this, &MainWindow::onModelImportFailed);
    connect(m_previewJob, &bridge::PreviewJob::ready, this, [this](quint64, const pipeline::StagePreview &p) { m_preview->showPreview(p); });
    connect(m_previewJob, &bridge::PreviewJob::failed, this, [this](quint64, const QString &message) { m_preview->showError(message); });
    m_validator = new widgets::ProjectValidator(this);
    connect(m_validator, &widgets::ProjectValidator::validated, this, &MainWindow::onValidated);
    m_moduleWatcher = new widgets::ModuleWatcher(this);
    connect(m_moduleWatcher, &widgets::ModuleWatcher::modulesChanged, this, [this] {
        if (m_document) // the stage's import error or docstring may have changed with the file
            m_validator->validate(m_document->project());
    });

    m_runLabel = new QLabel(tr("Idle"), this);
    m_inputBoundLabel = new QLabel(this);
    m_inputBoundLabel->setToolTip(tr("The share of step time spent waiting for input, classified as TensorFlow's input-pipeline analyser does "
                                     "(under 5%: not input-bound, 5–20%: moderately, over 20%: highly)"));
    statusBar()->addPermanentWidget(m_inputBoundLabel);
    statusBar()->addPermanentWidget(m_runLabel);

    buildDocks();
    createActions();
    createMenus();

    m_autosaveTimer.setInterval(30 * 1000);
    connect(&m_autosaveTimer, &QTimer::timeout, this, &MainWindow::autosaveNow);
    m_autosaveTimer.start();
    m_deviceTimer.setInterval(250); // device charts: four samples a second
    connect(&m_deviceTimer, &QTimer::timeout, this, &MainWindow::sampleDevices);

    if (const QScreen *screen = QGuiApplication::primaryScreen())
        resize(defaultSize(screen->availableGeometry().size()));
    else
        resize(defaultSize(QSize(1400, 900)));
    updateTitle();
    updateActions();
}

MainWindow::~MainWindow()
{
    // The scene refers to the document: drop the views first.
    delete m_view;
    m_view = nullptr;
    delete m_scene;
    m_scene = nullptr;
}

void MainWindow::buildDocks()
{
    setDockNestingEnabled(true);
    auto dock = [this](const QString &name, const QString &title, QWidget *content, Qt::DockWidgetArea area) {
        auto *d = new QDockWidget(title, this);
        d->setObjectName(name); // saveState() keys the layout by object name
        d->setWidget(content);
        addDockWidget(area, d);
        return d;
    };
    // Long forms (a model of many layers, a stage of many parameters) scroll inside their dock:
    // otherwise their height would become the window's minimum, beyond a laptop's screen.
    auto scrolled = [this](QWidget *form) {
        auto *area = new QScrollArea(this);
        area->setWidget(form);
        area->setWidgetResizable(true);
        area->setFrameShape(QFrame::NoFrame);
        area->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
        return area;
    };

    // Palette: search box over the grouped stage list; drag onto the canvas or double-click.
    auto *palette = new QWidget(this);
    m_paletteSearch = new QLineEdit(palette);
    m_paletteSearch->setObjectName(QStringLiteral("paletteSearch"));
    m_paletteSearch->setPlaceholderText(tr("Search stages (Ctrl+F)"));
    m_paletteSearch->setClearButtonEnabled(true);
    m_paletteModel = new widgets::StagePaletteModel(palette);
    m_paletteFilter = new widgets::StagePaletteFilter(palette);
    m_paletteFilter->setSourceModel(m_paletteModel);
    m_paletteView = new QTreeView(palette);
    m_paletteView->setObjectName(QStringLiteral("palette"));
    m_paletteView->setModel(m_paletteFilter);
    m_paletteView->setHeaderHidden(true);
    m_paletteView->setDragEnabled(true);
    m_paletteView->setDragDropMode(QAbstractItemView::DragOnly);
    m_paletteView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_paletteView->expandAll();
    connect(m_paletteSearch, &QLineEdit::textChanged, this, [this](const QString &text) {
        m_paletteFilter->setSearchText(text);
        m_paletteView->expandAll();
    });
    // Enter or a double-click on a stage, or Enter in the search box (its best match), adds it
    // after the selected stage, connected; the search keeps the focus so that the next stage of a
    // chain can be typed straight away.
    connect(m_paletteView, &QTreeView::activated, this, [this](const QModelIndex &index) {
        const QString op = index.data(widgets::StagePaletteModel::OpNameRole).toString();
        if (!op.isEmpty() && m_view)
            m_view->insertAfterSelection(op);
    });
    connect(m_paletteSearch, &QLineEdit::returnPressed, this, [this] {
        const QString op = m_paletteFilter->bestMatch().data(widgets::StagePaletteModel::OpNameRole).toString();
        if (op.isEmpty() || !m_view) {
            statusBar()->showMessage(tr("No stage matches \"%1\"").arg(m_paletteSearch->text()), 5000);
            return;
        }
        m_view->insertAfterSelection(op);
        m_paletteSearch->selectAll();
    });
    auto *paletteLayout = new QVBoxLayout(palette);
    paletteLayout->setContentsMargins(4, 4, 4, 4);
    paletteLayout->addWidget(m_paletteSearch);
    paletteLayout->addWidget(m_paletteView);
    m_paletteDock = dock(QStringLiteral("paletteDock"), tr("Stages"), palette, Qt::LeftDockWidgetArea);

    m_inspector = new widgets::ParameterInspector(this);
    m_inspectorDock = dock(QStringLiteral("inspectorDock"), tr("Inspector"), scrolled(m_inspector), Qt::RightDockWidgetArea);
    connect(m_inspector, &widgets::ParameterInspector::parameterEdited, this, [this](const QString &id, const QString &param, const QJsonValue &value) {
        if (m_document)
            m_document->setParameter(id, param, value);
    });
    m_modelPanel = new widgets::ModelPanel(this);
    m_modelDock = dock(QStringLiteral("modelDock"), tr("Model and Training"), scrolled(m_modelPanel), Qt::RightDockWidgetArea);
    connect(m_modelPanel, &widgets::ModelPanel::modelEdited, this, [this](const QJsonObject &model) {
        if (m_document)
            m_document->setModel(model);
    });
    connect(m_modelPanel, &widgets::ModelPanel::trainingEdited, this, [this](const QJsonObject &training) {
        if (m_document)
            m_document->setTraining(training);
    });
    // The global batch size belongs to the pipeline's batch stage (core reads it there).
    connect(m_modelPanel, &widgets::ModelPanel::batchSizeEdited, this, [this](int batchSize) {
        if (const QString batch = batchStage(); m_document && !batch.isEmpty())
            m_document->setParameter(batch, QStringLiteral("batch_size"), batchSize);
    });
    tabifyDockWidget(m_inspectorDock, m_modelDock);
    m_inspectorDock->raise();

    m_charts = new widgets::ChartsPanel(this);
    m_chartsDock = dock(QStringLiteral("chartsDock"), tr("Charts"), m_charts, Qt::BottomDockWidgetArea);
    m_console = new widgets::RunConsole(this);
    m_consoleDock = dock(QStringLiteral("consoleDock"), tr("Console"), m_console, Qt::BottomDockWidgetArea);
    m_preview = new widgets::PreviewPanel(this);
    m_previewDock = dock(QStringLiteral("previewDock"), tr("Preview"), m_preview, Qt::BottomDockWidgetArea);
    m_profile = new widgets::ProfilePanel(this);
    m_profileDock = dock(QStringLiteral("profileDock"), tr("Profile"), m_profile, Qt::BottomDockWidgetArea);
    tabifyDockWidget(m_chartsDock, m_profileDock);
    tabifyDockWidget(m_profileDock, m_consoleDock);
    tabifyDockWidget(m_consoleDock, m_previewDock);
    m_chartsDock->raise();

    m_history = new QUndoView(this);
    m_history->setEmptyLabel(tr("<opened>"));
    m_historyDock = dock(QStringLiteral("historyDock"), tr("History"), m_history, Qt::LeftDockWidgetArea);
    m_historyDock->hide();
}

QSize MainWindow::defaultSize(const QSize &screenRoom)
{
    // Room for the canvas and both side docks where the screen has it, never more than the screen.
    return QSize(1400, 900).boundedTo(screenRoom);
}

void MainWindow::applyDefaultLayout()
{
    // Side docks narrow (a share of the width, within what their forms need), the charts about
    // a third of the height: on 1280×800 the canvas keeps half the width.
    const int palette = std::clamp(width() / 6, 180, 240), inspector = std::clamp(width() * 2 / 7, 300, 420);
    resizeDocks({m_paletteDock, m_inspectorDock}, {palette, inspector}, Qt::Horizontal);
    resizeDocks({m_chartsDock}, {height() / 3}, Qt::Vertical);
}

void MainWindow::setDocument(std::unique_ptr<widgets::ProjectDocument> document)
{
    if (m_session->isRunning())
        m_session->stop();
    clearAutosave();
    // Views of the old document go first, then the document.
    if (m_view) {
        m_centre->removeWidget(m_view);
        delete m_view;
        m_view = nullptr;
    }
    delete m_scene;
    m_scene = nullptr;
    m_document = std::move(document);
    ++m_documentSerial;
    m_adviceJob->cancel(); // a trial of the previous project: its result is not offered for this one
    m_lastAdvice = {};
    m_lastSnapshot = {};
    m_check = {};
    m_shownModel = m_shownTraining = QJsonObject{{QStringLiteral("?"), true}}; // forces the first refresh
    m_shownFeatures.clear();
    m_inspector->showNothing();
    // Runs belong to their project: nothing of the previous one's stays on screen.
    m_charts->reset();
    m_profile->clear();
    m_inputBoundLabel->clear();
    m_runLabel->setText(tr("Idle"));
    m_lastRunFolder.clear();
    m_finishedRuns = 0;
    if (!m_document) {
        m_history->setStack(nullptr);
        m_centre->setCurrentWidget(m_welcome);
        m_welcome->refresh();
        updateTitle();
        updateActions();
        return;
    }
    m_document->setParent(nullptr);
    m_autosaveKey = Autosave::keyFor(m_document->filePath());
    m_scene = new widgets::PipelineScene(m_document.get(), this);
    m_view = new widgets::PipelineView(m_scene, m_centre);
    m_centre->addWidget(m_view);
    m_centre->setCurrentWidget(m_view);
    m_history->setStack(m_document->undoStack());
    connect(m_view, &widgets::PipelineView::statusMessage, this, [this](const QString &message) { statusBar()->showMessage(message, 8000); });
    connect(m_scene, &QGraphicsScene::selectionChanged, this, &MainWindow::onSelectionChanged);
    connect(m_scene, &widgets::PipelineScene::nodeActivated, this, [this](const QString &) {
        m_inspectorDock->show();
        m_inspectorDock->raise();
    });
    connect(m_scene, &widgets::PipelineScene::modelCardActivated, this, [this](const QString &list, const QString &name) {
        m_modelDock->show();
        m_modelDock->raise();
        m_modelPanel->showItem(list, name);
    });
    connect(m_document.get(), &widgets::ProjectDocument::changed, this, &MainWindow::onDocumentChanged);
    connect(m_document.get(), &widgets::ProjectDocument::dirtyChanged, this, [this] { updateTitle(); });
    connect(m_document.get(), &widgets::ProjectDocument::filePathChanged, this, [this] { updateTitle(); });
    connect(m_document->undoStack(), &QUndoStack::canUndoChanged, this, [this] { updateActions(); });
    connect(m_document->undoStack(), &QUndoStack::canRedoChanged, this, [this] { updateActions(); });
    refreshModelPanel();
    m_validator->validate(m_document->project());
    m_view->resetZoom();
    // Once the view has its size (after this event), show every stage.
    QTimer::singleShot(0, m_view, [view = m_view] { view->fitAll(); });
    m_fitOnFirstCheck = true;
    m_view->setFocus();
    showNewestRun();
    updateTitle();
    updateActions();
}

void MainWindow::onDocumentChanged()
{
    m_validator->validate(m_document->project());
    onSelectionChanged();
    refreshModelPanel();
    updateActions();
}

QStringList MainWindow::featuresOfInputs(const QString &nodeId) const
{
    QStringList features;
    for (const std::string &input : m_document->project().inputsOf(nodeId.toStdString()))
        for (const QString &name : m_check.stages.value(QString::fromStdString(input)).featureNames)
            if (!features.contains(name))
                features << name;
    return features;
}

QStringList MainWindow::outputFeatures() const
{
    if (!m_document)
        return {};
    auto output = m_document->project().outputNode();
    return output.ok() ? m_check.stages.value(QString::fromStdString(*output)).featureNames : QStringList();
}

void MainWindow::onSelectionChanged()
{
    if (!m_document || !m_scene)
        return;
    const QStringList selected = m_scene->selectedNodeIds();
    if (selected.size() != 1) {
        m_inspector->showNothing();
        updateActions();
        return;
    }
    const PipelineNode *node = m_document->project().findNode(selected.front().toStdString());
    if (!node)
        return;
    m_inspector->showNode(selected.front(), QString::fromStdString(node->op), widgets::toQtObject(node->params), featuresOfInputs(selected.front()), m_document->folder(),
                          moduleFolders(m_document->project()));
    const widgets::StageCheck stage = m_check.stages.value(selected.front());
    QMap<QString, QString> errors;
    if (!stage.error.isEmpty())
        errors.insert(stage.parameter, stage.error);
    m_inspector->setNodeErrors(errors);
    m_inspector->setHostFunction(stage.functionParam, stage.functionDoc, stage.functionFile);
    showTunedValues();
    updateActions();
}

void MainWindow::onValidated(const widgets::ProjectCheck &check)
{
    m_check = check;
    if (m_scene)
        m_scene->setCheck(check);
    if (std::exchange(m_fitOnFirstCheck, false) && !check.modelGraph.isEmpty())
        m_view->fitAll(); // the model's cards came with the check: the whole project in view
    int problems = 0;
    for (const widgets::StageCheck &stage : check.stages)
        problems += stage.error.isEmpty() ? 0 : 1;
    if (problems)
        statusBar()->showMessage(tr("%n stage(s) need attention: hover a red stage for the reason", nullptr, problems), 6000);
    watchPythonModules();
    // Features downstream may have changed: refresh the inspector's pickers and the model panel.
    onSelectionChanged();
    refreshModelPanel();
    // The model checked on every edit, as the stages are: its error shown at once (where it can be
    // placed, on the layer), gone once fixed; its summary when it builds.
    m_modelPanel->showError(check.modelFailure);
    m_modelPanel->setSummary(check.modelSummary);
}

void MainWindow::watchPythonModules()
{
    // Only projects naming Python functions watch their folders.
    if (!m_document)
        return;
    const Project &project = m_document->project();
    const bool usesPython = std::any_of(project.nodes.begin(), project.nodes.end(),
                                        [](const PipelineNode &node) { return !pipeline::hostCallableParam(node).empty(); });
    QStringList files;
    for (const widgets::StageCheck &stage : std::as_const(m_check.stages))
        files << stage.functionFile;
    m_moduleWatcher->watch(usesPython ? moduleFolders(project) : QStringList(), usesPython ? files : QStringList());
}

QString MainWindow::batchStage() const
{
    // The one batch stage upstream of the pipeline's output (none, or several: nothing to edit).
    if (!m_document)
        return {};
    const Project &project = m_document->project();
    auto output = project.outputNode();
    if (!output)
        return {};
    QStringList found;
    for (const std::string &id : project.upstreamOf(*output, true))
        if (const PipelineNode *node = project.findNode(id); node && node->op == "batch")
            found << QString::fromStdString(id);
    return found.size() == 1 ? found.front() : QString();
}

void MainWindow::refreshModelPanel()
{
    // Only when something it shows changed: re-setting a panel the user is typing in would
    // take the focus away from them.
    if (!m_document)
        return;
    const QJsonObject model = widgets::toQtObject(m_document->project().model), training = widgets::toQtObject(m_document->project().training);
    const QStringList features = outputFeatures();
    if (model != m_shownModel || features != m_shownFeatures) {
        m_shownModel = model;
        m_shownFeatures = features;
        m_modelPanel->setModel(model, features);
    }
    if (training != m_shownTraining) {
        m_shownTraining = training;
        m_modelPanel->setTraining(training);
    }
    if (const QString batch = batchStage(); !batch.isEmpty()) {
        const nlohmann::json &size = m_document->project().findNode(batch.toStdString())->params.value("batch_size", nlohmann::json());
        if (size.is_number_integer())
            m_modelPanel->setBatchSize(size.get<int>());
    }
    if (auto output = m_document->project().outputNode(); output.ok())
        m_modelPanel->setFeatureShapes(m_check.stages.value(QString::fromStdString(*output)).featureTypes);
}

void MainWindow::updateTitle()
{
    const QString name = m_document ? m_document->displayName() : QString();
    setWindowTitle(m_document ? QStringLiteral("%1[*] — Sluice").arg(name) : QStringLiteral("Sluice"));
    setWindowModified(m_document && m_document->isDirty());
}

} // namespace sluice::gui
