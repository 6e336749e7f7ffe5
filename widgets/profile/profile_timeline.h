#pragma once
// Each stage's busy, waiting and idle periods over a run, as Nsight Systems and TensorBoard's
// input-pipeline page draw them: a row per stage, a column per interval between two statistics
// snapshots, split into the share busy (its own work), waiting for its input, and idle. The
// wheel zooms (bounded to the run), a double click shows the whole run, and a drag selects a
// range whose figures (each stage's busy and waiting share and elements/s) are computed for it.
//
// Threading: a widget; GUI thread only.

#include "pipeline/profile/pipeline_stats.h"

#include <QList>
#include <QStringList>
#include <QWidget>

namespace sluice::widgets {

class ProfileTimeline : public QWidget
{
    Q_OBJECT
public:
    struct StageShare
    {
        QString id;
        double busy = 0, waiting = 0; // shares of the range's time, 0..1
        double elementsPerSecond = 0;
    };

    explicit ProfileTimeline(QWidget *parent = nullptr);

    // A statistics snapshot (PipelineSnapshot::toJson()); the first only sets the start.
    void addSnapshot(const pipeline::PipelineSnapshot &snapshot);
    void clear();

    QStringList stages() const { return m_stageIds; }
    int intervalCount() const { return int(m_intervals.size()); }
    double endTime() const { return m_intervals.isEmpty() ? 0 : m_intervals.last().t1; }

    // The visible time span, and the selected range (empty when none).
    double viewStart() const { return m_viewStart; }
    double viewEnd() const { return m_viewEnd; }
    void setView(double start, double end); // bounded to the run
    void setSelection(double start, double end);
    bool hasSelection() const { return m_selEnd > m_selStart; }
    double selectionStart() const { return m_selStart; }
    double selectionEnd() const { return m_selEnd; }
    // Each stage's figures over [start, end] (intervals weighted by their overlap).
    QList<StageShare> sharesBetween(double start, double end) const;

    // Where time `t` is drawn (widget x), and back; for tests and the mouse.
    int xOf(double t) const;
    double timeAt(int x) const;
    int rowTop(int stage) const;
    static constexpr int kLabelWidth = 110, kRowHeight = 22, kTop = 4;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void selectionChanged(double start, double end);

protected:
    void paintEvent(QPaintEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;

private:
    struct Interval
    {
        double t0 = 0, t1 = 0;
        QList<double> busy, waiting, elementsPerSecond; // by stage, in m_stageIds order
    };
    struct StageTotals
    {
        double busy = 0, waiting = 0, elements = 0, slots = 1;
    };

    QStringList m_stageIds;
    QList<Interval> m_intervals;
    QList<StageTotals> m_last; // the last snapshot's cumulative figures, by stage
    double m_lastTime = -1;
    double m_viewStart = 0, m_viewEnd = 0;
    bool m_following = true; // the view spans the whole run until the user zooms
    double m_selStart = 0, m_selEnd = 0;
    double m_dragFrom = -1;
};

} // namespace sluice::widgets
