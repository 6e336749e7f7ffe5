#pragma once
// The runs of one project: the folders under runs/ next to its file whose kept project copy
// (project.sluice, written when the run started) bears the project's name, each summarised for
// lists (Compare, the newest run shown on opening): when it started, how it ended, its final loss.
//
// Several projects often share a folder (the examples do), and so share runs/: the name in each
// run's project copy tells whose run it is.
//
// Threading: functions without state; the GUI thread calls them (a summary reads one small file).

#include <QDateTime>
#include <QList>
#include <QString>

#include <optional>

namespace sluice::widgets {

struct RunSummary
{
    QString folder;  // absolute path
    QString name;    // the folder's name ("20261124-173012")
    QDateTime started;
    QString kind;    // "training" or "pipeline"
    QString status;  // "ok", "cancelled", "failed", or "unfinished" (no run_end: killed or running)
    std::optional<double> finalLoss; // the last epoch's loss (else the last step's); none for a profile

    // "24 Nov 2026 17:30 · training · ok · loss 0.0123", for lists and the charts' title.
    QString describe() const;
};

// Reads one run folder's summary; nothing when it is not a run folder (no events.jsonl).
std::optional<RunSummary> summariseRun(const QString &folder);
// The project's runs, newest first; runs of other projects in the same folder are left out.
QList<RunSummary> projectRuns(const QString &projectFolder, const QString &projectName);

} // namespace sluice::widgets
