#include "charts/loss_chart.h"

#include "charts/chart_style.h"

namespace sluice::widgets {

LossChart::LossChart(QWidget *parent) : ChartView(parent)
{
    xAxis->setLabel(tr("step"));
    yAxis->setLabel(m_metric);
}

void LossChart::setMetric(const QString &metric)
{
    if (metric.isEmpty() || metric == m_metric)
        return;
    m_metric = metric;
    yAxis->setLabel(metric);
    setFollowing(true); // another metric has another range
    rebuild();
}

QString LossChart::signature() const
{
    // The lines of one metric exist or not depending on which of its four series exist.
    auto present = [this](const RunRecord &r) {
        QString s;
        for (const QString &key : {QStringLiteral("step:") + m_metric, QStringLiteral("step:batch_loss"), QStringLiteral("epoch:") + m_metric,
                                   QStringLiteral("epoch:val_") + m_metric})
            s += r.series().contains(key) ? QLatin1Char('1') : QLatin1Char('0');
        return s;
    };
    QString s = m_metric + QLatin1Char(':') + (m_live ? present(*m_live) : QString());
    for (const auto &o : m_overlays)
        s += QLatin1Char('|') + o.folder;
    return s;
}

void LossChart::addRunLines(const RunRecord &record, const QString &prefix, int colorIndex, bool overlay)
{
    const QPalette &pal = palette();
    const QColor train = chart_style::lineColor(colorIndex, pal);
    const QColor validation = chart_style::lineColor(colorIndex + 1, pal);
    auto pen = [&](const QColor &c, double width, Qt::PenStyle style = Qt::SolidLine) {
        return overlay ? chart_style::overlayPen(c, style) : chart_style::livePen(c, width, style);
    };
    auto markers = [&](QCPGraph *g, const QColor &c) {
        if (g)
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, overlay ? g->pen().color() : c, overlay ? 4 : 6));
    };

    if (m_metric == QLatin1String("loss") && !overlay) {
        QColor faint = train;
        faint.setAlpha(70);
        addLine(record, QStringLiteral("step:batch_loss"), prefix + batchLossLineName(), chart_style::livePen(faint, 1.0));
    }
    addLine(record, QStringLiteral("step:") + m_metric, prefix + stepLineName(m_metric), pen(train, 1.6));
    markers(addLine(record, QStringLiteral("epoch:") + m_metric, prefix + epochLineName(m_metric), pen(train, 1.2)), train);
    markers(addLine(record, QStringLiteral("epoch:val_") + m_metric, prefix + validationLineName(m_metric), pen(validation, 1.6, Qt::DashLine)),
            validation);
}

void LossChart::build()
{
    // Overlays first, so the live lines are drawn over them.
    for (int i = 0; i < m_overlays.size(); ++i)
        addRunLines(*m_overlays[i].record, m_overlays[i].label + QStringLiteral(": "), 2 + 2 * i, true);
    if (m_live)
        addRunLines(*m_live, QString(), 0, false);
}

} // namespace sluice::widgets
