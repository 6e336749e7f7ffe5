#include "charts/project_runs.h"

#include "events/run_events.h"
#include "events/run_folder.h"

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
    const QString events = QDir(folder).filePath(QString::fromLatin1(runfolder::kEvents));
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
        const auto event = events::parseLine(std::string_view(line.constData(), std::size_t(line.size())));
        if (!event)
            continue; // a line cut short by a killed run, or a type a newer Sluice wrote
        if (const auto *start = events::as<events::RunStart>(*event); start && start->kind == events::RunStart::Kind::Pipeline)
            run.kind = QStringLiteral("pipeline");
        else if (const auto *end = events::as<events::RunEnd>(*event))
            run.status = QString::fromLatin1(runStatusName(end->status));
        else if (const auto *epoch = events::as<events::EpochEnd>(*event); epoch && epoch->value("loss"))
            epochLoss = epoch->value("loss");
        else if (const auto *step = events::as<events::Step>(*event))
            stepLoss = step->loss;
    }
    run.finalLoss = epochLoss ? epochLoss : stepLoss;
    return run;
}

QList<RunSummary> projectRuns(const QString &projectFolder, const QString &projectName)
{
    QList<RunSummary> runs;
    const QDir folder(QDir(projectFolder).filePath(QStringLiteral("runs")));
    for (const QFileInfo &info : folder.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QJsonObject project = readObject(QDir(info.absoluteFilePath()).filePath(QString::fromLatin1(runfolder::kProject)));
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
