#pragma once
// What the three charts share: a QCustomPlot whose graphs are bound to RunRecord series (shared
// containers: new points need no copy, only a replot), rebuilt only when the set of lines
// changes, styled from the palette (and again when the theme changes), and following the data
// (axes rescaled on each update) until the user drags or zooms; a double click follows again.
//
// Threading: a widget; GUI thread only. Updates are coalesced by the caller: one refresh() per
// batch of events, each a single queued replot.

#include "charts/run_record.h"

#include "charts/qcustomplot_include.h"

#include <QList>
#include <QString>

namespace sluice::widgets {

// A past run shown for comparison.
struct OverlayRun
{
    QString folder; // as given to ChartsPanel::overlayRun
    QString label;  // the folder's name, prefixed to its lines' legend entries
    const RunRecord *record = nullptr;
};

class ChartView : public QCustomPlot
{
    Q_OBJECT
public:
    explicit ChartView(QWidget *parent = nullptr);

    // The live run's record and the overlays; the chart reads them on every update and never
    // owns them (ChartsPanel does). Rebuilds the lines.
    void setSources(const RunRecord *live, const QList<OverlayRun> &overlays);
    // New points arrived (or lines appeared): rebind if the set of lines changed, rescale when
    // following, and ask for one queued replot.
    void refresh();
    // Drops and recreates every line (new sources, a new metric, a new palette).
    void rebuild();

    bool following() const { return m_following; }
    void setFollowing(bool follow);

    // The number of points the chart's graphs hold, overlays included.
    int pointCount() const;
    // The graph whose legend name is `name`, or null (tests, and the panel's bookkeeping).
    QCPGraph *graphNamed(const QString &name) const;

protected:
    // Creates every line from the sources (called after clearGraphs()).
    virtual void build() = 0;
    // A cheap text that changes whenever build() would create other lines.
    virtual QString signature() const = 0;
    virtual void rescale();
    virtual QCPAxisRect *mainRect() const { return axisRect(); }

    QCPGraph *addLine(const RunRecord &record, const QString &key, const QString &name, const QPen &pen, QCPAxisRect *rect = nullptr);
    void changeEvent(QEvent *event) override;

    const RunRecord *m_live = nullptr;
    QList<OverlayRun> m_overlays;

private:
    QString m_signature;
    bool m_following = true;
    bool m_ready = false; // setSources() has been called
};

} // namespace sluice::widgets
