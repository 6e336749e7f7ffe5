#include "charts/project_runs.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

#include <algorithm>

namespace sluice::widgets {

namespace {

QJsonObject readObject(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

// The run folder's name is its start time (the workbench names them so); a folder named
// otherwise (`sluice run --out DIR`) falls back to its events file's time.
QDateTime startOf(const QFileInfo &folder, const QString &events)
{
    const QString stamp = folder.fileName().left(15);
    QDateTime time = QDateTime::fromString(stamp, QStringLiteral("yyyyMMdd-HHmmss"));
    if (!time.isValid())
        time = QFileInfo(events).birthTime();
    if (!time.isValid())
        time = QFileInfo(events).lastModified();
    return time;
}

} // namespace

QString RunSummary::describe() const
{
    QString text = QLocale().toString(started, QStringLiteral("d MMM yyyy HH:mm"));
    text += QStringLiteral(" · %1 · %2").arg(kind, status);
    if (finalLoss)
        text += QStringLiteral(" · loss %1").arg(*finalLoss, 0, 'g', 4);
    return text;
}

std::optional<RunSummary> summariseRun(const QString &folder)
{
    const QFileInfo info(folder);
    const QString events = QDir(folder).filePath(QStringLiteral("events.jsonl"));
    QFile file(events);
    if (!info.isDir() || !file.open(QIODevice::ReadOnly))
        return std::nullopt;
    RunSummary run;
    run.folder = QDir::cleanPath(info.absoluteFilePath());
    run.name = info.fileName();
    run.started = startOf(info, events);
    run.kind = QStringLiteral("training");
    run.status = QStringLiteral("unfinished");
    std::optional<double> stepLoss, epochLoss;
    while (!file.atEnd()) {
        const QByteArray line = file.readLine().trimmed();
        if (line.isEmpty())
            continue;
        const QJsonObject event = QJsonDocument::fromJson(line).object(); // a line cut short reads as empty
        const QString type = event.value(QLatin1String("event")).toString();
        if (type == QLatin1String("run_start") && event.value(QLatin1String("kind")).toString() == QLatin1String("pipeline"))
            run.kind = QStringLiteral("pipeline");
        else if (type == QLatin1String("run_end"))
            run.status = event.value(QLatin1String("status")).toString(QStringLiteral("unfinished"));
        else if (type == QLatin1String("epoch_end") && event.value(QLatin1String("loss")).isDouble())
            epochLoss = event.value(QLatin1String("loss")).toDouble();
        else if (type == QLatin1String("step") && event.value(QLatin1String("loss")).isDouble())
            stepLoss = event.value(QLatin1String("loss")).toDouble();
    }
    run.finalLoss = epochLoss ? epochLoss : stepLoss;
    return run;
}

QList<RunSummary> projectRuns(const QString &projectFolder, const QString &projectName)
{
    QList<RunSummary> runs;
    const QDir folder(QDir(projectFolder).filePath(QStringLiteral("runs")));
    for (const QFileInfo &info : folder.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QJsonObject project = readObject(QDir(info.absoluteFilePath()).filePath(QStringLiteral("project.sluice")));
        if (project.value(QLatin1String("name")).toString() != projectName)
            continue;
        if (auto run = summariseRun(info.absoluteFilePath()))
            runs.append(*run);
    }
    std::sort(runs.begin(), runs.end(), [](const RunSummary &a, const RunSummary &b) {
        return a.started != b.started ? a.started > b.started : a.name > b.name;
    });
    return runs;
}

} // namespace sluice::widgets
