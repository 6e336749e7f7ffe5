#include "charts/run_record.h"


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

RunRecord::Changes RunRecord::addEvent(const events::Event &event)
{
    if (const auto *step = events::as<events::Step>(event)) {
        addStep(*step);
        return Loss;
    }
    if (const auto *epoch = events::as<events::EpochEnd>(event)) {
        // As a row of metrics.csv: the losses and metrics, the rates, and where it ended.
        QMap<QString, double> row{{QStringLiteral("epoch"), epoch->epoch},
                                  {QStringLiteral("step"), double(epoch->step)},
                                  {QStringLiteral("learning_rate"), epoch->learningRate},
                                  {QStringLiteral("samples_per_s"), epoch->samplesPerSecond}};
        for (const auto &[name, value] : epoch->values)
            row.insert(QString::fromStdString(name), value);
        return addEpochRow(row);
    }
    if (const auto *stats = events::as<events::Stats>(event))
        return addSnapshot(stats->snapshot);
    if (const auto *gpu = events::as<events::GpuSample>(event)) {
        addGpuSample(*gpu);
        return Devices;
    }
    if (const auto *cpu = events::as<events::CpuSample>(event)) {
        addCpuSample(*cpu);
        return Devices;
    }
    return None;
}

void RunRecord::addStep(const events::Step &event)
{
    const double step = double(event.step);
    while (!m_stepTimes.isEmpty() && m_stepTimes.last().y() >= step)
        m_stepTimes.removeLast(); // a resumed run repeats steps: the repeat counts
    m_stepTimes.append(QPointF(event.timeSeconds, step));
    const std::pair<const char *, double> figures[] = {
        {"loss", event.loss}, {"batch_loss", event.batchLoss}, {"learning_rate", event.learningRate}, {"samples_per_s", event.samplesPerSecond}};
    for (const auto &[name, value] : figures) {
        m_series.appendRewinding(QStringLiteral("step:") + QLatin1String(name), step, value);
        if (qstrcmp(name, "batch_loss") != 0)
            noteMetric(QLatin1String(name));
    }
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

RunRecord::Changes RunRecord::addSnapshot(const pipeline::PipelineSnapshot &snapshot)
{
    const double elapsed = snapshot.elapsedSeconds;
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
    for (const pipeline::StageSnapshot &stage : snapshot.stages) {
        const QString id = QString::fromStdString(stage.id);
        if (id.isEmpty())
            continue;
        const QString op = QString::fromStdString(stage.op);
        if (!m_stageIds.contains(id)) {
            m_stageIds.append(id);
            m_stageOps.insert(id, op);
        }
        const double elements = double(stage.elements);
        const double average = stage.elementsPerSecond;
        m_series.append(QStringLiteral("stage:") + id, x, rate(id, elements, average));
        if (op.startsWith(QLatin1String("from_")) || op == QLatin1String("load")) {
            haveSource = true;
            sourceElements += elements;
            sourceAverage += average;
        }
    }
    if (!haveSource) {
        sourceElements = double(snapshot.elements);
        sourceAverage = snapshot.elementsPerSecond;
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

void RunRecord::addGpuSample(const events::GpuSample &sample)
{
    const double t = sample.timeSeconds;
    for (const auto &d : sample.devices) {
        if (!m_gpuIndices.contains(d.index)) {
            m_gpuIndices.append(d.index);
            m_gpuNames.insert(d.index, QString::fromStdString(d.name));
        }
        const QString prefix = QStringLiteral("gpu:%1:").arg(d.index);
        // NVML may fail to read one figure of a device; the others are still drawn.
        if (d.utilizationPercent)
            m_series.append(prefix + QLatin1String("utilization"), t, double(*d.utilizationPercent));
        if (d.memoryUsedBytes)
            m_series.append(prefix + QLatin1String("memory"), t, double(*d.memoryUsedBytes) / bytesPerGiB);
        if (d.memoryTotalBytes)
            m_series.append(prefix + QLatin1String("memory_total"), t, double(*d.memoryTotalBytes) / bytesPerGiB);
    }
}

void RunRecord::addCpuSample(const events::CpuSample &sample)
{
    // Shown as a share of the usable cores, so that it reads on the same 0–100% axis as the
    // GPUs' utilisation: 100% is every core busy.
    m_cpuCores = std::max(1, sample.cores);
    m_series.append(QStringLiteral("cpu:percent"), sample.time, sample.processPercent / m_cpuCores);
}

} // namespace sluice::widgets
