#include "charts/device_chart.h"

#include "charts/chart_style.h"

#include <algorithm>

namespace sluice::widgets {

DeviceChart::DeviceChart(QWidget *parent) : ChartView(parent)
{
    QCPAxisRect *top = axisRect(0);
    top->axis(QCPAxis::atLeft)->setLabel(tr("utilisation (%)"));
    top->axis(QCPAxis::atLeft)->setRange(0, 105);

    m_memoryRect = new QCPAxisRect(this);
    plotLayout()->insertRow(1); // between the utilisation and the legend's row
    plotLayout()->addElement(1, 0, m_memoryRect);
    m_memoryRect->axis(QCPAxis::atLeft)->setLabel(tr("memory (GiB)"));
    m_memoryRect->axis(QCPAxis::atBottom)->setLabel(tr("time (s)"));
    // The same time window above and below, whichever one the user drags, and aligned left
    // axes whatever the width of their tick labels.
    connect(top->axis(QCPAxis::atBottom), qOverload<const QCPRange &>(&QCPAxis::rangeChanged), m_memoryRect->axis(QCPAxis::atBottom),
            qOverload<const QCPRange &>(&QCPAxis::setRange));
    connect(m_memoryRect->axis(QCPAxis::atBottom), qOverload<const QCPRange &>(&QCPAxis::rangeChanged), top->axis(QCPAxis::atBottom),
            qOverload<const QCPRange &>(&QCPAxis::setRange));
    auto *margins = new QCPMarginGroup(this);
    top->setMarginGroup(QCP::MarginSides(QCP::msLeft) | QCP::msRight, margins);
    m_memoryRect->setMarginGroup(QCP::MarginSides(QCP::msLeft) | QCP::msRight, margins);
    // Utilisation has a fixed 0–100% scale: only time is dragged or zoomed there.
    top->setRangeDrag(Qt::Horizontal);
    top->setRangeZoom(Qt::Horizontal);
}

DeviceChart::~DeviceChart()
{
    if (!m_memoryRect->layout())
        delete m_memoryRect; // no graph lives on it while it is out (build() hides it only without GPUs)
}

QString DeviceChart::gpuLineName(int index, const QString &name)
{
    return name.isEmpty() ? QStringLiteral("GPU %1").arg(index) : QStringLiteral("GPU %1 %2").arg(index).arg(name);
}

QString DeviceChart::gpuMemoryLineName(int index) { return QStringLiteral("GPU %1 memory").arg(index); }

QString DeviceChart::cpuLineName(int cores) { return QStringLiteral("CPU (%1 cores)").arg(cores); }

QString DeviceChart::signature() const
{
    if (!m_live)
        return {};
    QString s = m_live->series().contains(QStringLiteral("cpu:percent")) ? QStringLiteral("cpu%1").arg(m_live->cpuCores()) : QString();
    for (int index : m_live->gpuIndices())
        for (const char *what : {"utilization", "memory", "memory_total"})
            s += m_live->series().contains(QStringLiteral("gpu:%1:%2").arg(index).arg(QLatin1String(what))) ? QLatin1Char('1') : QLatin1Char('0');
    return s;
}

void DeviceChart::build()
{
    if (!m_live)
        return; // no overlays here: a past run's devices say little about this run
    const QPalette &pal = palette();
    const QList<int> gpus = m_live->gpuIndices();
    showMemory(!gpus.isEmpty());
    for (int i = 0; i < gpus.size(); ++i) {
        const int index = gpus[i];
        const QColor color = chart_style::lineColor(i, pal);
        const QString prefix = QStringLiteral("gpu:%1:").arg(index);
        addLine(*m_live, prefix + QLatin1String("utilization"), gpuLineName(index, m_live->gpuName(index)), chart_style::livePen(color));
        if (QCPGraph *g = addLine(*m_live, prefix + QLatin1String("memory"), gpuMemoryLineName(index), chart_style::livePen(color), m_memoryRect))
            g->removeFromLegend(); // the legend's GPU entry names the colour already
        if (QCPGraph *g = addLine(*m_live, prefix + QLatin1String("memory_total"), gpuMemoryLineName(index) + QStringLiteral(" total"),
                                  chart_style::livePen(color, 1.0, Qt::DotLine), m_memoryRect))
            g->removeFromLegend();
    }
    addLine(*m_live, QStringLiteral("cpu:percent"), cpuLineName(m_live->cpuCores()), chart_style::livePen(chart_style::lineColor(int(gpus.size()), pal)));
}

void DeviceChart::showMemory(bool shown)
{
    // Without a GPU there is no memory to draw: the utilisation chart takes the whole height and
    // carries the time axis's label.
    const bool inLayout = m_memoryRect->layout() != nullptr;
    if (shown == inLayout)
        return;
    m_memoryRect->setVisible(shown); // out of the layout it would still draw where it was
    if (shown) {
        plotLayout()->insertRow(1);
        plotLayout()->addElement(1, 0, m_memoryRect);
        axisRect(0)->axis(QCPAxis::atBottom)->setLabel(QString());
    } else {
        plotLayout()->take(m_memoryRect);
        plotLayout()->simplify();
        axisRect(0)->axis(QCPAxis::atBottom)->setLabel(tr("time (s)"));
    }
}

void DeviceChart::rescale()
{
    // Time from every line; memory from 0 to the largest capacity (or use); utilisation fixed.
    bool found = false;
    QCPRange time, memory(0, 1);
    for (int i = 0; i < graphCount(); ++i) {
        QCPGraph *g = graph(i);
        bool ok = false;
        const QCPRange keys = g->getKeyRange(ok);
        if (ok) {
            time = found ? QCPRange(std::min(time.lower, keys.lower), std::max(time.upper, keys.upper)) : keys;
            found = true;
        }
        if (g->valueAxis() == m_memoryRect->axis(QCPAxis::atLeft)) {
            const QCPRange values = g->getValueRange(ok);
            if (ok)
                memory.upper = std::max(memory.upper, values.upper * 1.05);
        }
    }
    if (!found)
        return;
    if (time.size() <= 0)
        time = QCPRange(time.lower - 1, time.upper + 1);
    axisRect(0)->axis(QCPAxis::atBottom)->setRange(time); // the memory axis follows (connected)
    axisRect(0)->axis(QCPAxis::atLeft)->setRange(0, 105);
    m_memoryRect->axis(QCPAxis::atLeft)->setRange(memory);
}

} // namespace sluice::widgets
