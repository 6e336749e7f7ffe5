// Run ▸ Export Model: the shown run's model written as safetensors + model.py for PyTorch
// (bridge/model_export.h), on a worker thread (bridge::ModelExportJob); the outcome goes to the
// console and the status bar, a failure also to a message box.
#include "gui/main_window.h"

#include "console/run_console.h"
#include "document/project_document.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QStatusBar>

#include <nlohmann/json.hpp>

namespace sluice::gui {
namespace {

// The project as the run ran it (its project.sluice, paths resolved against the open project's
// folder, where they were written relative to), or the open one when the run kept no copy.
Project projectOfRun(const Project &open, const QString &runFolder)
{
    QFile file(QDir(runFolder).filePath(QStringLiteral("project.sluice")));
    if (!file.open(QIODevice::ReadOnly))
        return open;
    const auto document = nlohmann::json::parse(file.readAll().toStdString(), nullptr, false);
    if (document.is_discarded())
        return open;
    auto asRun = Project::fromJson(document, open.folder(), file.fileName().toStdString());
    return asRun ? std::move(asRun).value() : open;
}

} // namespace

bool MainWindow::canExportModel() const
{
    return m_document && !m_document->project().model.is_null() && !m_session->isRunning() && !m_exportJob->isRunning() &&
           !m_lastRunFolder.isEmpty() && QFileInfo::exists(QDir(m_lastRunFolder).filePath(QStringLiteral("weights.npz")));
}

void MainWindow::exportModel()
{
    if (!canExportModel())
        return;
    const QString start = QDir(m_lastRunFolder).filePath(QStringLiteral("export/model.safetensors"));
    QString path = QFileDialog::getSaveFileName(this, tr("Export Model"), start, tr("safetensors, with model.py for PyTorch (*.safetensors)"));
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".safetensors");
    exportModelTo(path);
}

void MainWindow::exportModelTo(const QString &path)
{
    if (!canExportModel())
        return;
    const Project project = projectOfRun(m_document->project(), m_lastRunFolder);
    if (!m_exportJob->start(project, QDir(m_lastRunFolder).filePath(QStringLiteral("weights.npz")), path))
        return;
    statusBar()->showMessage(tr("Exporting the model of %1…").arg(QFileInfo(m_lastRunFolder).fileName()));
    updateActions();
}

void MainWindow::onModelExported(const QString &weightsFile, const QString &modelPy)
{
    const QString text = tr("Model exported: %1, and %2 for PyTorch")
                             .arg(QDir::toNativeSeparators(weightsFile), QDir::toNativeSeparators(modelPy));
    m_console->appendLog(widgets::LogLevel::Info, text);
    statusBar()->showMessage(text, 8000);
    updateActions();
}

void MainWindow::onModelExportFailed(const QString &message)
{
    m_console->appendLog(widgets::LogLevel::Error, tr("Export failed: %1").arg(message));
    statusBar()->clearMessage();
    updateActions();
    QMessageBox::warning(this, tr("Cannot Export Model"), tr("The model was not exported.\n\n%1").arg(message));
}

} // namespace sluice::gui
