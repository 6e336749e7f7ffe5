#pragma once
// Run ▸ Compare With Past Runs: the project's runs (never another project's, never the one the
// charts show as current) with their start, kind, status and final loss; a checked run is
// overlaid on the charts, an unchecked one taken off.
//
// Threading: GUI thread.

#include "charts/project_runs.h"

#include <QDialog>
#include <QStringList>

class QTreeWidget;

namespace sluice::gui {

class CompareRunsDialog : public QDialog
{
    Q_OBJECT
public:
    // `runs`: the project's runs less the current one; `overlaid`: the folders drawn now.
    CompareRunsDialog(const QList<widgets::RunSummary> &runs, const QStringList &overlaid, QWidget *parent = nullptr);

    // The folders checked when the dialog was accepted, in the list's order.
    QStringList checkedFolders() const;
    QTreeWidget *list() const { return m_list; }

private:
    QTreeWidget *m_list = nullptr;
};

} // namespace sluice::gui
