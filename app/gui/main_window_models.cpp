// Models in and out of the workbench. Run ▸ Export Model: the shown run's model written as
// safetensors + model.py for PyTorch (bridge/model_export.h). File ▸ Import Keras Model: a Keras 3
// model made the project's model and initial weights (bridge/model_import.h). Both work on a
// worker thread (bridge::ModelExportJob, ModelImportJob); the outcome goes to the console and the
// status bar, a failure also to a message box.
#include "gui/main_window.h"

#include "console/run_console.h"
#include "document/project_document.h"
#include "events/run_folder.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QJsonDocument>
#include <QUndoStack>
#include <QMessageBox>
#include <QStatusBar>

#include <nlohmann/json.hpp>

namespace sluice::gui {
namespace {

// The project as the run ran it (its project.sluice, paths resolved against the open project's
// folder, where they were written relative to), or the open one when the run kept no copy.
Project projectOfRun(const Project &open, const QString &runFolder)
{
    QFile file(QDir(runFolder).filePath(QString::fromLatin1(runfolder::kProject)));
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
           !m_lastRunFolder.isEmpty() && QFileInfo::exists(QDir(m_lastRunFolder).filePath(QString::fromLatin1(runfolder::kWeights)));
}

void MainWindow::exportModel()
{
    if (!canExportModel())
        return;
    const QString start = QDir(m_lastRunFolder).filePath(QStringLiteral("export/model.safetensors"));
    const QString safetensors = tr("safetensors, with model.py for PyTorch (*.safetensors)"), keras = tr("Keras 3 model (*.keras)"),
                  onnx = tr("ONNX graph (*.onnx)");
    QString filter = safetensors;
    QString path = QFileDialog::getSaveFileName(this, tr("Export Model"), start, QStringList{safetensors, keras, onnx}.join(QStringLiteral(";;")), &filter);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += filter == keras ? QStringLiteral(".keras") : filter == onnx ? QStringLiteral(".onnx") : QStringLiteral(".safetensors");
    exportModelTo(path);
}

void MainWindow::exportModelTo(const QString &path)
{
    if (!canExportModel())
        return;
    const Project project = projectOfRun(m_document->project(), m_lastRunFolder);
    // The file's suffix picks the format: .keras a Keras archive, .onnx an ONNX graph, anything else safetensors.
    using Format = bridge::ModelExportJob::Format;
    const Format format = path.endsWith(QStringLiteral(".keras"), Qt::CaseInsensitive)  ? Format::Keras
                          : path.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive) ? Format::Onnx
                                                                                         : Format::Safetensors;
    if (!m_exportJob->start(project, QDir(m_lastRunFolder).filePath(QString::fromLatin1(runfolder::kWeights)), path, format))
        return;
    statusBar()->showMessage(tr("Exporting the model of %1…").arg(QFileInfo(m_lastRunFolder).fileName()));
    updateActions();
}

void MainWindow::onModelExported(const QString &weightsFile, const QString &modelPy)
{
    const QString text = modelPy.isEmpty() ? tr("Model exported: %1").arg(QDir::toNativeSeparators(weightsFile))
                                           : tr("Model exported: %1, and %2 for PyTorch")
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

void MainWindow::importKerasModel()
{
    if (!m_document || m_session->isRunning() || m_importJob->isRunning())
        return;
    if (m_document->filePath().isEmpty()) {
        QMessageBox::information(this, tr("Save the Project First"),
                                 tr("The imported weights are written beside the project file, so it needs one: save the project, then import."));
        return;
    }
    const QString folder = m_document->folder();
    const QString model =
        QFileDialog::getOpenFileName(this, tr("Import Keras Model"), folder, tr("Keras 3 models (*.keras *.json);;All files (*)"));
    if (model.isEmpty())
        return;
    QString weights;
    if (model.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive))
        weights = QFileDialog::getOpenFileName(this, tr("Its Weights (Cancel: None)"), QFileInfo(model).absolutePath(),
                                               tr("Keras weights (*.weights.h5 *.h5);;All files (*)"));
    bool replace = false;
    if (!m_document->project().model.is_null()) {
        const auto answer = QMessageBox::question(this, tr("Replace the Model?"),
                                                  tr("The project has a model. Replace it with the imported one? (Edit ▸ Undo brings it back.)"));
        if (answer != QMessageBox::Yes)
            return;
        replace = true;
    }
    importKerasModelFrom(model, weights, replace);
}

void MainWindow::importKerasModelFrom(const QString &modelFile, const QString &weightsH5, bool replace)
{
    if (!m_document || m_importJob->isRunning())
        return;
    if (!m_importJob->start(m_document->project(), modelFile, weightsH5, replace))
        return;
    statusBar()->showMessage(tr("Importing %1…").arg(QFileInfo(modelFile).fileName()));
    updateActions();
}

void MainWindow::onModelImported(const QJsonObject &model, const QString &initialWeights, const QStringList &notes, const QString &summary)
{
    updateActions();
    if (!m_document)
        return;
    // One step on the undo stack: the model and the training settings that point at its weights.
    m_document->undoStack()->beginMacro(tr("Import Keras model"));
    m_document->setModel(model);
    if (!initialWeights.isEmpty()) {
        QJsonObject training = QJsonDocument::fromJson(QByteArray::fromStdString(
                                                           m_document->project().training.is_null() ? std::string("{}") : m_document->project().training.dump()))
                                   .object();
        training[QStringLiteral("initial_weights")] = initialWeights;
        m_document->setTraining(training);
    }
    m_document->undoStack()->endMacro();
    for (const QString &note : notes)
        m_console->appendLog(widgets::LogLevel::Warning, note);
    const QString text = tr("Keras model imported: %1%2").arg(summary, initialWeights.isEmpty() ? tr(", no weights") : tr("; initial weights in %1").arg(initialWeights));
    m_console->appendLog(widgets::LogLevel::Info, text);
    statusBar()->showMessage(text, 8000);
}

void MainWindow::onModelImportFailed(const QString &message)
{
    m_console->appendLog(widgets::LogLevel::Error, tr("Import failed: %1").arg(message));
    statusBar()->clearMessage();
    updateActions();
    QMessageBox::warning(this, tr("Cannot Import Model"), tr("The project is unchanged.\n\n%1").arg(message));
}

} // namespace sluice::gui
