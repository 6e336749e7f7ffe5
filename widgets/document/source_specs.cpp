#include "document/source_specs.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>

namespace sluice::widgets {

QJsonObject tfRecordSpecFromReport(const nlohmann::json &report, QStringList &problems)
{
    QJsonObject spec;
    const QString file = QString::fromStdString(report.value("file", std::string()));
    if (!report.contains("features"))
        return spec;
    for (const auto &[name, f] : report["features"].items()) {
        const int lo = f.value("min_length", 0), hi = f.value("max_length", 0);
        if (lo != hi) {
            problems << QStringLiteral("%1: feature \"%2\" has %3 to %4 values per record; only fixed-length features are read")
                            .arg(file, QString::fromStdString(name))
                            .arg(lo)
                            .arg(hi);
            continue;
        }
        QJsonObject entry{{QStringLiteral("dtype"), QString::fromStdString(f.value("dtype", std::string("float32")))}};
        entry[QStringLiteral("shape")] = lo == 1 ? QJsonArray() : QJsonArray{lo};
        spec[QString::fromStdString(name)] = entry;
    }
    return spec;
}

QJsonObject csvColumnsFromReport(const nlohmann::json &report)
{
    QJsonObject columns;
    if (!report.contains("columns") || !report["columns"].is_array())
        return columns;
    for (const auto &c : report["columns"]) {
        std::string dtype = c.value("dtype", std::string("float32"));
        if (dtype == "float64")
            dtype = "float32";
        columns[QString::fromStdString(c.value("name", std::string()))] = QString::fromStdString(dtype);
    }
    return columns;
}

QStringList npzMembersFromReport(const nlohmann::json &report)
{
    QStringList members;
    if (report.contains("arrays") && report["arrays"].is_object())
        for (const auto &[name, array] : report["arrays"].items())
            members << QString::fromStdString(name);
    return members;
}

QString firstSourceFile(const QJsonValue &paths, const QString &projectFolder)
{
    QStringList candidates;
    if (paths.isString())
        candidates << paths.toString();
    for (const QJsonValue &p : paths.toArray())
        candidates << p.toString();
    for (const QString &candidate : candidates) {
        if (candidate.trimmed().isEmpty())
            continue;
        const QFileInfo info(QDir(projectFolder).absoluteFilePath(candidate.trimmed()));
        if (!candidate.contains(QLatin1Char('*')) && !candidate.contains(QLatin1Char('?')) && !candidate.contains(QLatin1Char('['))) {
            if (info.isFile())
                return info.absoluteFilePath();
            continue;
        }
        // A pattern in its last part, as the sources expand it: the first match by name.
        const QStringList matches = info.dir().entryList({info.fileName()}, QDir::Files, QDir::Name);
        if (!matches.isEmpty())
            return info.dir().absoluteFilePath(matches.front());
    }
    return {};
}

} // namespace sluice::widgets
