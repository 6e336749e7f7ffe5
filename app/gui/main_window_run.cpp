// Runs from the workbench: start, pause, stop; live events to the charts, the console, the
// canvas colours and the status bar; stage previews; past runs overlaid for comparison. Every
// run is kept in the project's folder as runs/<time>/, the same record `sluice run --out` writes.
#include "gui/main_window.h"

#include "gui/compare_runs_dialog.h"

#include "canvas/pipeline_scene.h"
#include "charts/charts_panel.h"
#include "console/run_console.h"
#include "document/project_document.h"
#include "inspector/parameter_inspector.h"
#include "model/model_panel.h"
#include "preview/preview_panel.h"
#include "profile/profile_panel.h"
#include "telemetry/cpu_usage.h"
#include "telemetry/nvml_telemetry.h"
#include "events/run_folder.h"

#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>

namespace sluice::gui {

namespace {

QString rate(double perSecond)
{
    if (perSecond >= 1e6)
        return QStringLiteral("%1 M").arg(perSecond / 1e6, 0, 'f', 2);
    if (perSecond >= 1e3)
        return QStringLiteral("%1 k").arg(perSecond / 1e3, 0, 'f', 1);
    return QString::number(perSecond, 'f', 0);
}

} // namespace

QString MainWindow::newRunFolder() const
{
    const QDir runs(QDir(m_document->folder()).filePath(QStringLiteral("runs")));
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    QString folder = runs.filePath(stamp);
    for (int n = 2; QFileInfo::exists(folder); ++n)
        folder = runs.filePath(QStringLiteral("%1-%2").arg(stamp).arg(n));
    return folder;
}

void MainWindow::startRun()
{
    if (!m_document || m_session->isRunning())
        return;
    if (m_document->filePath().isEmpty()) {
        QMessageBox box(QMessageBox::Question, tr("Save Before Running"),
                        tr("Runs are kept next to the project (runs/<time>/), so it needs a file first."), QMessageBox::Cancel, this);
        box.setObjectName(QStringLiteral("saveBeforeRunning"));
        QPushButton *saveAndRun = box.addButton(tr("Save and Run…"), QMessageBox::AcceptRole);
        saveAndRun->setObjectName(QStringLiteral("saveAndRun"));
        box.setDefaultButton(saveAndRun);
        box.exec();
        if (box.clickedButton() != saveAndRun || !saveAs())
            return;
    }
    const bool training = !m_document->project().model.is_null();
    bridge::RunSession::Options options;
    options.runFolder = newRunFolder().toStdString();
    if (training)
        options.checkpointDir = runfolder::path(options.runFolder, runfolder::kCheckpoints);
    else
        options.minSeconds = 10; // a profile long enough for the charts and the tuner to settle; Stop ends it sooner
    if (auto problem = m_session->start(m_document->project(), options)) {
        m_console->appendLog(widgets::LogLevel::Error, tr("Run not started: %1").arg(*problem));
        pointModelPanelAt(m_session->refusal());
        statusBar()->showMessage(tr("Run not started: %1").arg(*problem), 10000);
        m_consoleDock->show();
        m_consoleDock->raise();
        return;
    }
    m_modelPanel->showError(std::nullopt); // an earlier refusal no longer applies
    m_lastRunError.reset();
    m_lastRunFolder = QString::fromStdString(options.runFolder);
    const QString label = QFileInfo(m_lastRunFolder).fileName();
    m_charts->beginRun(m_session->runId(), label);
    m_charts->setCurrentRunFolder(m_lastRunFolder);
    m_profile->clear();
    m_console->appendLog(widgets::LogLevel::Info,
                         tr("%1 started; kept in %2").arg(training ? tr("Training") : tr("Pipeline profile"), QDir::toNativeSeparators(m_lastRunFolder)));
    if (m_scene)
        m_scene->clearActivity();
    m_inputBoundLabel->clear();
    m_runLabel->setText(tr("Running…"));
    m_cpuUsage = std::make_unique<CpuUsageSampler>();
    if (!m_nvml) {
        m_nvml = std::make_unique<telemetry::NvmlTelemetry>();
        if (!m_nvml->available())
            m_console->appendLog(widgets::LogLevel::Info, tr("GPU telemetry: %1").arg(QString::fromStdString(m_nvml->unavailableReason())));
    }
    m_deviceTimer.start();
    m_chartsDock->raise();
    updateActions();
}

void MainWindow::pointModelPanelAt(const std::optional<Error> &problem)
{
    // Errors about the model or training (those with a layer: "layers[2]", "training") point
    // into the panel.
    if (!problem || problem->layer.empty())
        return;
    m_modelPanel->showError(problem);
    m_modelDock->show();
    m_modelDock->raise();
}

void MainWindow::togglePause()
{
    if (!m_session->isRunning())
        return;
    if (m_session->isPaused()) {
        m_session->resume();
        m_runLabel->setText(tr("Running…"));
        m_console->appendLog(widgets::LogLevel::Info, tr("Resumed"));
    } else {
        m_session->pause();
        m_runLabel->setText(tr("Paused"));
        m_console->appendLog(widgets::LogLevel::Info, tr("Paused (between steps)"));
    }
    updateActions();
}

void MainWindow::stopRun()
{
    if (!m_session->isRunning())
        return;
    m_session->stop();
    m_runLabel->setText(tr("Stopping…"));
}

void MainWindow::onRunEvents(quint64 runId, const QList<events::Event> &events)
{
    if (runId != m_session->runId())
        return; // a superseded run
    m_charts->addRunEvents(runId, events);
    m_console->appendRunEvents(runId, events);
    for (const events::Event &event : events)
        if (const auto *end = events::as<events::RunEnd>(event); end && end->error)
            m_lastRunError = *end->error; // placed by onRunFinished, from its fields
    for (auto it = events.rbegin(); it != events.rend(); ++it) {
        const auto *step = events::as<events::Step>(*it);
        if (step && !m_session->isPaused()) {
            m_runLabel->setText(tr("Epoch %1 · step %2 · loss %3 · %4 samples/s")
                                    .arg(step->epoch)
                                    .arg(step->step)
                                    .arg(step->loss, 0, 'g', 4)
                                    .arg(rate(step->samplesPerSecond)));
            break;
        }
    }
}

void MainWindow::onPipelineStats(quint64 runId, const events::Stats &stats)
{
    if (runId != m_session->runId())
        return;
    const pipeline::PipelineSnapshot &snapshot = stats.snapshot;
    m_charts->addPipelineStats(runId, snapshot);
    m_profile->addSnapshot(stats);
    if (m_scene)
        m_scene->setStats(snapshot);
    QString text;
    if (snapshot.consumerAttached)
        text = tr("Input: %1 (%2% of step time waiting)")
                   .arg(QString::fromLatin1(pipeline::inputBoundName(snapshot.inputBound)))
                   .arg(snapshot.inputBoundShare * 100, 0, 'f', 1);
    QString verdict = !snapshot.bottleneck.empty() ? tr("bottleneck: %1").arg(QString::fromStdString(snapshot.bottleneck))
                      : snapshot.bottleneckKind == "no_stage" ? tr("no single bottleneck")
                                                             : QString();
    // Too short a run so far for the verdict to mean much: said, not hidden.
    if (!verdict.isEmpty() && snapshot.verdictLowConfidence)
        verdict += tr(" (low confidence)");
    if (!verdict.isEmpty())
        text += (text.isEmpty() ? QString() : QStringLiteral(" · ")) + verdict;
    m_inputBoundLabel->setText(text);
    m_inputBoundLabel->setToolTip(QString::fromStdString(snapshot.bottleneckReason));
    rememberAdvice(snapshot);
    m_lastSnapshot = snapshot;
    showTunedValues();
    if (m_session->kind() == bridge::RunSession::Kind::Pipeline && !m_session->isPaused())
        m_runLabel->setText(tr("Profiling · %1 elements/s").arg(rate(snapshot.elementsPerSecond)));
}

void MainWindow::showTunedValues()
{
    const std::string id = m_inspector->nodeId().toStdString();
    if (id.empty())
        return;
    for (const pipeline::StageSnapshot &stage : m_lastSnapshot.stages)
        if (stage.id == id) {
            m_inspector->setTuned(&stage);
            return;
        }
    m_inspector->setTuned(nullptr);
}

QString MainWindow::inputBoundText() const { return m_inputBoundLabel->text(); }

void MainWindow::onRunFinished(quint64 runId, bridge::RunSession::Status status, const QString &error)
{
    if (runId != m_session->runId())
        return;
    m_deviceTimer.stop();
    m_charts->endRun(runId);
    m_lastRunStatus = status;
    ++m_finishedRuns;
    const QString name = bridge::RunSession::statusName(status);
    if (status == bridge::RunSession::Status::Failed) {
        m_console->appendLog(widgets::LogLevel::Error, tr("Run failed: %1").arg(error));
        if (!m_lastRunFolder.isEmpty() && !QFileInfo::exists(m_lastRunFolder))
            m_console->appendLog(widgets::LogLevel::Info, tr("Nothing was kept: the run was refused before its first step"));
        pointModelPanelAt(m_lastRunError);
        m_consoleDock->show();
        m_consoleDock->raise();
    } else {
        m_console->appendLog(widgets::LogLevel::Info, tr("Run %1; kept in %2").arg(name, QDir::toNativeSeparators(m_lastRunFolder)));
    }
    m_runLabel->setText(tr("Last run: %1").arg(name));
    statusBar()->showMessage(status == bridge::RunSession::Status::Failed ? tr("Run failed: %1").arg(error) : tr("Run %1").arg(name), 10000);
    updateActions();
}

void MainWindow::sampleDevices()
{
    if (!m_session->isRunning() || !m_cpuUsage)
        return;
    // Sampled in the GUI thread: both reads take microseconds (getrusage, NVML queries).
    const CpuUsage cpu = m_cpuUsage->sample();
    QList<events::Event> events{cpu};
    if (m_nvml && m_nvml->available())
        events << m_nvml->sample(cpu.time);
    m_charts->addRunEvents(m_session->runId(), events);
}

void MainWindow::previewSelected()
{
    if (!m_document || !m_scene)
        return;
    const QStringList selected = m_scene->selectedNodeIds();
    if (selected.size() != 1) {
        statusBar()->showMessage(tr("Select one stage to preview"), 4000);
        return;
    }
    m_preview->showWaiting(selected.front());
    m_previewDock->show();
    m_previewDock->raise();
    m_previewJob->request(m_document->project(), selected.front(), 8);
}

QList<widgets::RunSummary> MainWindow::runsOfProject() const
{
    if (!m_document || m_document->filePath().isEmpty())
        return {};
    return widgets::projectRuns(m_document->folder(), QString::fromStdString(m_document->project().name));
}

void MainWindow::showNewestRun()
{
    const QList<widgets::RunSummary> runs = runsOfProject();
    if (runs.isEmpty())
        return;
    const widgets::RunSummary &newest = runs.first();
    if (const Status shown = m_charts->showPastRun(newest.folder, newest.describe()); !shown.ok()) {
        m_console->appendLog(widgets::LogLevel::Warning,
                             tr("The newest run cannot be shown: %1").arg(QString::fromStdString(shown.error().message())));
        return;
    }
    m_lastRunFolder = newest.folder;
    m_runLabel->setText(tr("Last run: %1").arg(newest.status));
}

void MainWindow::overlayPastRun()
{
    if (!m_document)
        return;
    QList<widgets::RunSummary> runs = runsOfProject();
    const QString current = m_charts->currentRunFolder();
    runs.removeIf([&](const widgets::RunSummary &run) { return run.folder == current; });
    if (runs.isEmpty()) {
        QMessageBox::information(this, tr("No Past Runs"),
                                 tr("This project has no other runs yet: its runs are kept in %1.")
                                     .arg(QDir::toNativeSeparators(QDir(m_document->folder()).filePath(QStringLiteral("runs")))));
        return;
    }
    const QStringList overlaid = m_charts->overlays();
    CompareRunsDialog dialog(runs, overlaid, this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const QStringList checked = dialog.checkedFolders();
    for (const QString &folder : overlaid)
        if (!checked.contains(folder))
            m_charts->removeOverlay(folder);
    for (const QString &folder : checked) {
        if (overlaid.contains(folder))
            continue;
        if (const Status shown = m_charts->overlayRun(folder); !shown.ok())
            m_console->appendLog(widgets::LogLevel::Error, tr("Cannot overlay the run: %1").arg(QString::fromStdString(shown.error().message())));
    }
}

} // namespace sluice::gui
