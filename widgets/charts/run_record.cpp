#include "charts/run_record.h"

#include <QJsonArray>
#include <QtNumeric>

#include <algorithm>

namespace sluice::widgets {

namespace {

constexpr double bytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// Keys of "epoch_end" (and columns of metrics.csv) that are not a line of the loss chart.
bool isEpochBookkeeping(const QString &key)
{
    return key == QLatin1String("event") || key == QLatin1String("epoch") || key == QLatin1String("step") || key == QLatin1String("seconds");
}

} // namespace

RunRecord::RunRecord(int maxPointsPerSeries) : m_series(maxPointsPerSeries) {}

void RunRecord::clear()
{
    m_series.clear();
    m_metrics.clear();
    m_stageIds.clear();
    m_stageOps.clear();
    m_gpuIndices.clear();
    m_gpuNames.clear();
    m_cpuCores = 0;
    m_lastCounts.clear();
    m_timeOffset = 0;
    m_lastElapsed = -1;
    m_snapshotInterval = 0;
    m_stepTimes.clear();
}

void RunRecord::noteMetric(const QString &key)
{
    const QString name = key.startsWith(QLatin1String("val_")) ? key.mid(4) : key;
    if (m_metrics.contains(name))
        return;
    // "loss" leads; the rates a step reports (learning rate, samples/s) come after the
    // model's own metrics, whichever event named them first.
    static const QStringList trailing{QStringLiteral("learning_rate"), QStringLiteral("samples_per_s")};
    if (name == QLatin1String("loss")) {
        m_metrics.prepend(name);
    } else if (trailing.contains(name)) {
        m_metrics.append(name);
    } else {
        int at = int(m_metrics.size());
        while (at > 0 && trailing.contains(m_metrics[at - 1]))
            --at;
        m_metrics.insert(at, name);
    }
}

RunRecord::Changes RunRecord::addEvent(const QJsonObject &event)
{
    const QString type = event.value(QLatin1String("event")).toString();
    if (type == QLatin1String("step")) {
        if (!event.value(QLatin1String("step")).isDouble())
            return None;
        const double step = event.value(QLatin1String("step")).toDouble();
        if (const QJsonValue t = event.value(QLatin1String("time_s")); t.isDouble()) {
            while (!m_stepTimes.isEmpty() && m_stepTimes.last().y() >= step)
                m_stepTimes.removeLast(); // a resumed run repeats steps: the repeat counts
            m_stepTimes.append(QPointF(t.toDouble(), step));
        }
        for (const char *name : {"loss", "batch_loss", "learning_rate", "samples_per_s"}) {
            const QJsonValue v = event.value(QLatin1String(name));
            if (!v.isDouble())
                continue;
            m_series.appendRewinding(QStringLiteral("step:") + QLatin1String(name), step, v.toDouble());
            if (qstrcmp(name, "batch_loss") != 0)
                noteMetric(QLatin1String(name));
        }
        return Loss;
    }
    if (type == QLatin1String("epoch_end")) {
        QMap<QString, double> row;
        for (auto it = event.begin(); it != event.end(); ++it)
            if (it.value().isDouble())
                row.insert(it.key(), it.value().toDouble());
        return addEpochRow(row);
    }
    if (type == QLatin1String("stats"))
        return addSnapshot(event);
    if (type == QLatin1String("gpu")) {
        addGpuSample(event);
        return Devices;
    }
    if (type == QLatin1String("cpu")) {
        addCpuSample(event);
        return Devices;
    }
    return None;
}

RunRecord::Changes RunRecord::addEpochRow(const QMap<QString, double> &row)
{
    // Plotted at the epoch's last step, so that epoch points sit on the per-step line they sum
    // up; a row without a step (an older metrics.csv) falls back to the epoch number.
    const auto step = row.constFind(QStringLiteral("step"));
    const auto epoch = row.constFind(QStringLiteral("epoch"));
    if (step == row.constEnd() && epoch == row.constEnd())
        return None;
    const double x = step != row.constEnd() ? *step : *epoch;
    for (auto it = row.begin(); it != row.end(); ++it) {
        if (isEpochBookkeeping(it.key()))
            continue;
        m_series.appendRewinding(QStringLiteral("epoch:") + it.key(), x, it.value());
        noteMetric(it.key());
    }
    return Loss;
}

RunRecord::Changes RunRecord::addSnapshot(const QJsonObject &snapshot)
{
    const double elapsed = snapshot.value(QLatin1String("elapsed_s")).toDouble();
    if (elapsed <= 0 || elapsed == m_lastElapsed)
        return None; // nothing ran yet, or the same snapshot again
    if (elapsed < m_lastElapsed) {
        // The pipeline started over (a resumed run in the same record): continue its time
        // axis after the earlier part instead of drawing over it.
        m_timeOffset += m_lastElapsed;
        m_lastCounts.clear();
    }
    const double x = m_timeOffset + elapsed;
    if (m_lastElapsed > 0 && elapsed > m_lastElapsed) {
        const double interval = elapsed - m_lastElapsed;
        if (m_snapshotInterval > 0 && interval > std::max(gapSeconds, gapIntervals * m_snapshotInterval)) {
            // No snapshot for a while (paused): a NaN point breaks every throughput line there.
            const double lastX = m_timeOffset + m_lastElapsed;
            for (const QString &key : m_series.keys())
                if (key.startsWith(QLatin1String("stage:")) || key == QLatin1String("throughput:samples"))
                    m_series.append(key, lastX + 1e-6, qQNaN());
        } else {
            m_snapshotInterval = m_snapshotInterval > 0 ? std::min(m_snapshotInterval, interval) : interval;
        }
    }
    m_lastElapsed = elapsed;

    auto rate = [&](const QString &key, double elements, double averageRate) {
        const auto last = m_lastCounts.constFind(key);
        double r = averageRate; // the first snapshot: only the average since the start exists
        if (last != m_lastCounts.constEnd() && elapsed > last->time && elements >= last->elements)
            r = (elements - last->elements) / (elapsed - last->time);
        m_lastCounts[key] = Count{elements, elapsed};
        return r;
    };

    // Samples/s is what the sources read: a batch counts its rows as elements of the source
    // chain (pipeline_stats), whereas the consumer counts batches.
    double sourceElements = 0, sourceAverage = 0;
    bool haveSource = false;
    const QJsonArray stages = snapshot.value(QLatin1String("stages")).toArray();
    for (const QJsonValue &value : stages) {
        const QJsonObject stage = value.toObject();
        const QString id = stage.value(QLatin1String("id")).toString();
        if (id.isEmpty())
            continue;
        const QString op = stage.value(QLatin1String("op")).toString();
        if (!m_stageIds.contains(id)) {
            m_stageIds.append(id);
            m_stageOps.insert(id, op);
        }
        const double elements = stage.value(QLatin1String("elements")).toDouble();
        const double average = stage.value(QLatin1String("elements_per_s")).toDouble();
        m_series.append(QStringLiteral("stage:") + id, x, rate(id, elements, average));
        if (op.startsWith(QLatin1String("from_"))) {
            haveSource = true;
            sourceElements += elements;
            sourceAverage += average;
        }
    }
    if (!haveSource) {
        sourceElements = snapshot.value(QLatin1String("elements")).toDouble();
        sourceAverage = snapshot.value(QLatin1String("elements_per_s")).toDouble();
    }
    m_series.append(QStringLiteral("throughput:samples"), x, rate(QString(), sourceElements, sourceAverage));
    return Throughput;
}

namespace {

// y at x on the polyline of (x, y) points sorted by x; NaN when empty; held flat past its ends.
double interpolate(const QList<QPointF> &points, double x, bool byY)
{
    if (points.isEmpty())
        return qQNaN();
    const auto key = [byY](const QPointF &p) { return byY ? p.y() : p.x(); };
    const auto value = [byY](const QPointF &p) { return byY ? p.x() : p.y(); };
    if (x <= key(points.first()))
        return value(points.first());
    for (int i = 1; i < points.size(); ++i)
        if (x <= key(points[i])) {
            const double span = key(points[i]) - key(points[i - 1]);
            const double f = span > 0 ? (x - key(points[i - 1])) / span : 1.0;
            return value(points[i - 1]) + f * (value(points[i]) - value(points[i - 1]));
        }
    return value(points.last());
}

} // namespace

double RunRecord::stepAtTime(double seconds) const { return interpolate(m_stepTimes, seconds, false); }

double RunRecord::timeAtStep(double step) const { return interpolate(m_stepTimes, step, true); }

void RunRecord::addGpuSample(const QJsonObject &event)
{
    if (!event.value(QLatin1String("time")).isDouble())
        return;
    const double t = event.value(QLatin1String("time")).toDouble();
    const QJsonArray devices = event.value(QLatin1String("devices")).toArray();
    for (int i = 0; i < devices.size(); ++i) {
        const QJsonObject d = devices[i].toObject();
        const int index = d.value(QLatin1String("index")).toInt(i);
        if (!m_gpuIndices.contains(index)) {
            m_gpuIndices.append(index);
            m_gpuNames.insert(index, d.value(QLatin1String("name")).toString());
        }
        const QString prefix = QStringLiteral("gpu:%1:").arg(index);
        // NVML may fail to read one figure of a device; the others are still drawn.
        if (const QJsonValue v = d.value(QLatin1String("utilization_percent")); v.isDouble())
            m_series.append(prefix + QLatin1String("utilization"), t, v.toDouble());
        if (const QJsonValue v = d.value(QLatin1String("memory_used_bytes")); v.isDouble())
            m_series.append(prefix + QLatin1String("memory"), t, v.toDouble() / bytesPerGiB);
        if (const QJsonValue v = d.value(QLatin1String("memory_total_bytes")); v.isDouble())
            m_series.append(prefix + QLatin1String("memory_total"), t, v.toDouble() / bytesPerGiB);
    }
}

void RunRecord::addCpuSample(const QJsonObject &event)
{
    const QJsonValue t = event.value(QLatin1String("time")), percent = event.value(QLatin1String("process_percent"));
    if (!t.isDouble() || !percent.isDouble())
        return;
    // Shown as a share of the usable cores, so that it reads on the same 0–100% axis as the
    // GPUs' utilisation: 100% is every core busy.
    m_cpuCores = std::max(1, event.value(QLatin1String("cores")).toInt(1));
    m_series.append(QStringLiteral("cpu:percent"), t.toDouble(), percent.toDouble() / m_cpuCores);
}

} // namespace sluice::widgets
