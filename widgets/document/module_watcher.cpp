#include "document/module_watcher.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>

namespace sluice::widgets {

ModuleWatcher::ModuleWatcher(QObject *parent) : QObject(parent)
{
    m_settle.setSingleShot(true);
    m_settle.setInterval(200);
    connect(&m_settle, &QTimer::timeout, this, &ModuleWatcher::onSettled);
    connect(&m_watcher, &QFileSystemWatcher::fileChanged, &m_settle, qOverload<>(&QTimer::start));
    connect(&m_watcher, &QFileSystemWatcher::directoryChanged, &m_settle, qOverload<>(&QTimer::start));
}

QMap<QString, QString> ModuleWatcher::stamps() const
{
    QMap<QString, QString> result;
    auto add = [&result](const QFileInfo &info) {
        result.insert(info.absoluteFilePath(), QString::number(info.lastModified().toMSecsSinceEpoch()) + QLatin1Char('/') + QString::number(info.size()));
    };
    for (const QString &folder : m_folders)
        for (const QFileInfo &info : QDir(folder).entryInfoList({QStringLiteral("*.py")}, QDir::Files))
            add(info);
    for (const QString &file : m_files)
        if (QFileInfo info(file); info.exists())
            add(info);
    return result;
}

void ModuleWatcher::watch(const QStringList &folders, const QStringList &files)
{
    QStringList existingFolders;
    for (const QString &folder : folders)
        if (QFileInfo(folder).isDir() && !existingFolders.contains(folder))
            existingFolders << folder;
    QStringList uniqueFiles = files;
    uniqueFiles.removeAll(QString());
    uniqueFiles.removeDuplicates();
    if (existingFolders == m_folders && uniqueFiles == m_files)
        return;
    m_folders = existingFolders;
    m_files = uniqueFiles;
    if (!m_watcher.files().isEmpty())
        m_watcher.removePaths(m_watcher.files());
    if (!m_watcher.directories().isEmpty())
        m_watcher.removePaths(m_watcher.directories());
    m_stamps = stamps();
    if (!m_folders.isEmpty())
        m_watcher.addPaths(m_folders);
    if (!m_stamps.isEmpty())
        m_watcher.addPaths(m_stamps.keys());
}

void ModuleWatcher::onSettled()
{
    const QMap<QString, QString> now = stamps();
    // A file replaced by a rename is no longer watched under its name: watch the new one.
    const QStringList watched = m_watcher.files();
    for (const QString &file : now.keys())
        if (!watched.contains(file))
            m_watcher.addPath(file);
    if (now == m_stamps)
        return;
    m_stamps = now;
    Q_EMIT modulesChanged();
}

} // namespace sluice::widgets
