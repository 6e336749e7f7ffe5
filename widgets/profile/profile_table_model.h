#pragma once
// The per-stage figures `sluice run --profile` prints, as a sortable table: one row per stage
// of a statistics snapshot (PipelineSnapshot::toJson()), the same columns as the CLI's table.
// Sorting uses the numbers (SortRole), not their text; the table exports as CSV.
//
// Threading: a Qt item model; GUI thread only.

#include "io/error.h"
#include "pipeline/profile/pipeline_stats.h"

#include <QAbstractTableModel>

namespace sluice::widgets {

class ProfileTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { Node, Op, Elements, ElementsPerSecond, BytesPerSecond, Busy, WaitInput, WaitOutput, Queue, Parallelism, Tuned, ColumnCount };
    static constexpr int SortRole = Qt::UserRole + 1; // the cell's number (or text) for sorting

    explicit ProfileTableModel(QObject *parent = nullptr);

    // A new snapshot replaces the rows (same stages: the rows are updated in place).
    void setSnapshot(const pipeline::PipelineSnapshot &snapshot);
    void clear();
    const pipeline::PipelineSnapshot &snapshot() const { return m_snapshot; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The table as CSV: a header, then each stage's numbers (unformatted) in pipeline order.
    Status exportCsv(const QString &path) const;

private:
    QVariant number(const pipeline::StageSnapshot &stage, int column) const;
    pipeline::PipelineSnapshot m_snapshot;
};

} // namespace sluice::widgets
