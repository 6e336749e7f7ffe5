#include "charts/throughput_chart.h"

#include "charts/chart_style.h"

namespace sluice::widgets {

ThroughputChart::ThroughputChart(QWidget *parent) : ChartView(parent)
{
    xAxis->setLabel(tr("time (s)"));
    yAxis->setLabel(tr("per second"));
    yAxis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    yAxis->setTicker(ticker);
    yAxis->setNumberFormat(QStringLiteral("gb")); // 1·10^4 rather than 10000
    yAxis->setNumberPrecision(0);
    yAxis->setRange(1, 1e4);
    legend->setVisible(true);
}

QString ThroughputChart::stageLineName(const QString &id, const QString &op)
{
    return op.isEmpty() || op == id ? id : QStringLiteral("%1 (%2)").arg(id, op);
}

QString ThroughputChart::signature() const
{
    QString s;
    if (m_live)
        s = m_live->stageIds().join(QLatin1Char(',')) + (m_live->series().contains(QStringLiteral("throughput:samples")) ? QLatin1Char('+') : QLatin1Char('-'));
    for (const auto &o : m_overlays)
        s += QLatin1Char('|') + o.folder;
    return s;
}

void ThroughputChart::build()
{
    const QPalette &pal = palette();
    const QString samples = QStringLiteral("throughput:samples");
    for (int i = 0; i < m_overlays.size(); ++i)
        addLine(*m_overlays[i].record, samples, m_overlays[i].label + QStringLiteral(": ") + samplesLineName(),
                chart_style::overlayPen(chart_style::lineColor(0, pal), i % 2 ? Qt::DotLine : Qt::SolidLine));
    if (!m_live)
        return;
    const QStringList ids = m_live->stageIds();
    for (int i = 0; i < ids.size(); ++i)
        addLine(*m_live, QStringLiteral("stage:") + ids[i], stageLineName(ids[i], m_live->stageOp(ids[i])),
                chart_style::livePen(chart_style::lineColor(i + 1, pal), 1.2));
    addLine(*m_live, samples, samplesLineName(), chart_style::livePen(chart_style::lineColor(0, pal), 2.4)); // drawn last: on top
}

} // namespace sluice::widgets
