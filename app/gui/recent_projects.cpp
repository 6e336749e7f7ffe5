#include "gui/recent_projects.h"

#include <QFileInfo>
#include <QSettings>

namespace sluice::gui {

namespace {
const char *kKey = "recentProjects";
}

QStringList RecentProjects::list()
{
    QStringList kept;
    for (const QString &path : QSettings().value(kKey).toStringList())
        if (QFileInfo::exists(path) && !kept.contains(path))
            kept << path;
    return kept;
}

void RecentProjects::add(const QString &path)
{
    QStringList paths = list();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    paths.removeAll(absolute);
    paths.prepend(absolute);
    while (paths.size() > kMax)
        paths.removeLast();
    QSettings().setValue(kKey, paths);
}

void RecentProjects::remove(const QString &path)
{
    QStringList paths = list();
    paths.removeAll(QFileInfo(path).absoluteFilePath());
    QSettings().setValue(kKey, paths);
}

} // namespace sluice::gui
