#include "charts/run_folder.h"

#include "events/run_events.h"
#include "io/formats/csv_text.h"

#include "charts/run_record.h"
#include "events/run_folder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

namespace sluice::widgets {

namespace {

std::string path8(const QString &path) { return QDir::toNativeSeparators(path).toStdString(); }

Status readEvents(const QString &path, RunRecord &record, bool epochsFromCsv)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error::io(path8(path), file.errorString().toStdString());
    const QList<QByteArray> lines = file.readAll().split('\n');
    for (int i = 0; i < lines.size(); ++i) {
        const QByteArray line = lines[i].trimmed();
        if (line.isEmpty())
            continue;
        auto event = events::parseLine(std::string_view(line.constData(), std::size_t(line.size())));
        if (!event) {
            if (event.error().kind == Error::Kind::Unsupported)
                continue; // a type a newer Sluice wrote: the others still draw
            const bool lastLine = i == lines.size() - 1 || (i == lines.size() - 2 && lines.back().trimmed().isEmpty());
            if (lastLine)
                break; // cut short by a killed run: what came before is still the run
            return Error::corrupt(path8(path) + ":" + std::to_string(i + 1), event.error().message());
        }
        if (epochsFromCsv && events::as<events::EpochEnd>(*event))
            continue;
        record.addEvent(*event);
    }
    return Status::success();
}

Status readMetricsCsv(const QString &path, RunRecord &record)
{
    // CSV as RunOutput writes it (io/formats/csv_text.h): names may be quoted, values are numbers.
    auto table = readCsvTable(path8(path));
    if (!table)
        return table.error();
    if (table->columns.empty())
        return Status::success(); // the run ended before its first epoch
    for (std::size_t r = 0; r < table->rows.size(); ++r) {
        const auto &fields = table->rows[r];
        QMap<QString, double> row;
        for (std::size_t c = 0; c < fields.size() && c < table->columns.size(); ++c) {
            if (fields[c].empty())
                continue; // a metric this epoch did not report
            bool ok = false;
            const double v = QString::fromStdString(fields[c]).toDouble(&ok);
            if (!ok)
                return Error::corrupt(path8(path) + ":" + std::to_string(table->lines[r]),
                                      "\"" + fields[c] + "\" in column " + table->columns[c] + " is not a number");
            row.insert(QString::fromStdString(table->columns[c]), v);
        }
        record.addEpochRow(row);
    }
    return Status::success();
}

} // namespace

Status readRunFolder(const QString &folder, RunRecord &record)
{
    const QFileInfo info(folder);
    if (!info.isDir())
        return Error::notFound(path8(folder), "no such folder");
    const QDir dir(folder);
    const QString events = dir.filePath(QString::fromLatin1(runfolder::kEvents));
    const QString metrics = dir.filePath(QString::fromLatin1(runfolder::kMetrics));
    const bool haveEvents = QFileInfo::exists(events), haveMetrics = QFileInfo::exists(metrics);
    if (!haveEvents && !haveMetrics)
        return Error::notFound(path8(folder), "not a run folder (no events.jsonl or metrics.csv)");
    if (haveMetrics)
        if (Status s = readMetricsCsv(metrics, record); !s.ok())
            return s;
    if (haveEvents)
        if (Status s = readEvents(events, record, haveMetrics); !s.ok())
            return s;
    return Status::success();
}

} // namespace sluice::widgets
