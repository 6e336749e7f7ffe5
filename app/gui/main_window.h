#pragma once
// The workbench window: the canvas in the middle, the stage palette on the left, the inspector
// and the model panel on the right, charts, console and preview below. It owns the open
// ProjectDocument and connects the views to it; all computing happens in core through the
// bridge (RunSession, PreviewJob) and the background validator, so the window never waits.
//
// The class is split by feature across files (docs/architecture.md, small rooms):
//   main_window.cpp          construction, docks, the document's views
//   main_window_actions.cpp  actions, menus, toolbar, shortcuts, theme, about
//   main_window_files.cpp    new / open / save / recent / autosave and recovery / close
//   main_window_run.cpp      run, pause, stop, preview, live updates, past runs
//   main_window_advice.cpp   Try Advice: the verdict's change measured, then applied undoably
//
// Threading: GUI thread only.

#include "bridge/advice_trial_job.h"
#include "bridge/model_export_job.h"
#include "bridge/model_import_job.h"
#include "bridge/preview_job.h"
#include "bridge/run_session.h"
#include "charts/project_runs.h"
#include "document/module_watcher.h"
#include "document/project_validator.h"

#include <QJsonObject>
#include <QMainWindow>
#include <QPointer>
#include <QTimer>

#include <memory>

class QAction;
class QDockWidget;
class QLabel;
class QLineEdit;
class QMenu;
class QStackedWidget;
class QTreeView;
class QUndoView;

namespace sluice::widgets {
class ChartsPanel;
class ModelPanel;
class ParameterInspector;
class PipelineScene;
class PipelineView;
class PreviewPanel;
class ProfilePanel;
class ProjectDocument;
class RunConsole;
class StagePaletteFilter;
class StagePaletteModel;
} // namespace sluice::widgets

namespace sluice {
class CpuUsageSampler;
}
namespace sluice::telemetry {
class NvmlTelemetry;
}

namespace sluice::gui {

class UserGuide;
class WelcomePage;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Opens a project file; a broken or newer file shows what is wrong and changes nothing.
    bool openProject(const QString &path);
    // Opens an example project; examples installed read-only (a package's share/sluice/projects)
    // are first copied to the user's documents ("Sluice examples"), where data and runs can be written.
    bool openExample(const QString &path);
    // Offers any autosaved work left by a session that crashed (called once at start).
    void offerRecovery();
    // How often unsaved edits are autosaved (30 s unless changed; tests shorten it).
    void setAutosaveInterval(int milliseconds) { m_autosaveTimer.setInterval(milliseconds); }
    // The dock sizes of a first start (no remembered layout): the canvas gets the room.
    void applyDefaultLayout();
    // The window's size at a first start on a screen whose free area is `screenRoom`.
    static QSize defaultSize(const QSize &screenRoom);

    // For tests and scripts: the parts users act on.
    widgets::ProjectDocument *document() const { return m_document.get(); }
    widgets::PipelineScene *scene() const { return m_scene; }
    widgets::PipelineView *view() const { return m_view; }
    widgets::ChartsPanel *charts() const { return m_charts; }
    widgets::RunConsole *console() const { return m_console; }
    widgets::ParameterInspector *inspector() const { return m_inspector; }
    widgets::ModelPanel *modelPanel() const { return m_modelPanel; }
    widgets::PreviewPanel *previewPanel() const { return m_preview; }
    widgets::ProfilePanel *profilePanel() const { return m_profile; }
    bridge::RunSession *runSession() const { return m_session; }
    WelcomePage *welcomePage() const { return m_welcome; }
    QAction *action(const QString &name) const; // by objectName ("run", "save", …)
    QString inputBoundText() const;
    bool lastRunOk() const { return m_lastRunStatus == bridge::RunSession::Status::Ok; }
    bool hasFinishedRun() const { return m_finishedRuns > 0; }
    QString lastRunFolder() const { return m_lastRunFolder; }
    bridge::AdviceTrialJob *adviceJob() const { return m_adviceJob; }
    bridge::ModelExportJob *exportJob() const { return m_exportJob; }
    bridge::ModelImportJob *importJob() const { return m_importJob; }
    UserGuide *userGuide() const; // once opened
    QJsonObject lastAdvice() const { return m_lastAdvice; }           // the last snapshot's "advice_change"
    QJsonObject lastAdviceTrial() const { return m_lastAdviceTrial; } // AdviceTrial::toJson() of the last trial

public Q_SLOTS:
    // Run ▸ Export Model: the shown run's model as safetensors + model.py for PyTorch, to `path`
    // (exportModel() asks for it), built as the run's project built it (main_window_export.cpp).
    void exportModel();
    void exportModelTo(const QString &path);
    // File ▸ Import Keras Model: asks for the model (and a .weights.h5 for a to_json() file), then
    // importKerasModelFrom; the result becomes the project's model and initial weights, one undoable edit.
    void importKerasModel();
    void importKerasModelFrom(const QString &modelFile, const QString &weightsH5, bool replace);
    void newProject();
    void open();
    bool save();
    bool saveAs();
    // Closes the project (after offering to save its changes) and shows the welcome page; false
    // when the user cancelled.
    bool closeProject();
    void startRun();
    void togglePause();
    void stopRun();
    void previewSelected();
    void overlayPastRun();
    void showUserGuide(); // Help ▸ User Guide (F1)
    void tryAdvice();
    // Sets the parameter an advice change names (AdviceChange::toJson()), as one undoable edit.
    void applyAdvice(const QJsonObject &change);

protected:
    void closeEvent(QCloseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    // main_window.cpp
    void buildDocks();
    void setDocument(std::unique_ptr<widgets::ProjectDocument> document);
    void onDocumentChanged();
    void onSelectionChanged();
    void onValidated(const widgets::ProjectCheck &check);
    void watchPythonModules();
    void updateTitle();
    QStringList featuresOfInputs(const QString &nodeId) const;
    QStringList outputFeatures() const;
    void refreshModelPanel();
    QString batchStage() const;
    // main_window_actions.cpp
    void createActions();
    void createMenus();
    void updateActions();
    bool canExportModel() const; // a finished run with weights is shown, and no export or run is going on
    void onModelExported(const QString &weightsFile, const QString &modelPy);
    void onModelExportFailed(const QString &message);
    void onModelImported(const QJsonObject &model, const QString &initialWeights, const QStringList &notes, const QString &summary);
    void onModelImportFailed(const QString &message);
    void refreshIcons();
    void showAbout();
    void copySelection();
    void pasteClipboard();
    void cutSelection();
    // main_window_files.cpp
    bool maybeSave();
    bool saveTo(const QString &path);
    void autosaveNow();
    void clearAutosave();
    void rebuildRecentMenu();
    // main_window_run.cpp
    void onRunEvents(quint64 runId, const QList<events::Event> &events);
    void onPipelineStats(quint64 runId, const events::Stats &stats);
    void onRunFinished(quint64 runId, bridge::RunSession::Status status, const QString &error);
    void sampleDevices();
    void showTunedValues(); // the inspected stage's AUTOTUNE choices in the last snapshot
    void pointModelPanelAt(const std::optional<Error> &problem);
    QString newRunFolder() const;
    QList<widgets::RunSummary> runsOfProject() const;
    void showNewestRun(); // on opening a project: its newest run in the charts
    // main_window_advice.cpp
    void rememberAdvice(const pipeline::PipelineSnapshot &snapshot);
    bool canTryAdvice() const;
    void onAdviceTried(const QJsonObject &change, const QString &summary, const QJsonObject &trial, bool helps);
    void onAdviceFailed(const QJsonObject &change, const QString &message);

    std::unique_ptr<widgets::ProjectDocument> m_document;
    widgets::PipelineScene *m_scene = nullptr; // owned by m_view's lifetime (deleted with the document)
    widgets::PipelineView *m_view = nullptr;
    QStackedWidget *m_centre = nullptr;
    WelcomePage *m_welcome = nullptr;
    QPointer<UserGuide> m_userGuide;

    widgets::StagePaletteModel *m_paletteModel = nullptr;
    widgets::StagePaletteFilter *m_paletteFilter = nullptr;
    QTreeView *m_paletteView = nullptr;
    QLineEdit *m_paletteSearch = nullptr;
    widgets::ParameterInspector *m_inspector = nullptr;
    widgets::ModelPanel *m_modelPanel = nullptr;
    widgets::ChartsPanel *m_charts = nullptr;
    widgets::RunConsole *m_console = nullptr;
    widgets::PreviewPanel *m_preview = nullptr;
    widgets::ProfilePanel *m_profile = nullptr;
    QUndoView *m_history = nullptr;
    QDockWidget *m_paletteDock = nullptr, *m_inspectorDock = nullptr, *m_modelDock = nullptr, *m_chartsDock = nullptr,
                *m_consoleDock = nullptr, *m_previewDock = nullptr, *m_historyDock = nullptr,
                *m_profileDock = nullptr;

    QLabel *m_runLabel = nullptr;
    QLabel *m_inputBoundLabel = nullptr;
    QMenu *m_recentMenu = nullptr;
    QMenu *m_viewMenu = nullptr;

    bridge::RunSession *m_session = nullptr;
    bridge::PreviewJob *m_previewJob = nullptr;
    bridge::AdviceTrialJob *m_adviceJob = nullptr;
    bridge::ModelExportJob *m_exportJob = nullptr;
    bridge::ModelImportJob *m_importJob = nullptr;
    QJsonObject m_lastAdvice, m_lastAdviceTrial;
    pipeline::PipelineSnapshot m_lastSnapshot; // the last run's latest statistics
    int m_lastAdviceThreads = 0;
    int m_documentSerial = 0, m_adviceDocumentSerial = 0; // which document a trial was started on
    widgets::ProjectValidator *m_validator = nullptr;
    widgets::ModuleWatcher *m_moduleWatcher = nullptr; // Python modules the project's functions come from
    widgets::ProjectCheck m_check;
    bool m_fitOnFirstCheck = false; // a project just opened: its first check draws the model, fit it in
    QJsonObject m_shownModel, m_shownTraining; // what the model panel shows
    QStringList m_shownFeatures;
    QTimer m_autosaveTimer;
    QTimer m_deviceTimer;
    QString m_autosaveKey;
    std::unique_ptr<CpuUsageSampler> m_cpuUsage;              // during a run
    std::unique_ptr<telemetry::NvmlTelemetry> m_nvml;         // loaded at the first run
    QString m_lastRunFolder;
    bridge::RunSession::Status m_lastRunStatus = bridge::RunSession::Status::Failed;
    std::optional<Error> m_lastRunError; // the failed RunEnd's error of the current run, with its fields
    int m_finishedRuns = 0;
};

} // namespace sluice::gui
