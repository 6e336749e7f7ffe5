#include "charts/chart_view.h"

#include "charts/chart_style.h"

namespace sluice::widgets {

ChartView::ChartView(QWidget *parent) : QCustomPlot(parent)
{
    setInteractions(QCP::Interactions(QCP::iRangeDrag) | QCP::iRangeZoom);
    setAntialiasedElements(QCP::aeAll);
    setNoAntialiasingOnDrag(true);
    legend->setVisible(true);
    legend->setFont(font());
    legend->setIconSize(18, 8);
    setMinimumSize(240, 160);
    // Looking at a part of the history stops the live rescaling; a double click returns to it.
    connect(this, &QCustomPlot::mousePress, this, [this] { m_following = false; });
    connect(this, &QCustomPlot::mouseWheel, this, [this] { m_following = false; });
    connect(this, &QCustomPlot::mouseDoubleClick, this, [this] { setFollowing(true); });
}

void ChartView::setSources(const RunRecord *live, const QList<OverlayRun> &overlays)
{
    m_live = live;
    m_overlays = overlays;
    m_ready = true;
    rebuild();
}

void ChartView::setFollowing(bool follow)
{
    m_following = follow;
    if (follow) {
        rescale();
        replot(QCustomPlot::rpQueuedReplot);
    }
}

void ChartView::rebuild()
{
    clearGraphs();
    chart_style::apply(*this, palette());
    build();
    m_signature = signature();
    if (m_following)
        rescale();
    replot(QCustomPlot::rpQueuedReplot);
}

void ChartView::refresh()
{
    if (signature() != m_signature) {
        rebuild();
        return;
    }
    if (m_following)
        rescale();
    replot(QCustomPlot::rpQueuedReplot); // coalesced by Qt: one repaint per event-loop pass
}

void ChartView::rescale()
{
    rescaleAxes(true);
}

int ChartView::pointCount() const
{
    int n = 0;
    for (int i = 0; i < graphCount(); ++i)
        n += graph(i)->data()->size();
    return n;
}

QCPGraph *ChartView::graphNamed(const QString &name) const
{
    for (int i = 0; i < graphCount(); ++i)
        if (graph(i)->name() == name)
            return graph(i);
    return nullptr;
}

QCPGraph *ChartView::addLine(const RunRecord &record, const QString &key, const QString &name, const QPen &pen, QCPAxisRect *rect)
{
    if (!record.series().contains(key))
        return nullptr; // no point of it yet: the line appears with its first (signature())
    if (!rect)
        rect = mainRect();
    QCPGraph *g = addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    // The record's series is shared, not copied: const_cast because QCPGraph takes a
    // non-const container, though the graph only reads it.
    g->setData(const_cast<RunRecord &>(record).series().series(key));
    g->setName(name);
    g->setPen(pen);
    return g;
}

void ChartView::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    // The line colours depend on the palette too. Not before setSources(): a subclass may still
    // be under construction (build() is virtual).
    if (m_ready && (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange))
        rebuild();
}

} // namespace sluice::widgets
