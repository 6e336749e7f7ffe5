#include "canvas/source_from_files.h"

#include "document/source_specs.h"
#include "io/array_report.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>

#include <map>

namespace sluice::widgets {

namespace {

enum class Kind { Npy, Npz, TfRecord, Csv, Image, ImageFolder, Other };

bool isImageName(const QString &name)
{
    return name.endsWith(QLatin1String(".jpg")) || name.endsWith(QLatin1String(".jpeg")) || name.endsWith(QLatin1String(".png"));
}

Kind kindOf(const QString &path)
{
    if (QFileInfo(path).isDir())
        return Kind::ImageFolder;
    const QString name = QFileInfo(path).fileName().toLower();
    if (isImageName(name))
        return Kind::Image;
    if (name.endsWith(QLatin1String(".npy")))
        return Kind::Npy;
    if (name.endsWith(QLatin1String(".npz")))
        return Kind::Npz;
    if (name.endsWith(QLatin1String(".tfrecord")) || name.endsWith(QLatin1String(".tfrecords")) || name.endsWith(QLatin1String(".tfrecord.gz")))
        return Kind::TfRecord;
    if (name.endsWith(QLatin1String(".csv")) || name.endsWith(QLatin1String(".tsv")))
        return Kind::Csv;
    return Kind::Other;
}

QString relativeTo(const QString &folder, const QString &path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const QString relative = QDir(folder).relativeFilePath(absolute);
    return relative.startsWith(QLatin1String("..")) ? absolute : relative;
}

// What a dropped file's source reads, from the file itself (one pass over it): the TFRecord
// feature spec or the CSV columns. A file that cannot be read is named in `problems`.
nlohmann::json reportOf(const QString &path, QStringList &problems)
{
    auto report = inspectFile(path.toStdString(), InspectOptions{});
    if (!report) {
        problems << QString::fromStdString(report.error().message());
        return nlohmann::json::object();
    }
    return *report;
}

const QStringList kImagePatterns{QStringLiteral("*.jpg"), QStringLiteral("*.jpeg"), QStringLiteral("*.png"), QStringLiteral("*.JPG"),
                                 QStringLiteral("*.JPEG"), QStringLiteral("*.PNG")};

// The sub-folders of `folder` that hold pictures: the classes, as from_files and Keras's
// image_dataset_from_directory see them (one level down; from_files also reads nested ones).
QStringList classFolders(const QString &folder)
{
    QStringList classes;
    const QDir dir(folder);
    for (const QString &sub : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        if (!QDir(dir.filePath(sub)).entryList(kImagePatterns, QDir::Files).isEmpty())
            classes << sub;
    return classes;
}

// A dropped folder: with class sub-folders, from_files over them (labels from the folders);
// with pictures of its own only, from_files over those, unlabelled.
void addImageFolder(const QString &path, const QString &relative, DroppedFiles &out)
{
    const QStringList classes = classFolders(path);
    if (!classes.isEmpty()) {
        out.sources.push_back({QStringLiteral("from_files"), QJsonObject{{QStringLiteral("directory"), relative}}});
        return;
    }
    if (!QDir(path).entryList(kImagePatterns, QDir::Files).isEmpty()) {
        out.sources.push_back({QStringLiteral("from_files"), QJsonObject{{QStringLiteral("directory"), relative}, {QStringLiteral("labels"), QJsonValue()}}});
        return;
    }
    out.problems << QStringLiteral("%1: a folder without pictures (.jpg, .jpeg, .png) or class sub-folders of them").arg(path);
}

} // namespace

bool isDataFile(const QString &path) { return kindOf(path) != Kind::Other; }
bool readsThrough(const QString &path) { return kindOf(path) == Kind::TfRecord || kindOf(path) == Kind::Csv; }

DroppedFiles sourcesFromFiles(const QStringList &paths, const QString &projectFolder)
{
    DroppedFiles out;
    QJsonObject npyFeatures;
    QJsonArray tfrecords, csvs, images;
    QStringList tfrecordPaths, csvPaths;
    for (const QString &path : paths) {
        const QString relative = relativeTo(projectFolder, path);
        switch (kindOf(path)) {
        case Kind::Npy: {
            QString feature = QFileInfo(path).completeBaseName();
            for (int n = 2; npyFeatures.contains(feature); ++n)
                feature = QStringLiteral("%1_%2").arg(QFileInfo(path).completeBaseName()).arg(n);
            npyFeatures[feature] = relative;
            break;
        }
        case Kind::Npz:
            out.sources.push_back({QStringLiteral("from_npz"), QJsonObject{{QStringLiteral("path"), relative}}});
            break;
        case Kind::TfRecord:
            tfrecords.append(relative);
            tfrecordPaths << path;
            break;
        case Kind::Csv:
            csvs.append(relative);
            csvPaths << path;
            break;
        case Kind::Image:
            images.append(relative);
            break;
        case Kind::ImageFolder:
            addImageFolder(path, relative, out);
            break;
        case Kind::Other:
            out.problems << QStringLiteral("%1: not a data file Sluice reads (.npy, .npz, TFRecord, CSV, images or a folder of them)").arg(path);
            break;
        }
    }
    if (!npyFeatures.isEmpty())
        out.sources.insert(out.sources.begin(), {QStringLiteral("from_npy"), QJsonObject{{QStringLiteral("features"), npyFeatures}}});
    if (!tfrecords.isEmpty()) {
        QJsonObject params{{QStringLiteral("filenames"), tfrecords.size() == 1 ? tfrecords.at(0) : QJsonValue(tfrecords)},
                           {QStringLiteral("features"), tfRecordSpecFromReport(reportOf(tfrecordPaths.front(), out.problems), out.problems)}};
        if (tfrecordPaths.front().endsWith(QLatin1String(".gz"), Qt::CaseInsensitive))
            params[QStringLiteral("compression_type")] = QStringLiteral("GZIP");
        out.sources.push_back({QStringLiteral("from_tfrecord"), params});
    }
    if (!images.isEmpty())
        out.sources.push_back({QStringLiteral("from_files"), QJsonObject{{QStringLiteral("files"), images.size() == 1 ? images.at(0) : QJsonValue(images)}}});
    if (!csvs.isEmpty()) {
        QJsonObject params{{QStringLiteral("filenames"), csvs.size() == 1 ? csvs.at(0) : QJsonValue(csvs)}};
        if (const QJsonObject columns = csvColumnsFromReport(reportOf(csvPaths.front(), out.problems)); !columns.isEmpty())
            params[QStringLiteral("columns")] = columns;
        if (csvPaths.front().endsWith(QLatin1String(".tsv"), Qt::CaseInsensitive))
            params[QStringLiteral("field_delim")] = QStringLiteral("\t");
        out.sources.push_back({QStringLiteral("from_csv"), params});
    }
    return out;
}

} // namespace sluice::widgets
