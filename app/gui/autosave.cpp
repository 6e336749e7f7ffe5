#include "gui/autosave.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>

#include <signal.h>
#include <unistd.h>

namespace sluice::gui {

namespace {

bool writeAtomically(const QString &path, const QByteArray &bytes)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    file.write(bytes);
    return file.commit();
}

bool processAlive(qint64 pid) { return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM); }

} // namespace

QString Autosave::folder()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(QStringLiteral("autosave"));
}

QString Autosave::keyFor(const QString &originalPath)
{
    const QByteArray seed = originalPath.isEmpty() ? QByteArray("untitled-") + QByteArray::number(::getpid()) : originalPath.toUtf8();
    return QString::fromLatin1(QCryptographicHash::hash(seed, QCryptographicHash::Sha1).toHex().left(16));
}

bool Autosave::write(const QString &key, const QString &originalPath, const nlohmann::json &state)
{
    if (!QDir().mkpath(folder()))
        return false;
    const QDir dir(folder());
    const QJsonObject meta{{QStringLiteral("original"), originalPath},
                           {QStringLiteral("pid"), qint64(::getpid())},
                           {QStringLiteral("saved_at"), QDateTime::currentDateTime().toString(Qt::ISODate)}};
    return writeAtomically(dir.filePath(key + QStringLiteral(".sluice")), QByteArray::fromStdString(state.dump(2))) &&
           writeAtomically(dir.filePath(key + QStringLiteral(".json")), QJsonDocument(meta).toJson());
}

void Autosave::remove(const QString &key)
{
    const QDir dir(folder());
    QFile::remove(dir.filePath(key + QStringLiteral(".sluice")));
    QFile::remove(dir.filePath(key + QStringLiteral(".json")));
}

std::vector<RecoveryFile> Autosave::orphans()
{
    std::vector<RecoveryFile> found;
    const QDir dir(folder());
    for (const QString &name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Time)) {
        QFile metaFile(dir.filePath(name));
        if (!metaFile.open(QIODevice::ReadOnly))
            continue;
        const QJsonObject meta = QJsonDocument::fromJson(metaFile.readAll()).object();
        const QString state = dir.filePath(name.chopped(5) + QStringLiteral(".sluice"));
        const qint64 pid = meta.value(QStringLiteral("pid")).toInteger();
        if (!QFile::exists(state) || (pid != ::getpid() && processAlive(pid)) || pid == ::getpid())
            continue; // another workbench still owns it, or it is ours
        found.push_back({state, dir.filePath(name), meta.value(QStringLiteral("original")).toString(),
                         QDateTime::fromString(meta.value(QStringLiteral("saved_at")).toString(), Qt::ISODate)});
    }
    return found;
}

void Autosave::discard(const RecoveryFile &file)
{
    QFile::remove(file.statePath);
    QFile::remove(file.metaPath);
}

} // namespace sluice::gui
