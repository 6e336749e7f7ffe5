#pragma once
// What the three charts share: a QCustomPlot whose graphs are bound to RunRecord series (shared
// containers: new points need no copy, only a replot), rebuilt only when the set of lines
// changes, styled from the palette (and again when the theme changes), and following the data
// (axes rescaled on each update) until the user drags or zooms; a double click follows again.
// Dragging and zooming stay within the data's range (no negative steps, no empty seconds).
// The legend sits below the plot, never over the data, and can be collapsed. A right click
// opens the chart's menu: follow the data again, logarithmic value axis, legend shown or not,
// export PNG or CSV. A vertical cursor follows the mouse; the panel shares it between charts.
//
// Threading: a widget; GUI thread only. Updates are coalesced by the caller: one refresh() per
// batch of events, each a single queued replot.

#include "charts/run_record.h"

#include "charts/qcustomplot_include.h"

#include "io/error.h"

#include <QList>
#include <QPointer>
#include <QString>
#include <QtNumeric>

#include <optional>

class QMenu;

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
    ~ChartView() override;

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

    // The main value axis (left): logarithmic or linear.
    bool logScale() const;
    void setLogScale(bool log);
    bool legendShown() const { return m_legendShown; }
    void setLegendShown(bool shown);
    // Every line's points as CSV ("line,x,y", names quoted where needed; gaps left out), and the
    // chart as a PNG of its current size; errors name the file.
    Status exportCsv(const QString &path) const;
    Status exportPng(const QString &path);
    // The menu a right click opened (it closes itself); null when none is open.
    QMenu *contextMenu() const { return m_menu; }
    // The cursor's x in this chart's units; NaN hides it.
    void setCursorX(double x);
    double cursorX() const { return m_cursorX; }
    // The x range the data spans (all lines), or nothing before the first point.
    std::optional<QCPRange> dataKeyRange() const;

    // The number of points the chart's graphs hold, overlays included.
    int pointCount() const;
    // The graph whose legend name is `name`, or null (tests, and the panel's bookkeeping).
    QCPGraph *graphNamed(const QString &name) const;

Q_SIGNALS:
    // The mouse moved over the plot at `x` (this chart's units); NaN when it left.
    void cursorMoved(double x);

protected:
    // Creates every line from the sources (called after clearGraphs()).
    virtual void build() = 0;
    // A cheap text that changes whenever build() would create other lines.
    virtual QString signature() const = 0;
    virtual void rescale();
    virtual QCPAxisRect *mainRect() const { return axisRect(); }

    QCPGraph *addLine(const RunRecord &record, const QString &key, const QString &name, const QPen &pen, QCPAxisRect *rect = nullptr);
    void changeEvent(QEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;

    const RunRecord *m_live = nullptr;
    QList<OverlayRun> m_overlays;

private:
    void openMenu(const QPoint &at);
    void keepWithinData(const QCPRange &range);

    QString m_signature;
    QCPLayoutGrid *m_legendRow = nullptr; // the plot layout's last row: the legend, out of the data
    bool m_legendShown = true;
    QPointer<QMenu> m_menu;
    QCPItemStraightLine *m_cursor = nullptr;
    double m_cursorX = qQNaN();
    bool m_bounding = false; // keepWithinData() is setting the range
    bool m_following = true;
    bool m_ready = false; // setSources() has been called
};

} // namespace sluice::widgets
