#pragma once
// The recent-projects list (File ▸ Open Recent and the welcome page), kept in QSettings,
// newest first, without duplicates, at most kMax entries; files that no longer exist are
// dropped when the list is read.
//
// Threading: GUI thread.

#include <QStringList>

namespace sluice::gui {

class RecentProjects
{
public:
    static constexpr int kMax = 10;
    static QStringList list();
    static void add(const QString &path);
    static void remove(const QString &path);
};

} // namespace sluice::gui
