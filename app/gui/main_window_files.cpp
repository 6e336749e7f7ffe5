// Projects as files: new, open, save (atomic, through core's Project::save), save as, recent
// projects, autosave and recovery after a crash, and closing without losing work.
#include "gui/main_window.h"

#include "console/run_console.h"
#include "document/project_document.h"
#include "gui/autosave.h"
#include "gui/recent_projects.h"
#include "gui/welcome_page.h"

#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>

namespace sluice::gui {

namespace {
const QString kFilter = QObject::tr("Sluice projects (*.sluice);;All files (*)");
}

void MainWindow::newProject()
{
    if (!maybeSave())
        return;
    const QString folder = m_document ? m_document->folder() : QDir::homePath();
    setDocument(std::make_unique<widgets::ProjectDocument>(folder));
    statusBar()->showMessage(tr("New project: drag stages from the palette, or drop .npy/.npz/TFRecord/CSV files on the canvas"), 8000);
}

void MainWindow::open()
{
    if (!maybeSave())
        return;
    const QString start = m_document ? m_document->folder() : WelcomePage::examplesFolder();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Project"), start, kFilter);
    if (!path.isEmpty())
        openProject(path);
}

bool MainWindow::openProject(const QString &path)
{
    if (m_document && QFileInfo(path).absoluteFilePath() == m_document->filePath())
        return true;
    // Read first: a broken file must leave the open project as it is.
    auto document = widgets::ProjectDocument::open(path);
    if (!document) {
        const QString message = QString::fromStdString(document.error().message());
        m_console->appendLog(widgets::LogLevel::Error, message);
        QMessageBox::warning(this, tr("Cannot Open Project"), tr("The project could not be opened; nothing was changed.\n\n%1").arg(message));
        return false;
    }
    if (!maybeSave())
        return false;
    setDocument(std::move(*document));
    RecentProjects::add(path);
    statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

bool MainWindow::openExample(const QString &path)
{
    const QFileInfo info(path);
    if (QFileInfo(info.absolutePath()).isWritable())
        return openProject(path);
    const QDir copies(QDir(QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).filePath(QStringLiteral("Sluice examples")));
    if (!copies.mkpath(QStringLiteral("."))) {
        m_console->appendLog(widgets::LogLevel::Error, tr("Cannot create %1 for the example projects").arg(QDir::toNativeSeparators(copies.path())));
        return openProject(path);
    }
    // Every example and its README, never over a copy the user has already changed.
    const QDir source(info.absolutePath());
    for (const QString &name : source.entryList({QStringLiteral("*.sluice"), QStringLiteral("README.md")}, QDir::Files))
        if (!QFileInfo::exists(copies.filePath(name)))
            QFile::copy(source.filePath(name), copies.filePath(name));
    statusBar()->showMessage(tr("Examples copied to %1: their data and runs are written there (see README.md there to generate the data)")
                                 .arg(QDir::toNativeSeparators(copies.path())),
                             15000);
    return openProject(copies.filePath(info.fileName()));
}

bool MainWindow::save()
{
    if (!m_document)
        return false;
    if (m_document->filePath().isEmpty())
        return saveAs();
    return saveTo(m_document->filePath());
}

bool MainWindow::saveAs()
{
    if (!m_document)
        return false;
    QString start = m_document->filePath();
    if (start.isEmpty())
        start = QDir(m_document->folder()).filePath(QStringLiteral("untitled.sluice"));
    QString path = QFileDialog::getSaveFileName(this, tr("Save Project As"), start, kFilter);
    if (path.isEmpty())
        return false;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".sluice");
    return saveTo(path);
}

bool MainWindow::saveTo(const QString &path)
{
    const QString oldKey = m_autosaveKey;
    const Status saved = m_document->save(path);
    if (!saved.ok()) {
        const QString message = QString::fromStdString(saved.error().message());
        m_console->appendLog(widgets::LogLevel::Error, message);
        QMessageBox::warning(this, tr("Cannot Save Project"), tr("The project was not saved; the file on disk is unchanged.\n\n%1").arg(message));
        return false;
    }
    Autosave::remove(oldKey);
    m_autosaveKey = Autosave::keyFor(m_document->filePath());
    Autosave::remove(m_autosaveKey);
    RecentProjects::add(path);
    statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), 4000);
    return true;
}

bool MainWindow::closeProject()
{
    if (!m_document)
        return true;
    if (!maybeSave())
        return false;
    setDocument(nullptr);
    return true;
}

bool MainWindow::maybeSave()
{
    if (!m_document || !m_document->isDirty())
        return true;
    const auto answer = QMessageBox::warning(this, tr("Unsaved Changes"), tr("%1 has unsaved changes. Save them?").arg(m_document->displayName()),
                                             QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel)
        return false;
    if (answer == QMessageBox::Save)
        return save();
    clearAutosave(); // discarded on purpose: nothing to recover
    return true;
}

void MainWindow::autosaveNow()
{
    if (m_document && m_document->isDirty())
        Autosave::write(m_autosaveKey, m_document->filePath(), m_document->state());
}

void MainWindow::clearAutosave()
{
    if (!m_autosaveKey.isEmpty())
        Autosave::remove(m_autosaveKey);
}

void MainWindow::offerRecovery()
{
    for (const RecoveryFile &file : Autosave::orphans()) {
        const QString name = file.originalPath.isEmpty() ? tr("an untitled project") : QDir::toNativeSeparators(file.originalPath);
        const auto answer = QMessageBox::question(this, tr("Recover Unsaved Work"),
                                                  tr("Sluice ended without saving %1 (autosaved %2). Recover those changes?")
                                                      .arg(name, QLocale().toString(file.savedAt, QLocale::ShortFormat)),
                                                  QMessageBox::Yes | QMessageBox::No | QMessageBox::Discard, QMessageBox::Yes);
        if (answer == QMessageBox::No)
            continue; // asked again next time
        if (answer == QMessageBox::Yes) {
            auto document = widgets::ProjectDocument::recover(file.statePath, file.originalPath);
            if (!document) {
                QMessageBox::warning(this, tr("Cannot Recover"), QString::fromStdString(document.error().message()));
                continue;
            }
            if (!maybeSave())
                return;
            setDocument(std::move(*document));
            autosaveNow(); // under this process's key before the orphan goes
        }
        Autosave::discard(file);
        if (answer == QMessageBox::Yes)
            return; // one window, one project
    }
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = RecentProjects::list();
    for (const QString &path : recent)
        m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] { openProject(path); })->setToolTip(path);
    if (recent.isEmpty())
        m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    if (m_session->isRunning())
        m_session->stop();
    clearAutosave();
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    event->accept();
}

} // namespace sluice::gui
