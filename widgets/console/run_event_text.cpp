#include "console/run_event_text.h"

#include <QStringList>

#include <algorithm>

namespace sluice::widgets {

namespace {

QString number(double v) { return QString::number(v, 'g', 5); }

qint64 integer(const QJsonObject &event, const char *key) { return qint64(event.value(QLatin1String(key)).toDouble()); }

QString plural(qint64 n, const QString &one, const QString &many) { return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many); }

} // namespace

QString humanCount(double value)
{
    if (value >= 1e6)
        return QString::number(value / 1e6, 'f', 2) + QLatin1Char('M');
    if (value >= 1e3)
        return QString::number(value / 1e3, 'f', 1) + QLatin1Char('k');
    return QString::number(value, 'f', 0);
}

QString epochLine(const QJsonObject &event, int epochs)
{
    const qint64 epoch = integer(event, "epoch");
    QString line = epochs > 0 ? QStringLiteral("Epoch %1/%2:").arg(epoch).arg(epochs) : QStringLiteral("Epoch %1:").arg(epoch);
    // The order RunOutput::printEpochLine uses: loss, training metrics, validation metrics.
    static const QStringList bookkeeping{QStringLiteral("event"), QStringLiteral("epoch"), QStringLiteral("step"), QStringLiteral("seconds"),
                                         QStringLiteral("samples_per_s"), QStringLiteral("learning_rate"), QStringLiteral("loss")};
    QStringList keys{QStringLiteral("loss")};
    for (const bool validation : {false, true})
        for (auto it = event.begin(); it != event.end(); ++it)
            if (!bookkeeping.contains(it.key()) && it.key().startsWith(QLatin1String("val_")) == validation && it.value().isDouble())
                keys.append(it.key());
    QStringList parts;
    for (const QString &key : keys)
        if (event.value(key).isDouble())
            parts.append(key + QLatin1Char(' ') + number(event.value(key).toDouble()));
    line += QLatin1Char(' ') + parts.join(QStringLiteral(" - "));
    line += QStringLiteral(" (%1 s, %2 samples/s)")
                .arg(QString::number(event.value(QLatin1String("seconds")).toDouble(), 'f', 1),
                     humanCount(event.value(QLatin1String("samples_per_s")).toDouble()));
    return line;
}

std::optional<LogLine> describeEvent(const QJsonObject &event, int epochs)
{
    const QString type = event.value(QLatin1String("event")).toString();
    if (type == QLatin1String("run_start")) {
        if (event.value(QLatin1String("kind")).toString() == QLatin1String("pipeline"))
            return LogLine{LogLevel::Info, QStringLiteral("Iterating the pipeline up to \"%1\"").arg(event.value(QLatin1String("output")).toString())};
        const qint64 replicas = std::max<qint64>(1, integer(event, "replicas")), processes = std::max<qint64>(1, integer(event, "processes"));
        QString text = event.value(QLatin1String("model")).toString();
        if (!text.isEmpty() && !text.endsWith(QLatin1Char('\n')))
            text += QLatin1Char('\n');
        const QString device = event.value(QLatin1String("device")).toString(QStringLiteral("cpu"));
        text += device == QLatin1String("cpu") ? QStringLiteral("Training on ") : QStringLiteral("Training on %1: ").arg(device);
        text += QStringLiteral("%1 x %2 (%3 all-reduce, %4)")
                    .arg(plural(replicas, QStringLiteral("replica"), QStringLiteral("replicas")),
                         plural(processes, QStringLiteral("process"), QStringLiteral("processes")), event.value(QLatin1String("reducer")).toString(),
                         event.value(QLatin1String("optimizer")).toString());
        if (const qint64 start = integer(event, "start_step"); start > 0)
            text += QStringLiteral(", from step %1").arg(start);
        return LogLine{LogLevel::Info, text};
    }
    if (type == QLatin1String("epoch_end"))
        return LogLine{LogLevel::Info, epochLine(event, epochs)};
    if (type == QLatin1String("notice"))
        return LogLine{LogLevel::Warning, QStringLiteral("Note: ") + event.value(QLatin1String("message")).toString()};
    if (type == QLatin1String("checkpoint"))
        return LogLine{LogLevel::Info, QStringLiteral("Checkpoint at step %1: %2").arg(integer(event, "step")).arg(event.value(QLatin1String("path")).toString())};
    if (type == QLatin1String("resumed"))
        return LogLine{LogLevel::Info, QStringLiteral("Resumed from %1 at step %2").arg(event.value(QLatin1String("path")).toString()).arg(integer(event, "step"))};
    if (type == QLatin1String("run_end")) {
        const QString status = event.value(QLatin1String("status")).toString();
        // Training runs count steps; pipeline-only runs count elements.
        const QString where = event.contains(QLatin1String("elements"))
                                  ? plural(integer(event, "elements"), QStringLiteral("element"), QStringLiteral("elements"))
                                  : QStringLiteral("step %1").arg(integer(event, "step"));
        if (status == QLatin1String("ok"))
            return LogLine{LogLevel::Info, QStringLiteral("Run finished (%1)").arg(where)};
        if (status == QLatin1String("cancelled"))
            return LogLine{LogLevel::Warning, QStringLiteral("Run stopped (%1)").arg(where)};
        const QString error = event.value(QLatin1String("error")).toString();
        return LogLine{LogLevel::Error, QStringLiteral("Run failed (%1): %2").arg(where, error.isEmpty() ? QStringLiteral("no reason given") : error)};
    }
    return std::nullopt;
}

} // namespace sluice::widgets
