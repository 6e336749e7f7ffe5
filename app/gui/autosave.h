#pragma once
// Autosave and recovery after a crash. While a project has unsaved edits, the workbench writes
// its state every ~30 s to a recovery file of its own (never over the user's project file);
// a clean save, or closing without saving, removes it. A recovery file still there at start
// belongs to a session that ended without cleaning up (a crash, a kill): the workbench offers it
// back. Files are written atomically (docs/architecture.md, decision 10).
//
// Layout: <app data>/autosave/<key>.sluice (the project JSON) and <key>.json
// {"original": path or "", "pid": n, "saved_at": ISO time}.
//
// Threading: GUI thread.

#include <QDateTime>
#include <QString>

#include <nlohmann/json.hpp>

#include <vector>

namespace sluice::gui {

struct RecoveryFile
{
    QString statePath;    // the autosaved project JSON
    QString metaPath;
    QString originalPath; // empty for an untitled project
    QDateTime savedAt;
};

class Autosave
{
public:
    static QString folder();
    // A key for the project at `originalPath` in this process (untitled: one per process).
    static QString keyFor(const QString &originalPath);
    static bool write(const QString &key, const QString &originalPath, const nlohmann::json &state);
    static void remove(const QString &key);
    // Recovery files left by processes that are no longer running.
    static std::vector<RecoveryFile> orphans();
    static void discard(const RecoveryFile &file);
};

} // namespace sluice::gui
