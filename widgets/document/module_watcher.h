#pragma once
// Tells when a Python module a project may use changed on disk, so that the workbench checks the
// project again (a fixed import error leaves the stage, a new docstring shows) and the next run
// reloads it. It watches the `.py` files of the folders where "module:function" names are looked
// for (the project's folder, its python_path) and the files of the resolved functions. Editors
// save in place or by renaming a new file over the old; both are seen. Only a change of a `.py`
// file counts: Python writing its __pycache__ beside a module is not a change.
//
// Threading: a QObject of the GUI thread.

#include <QFileSystemWatcher>
#include <QMap>
#include <QObject>
#include <QStringList>
#include <QTimer>

namespace sluice::widgets {

class ModuleWatcher : public QObject
{
    Q_OBJECT
public:
    explicit ModuleWatcher(QObject *parent = nullptr);

    // Replaces what is watched; nothing for empty lists (a project without Python functions).
    void watch(const QStringList &folders, const QStringList &files);
    QStringList watchedFiles() const { return m_watcher.files(); }

Q_SIGNALS:
    void modulesChanged();

private:
    // Each watched .py file's modification time and size: what a change is compared on.
    QMap<QString, QString> stamps() const;
    void onSettled();

    QFileSystemWatcher m_watcher;
    QTimer m_settle; // an editor's save is several events: one check after they settle
    QStringList m_folders, m_files;
    QMap<QString, QString> m_stamps;
};

} // namespace sluice::widgets
