#pragma once
// The points of one run's chart lines, kept where QCustomPlot draws them from: each series is a
// shared QCPGraphDataContainer that the graphs showing it share (QCPGraph::setData with a
// shared pointer), so appending a point is all it takes to show it, and no point is copied.
// Series are bounded: past a cap the whole line is halved (pairs averaged), so a run of
// days keeps at most maxPoints() points per line, and the line's shape.
//
// Threading: a plain value of the GUI thread (its containers are drawn by the graphs there).

#include <QList>
#include <QMap>
#include <QSharedPointer>
#include <QString>
#include <QStringList>

class QCPGraphData;
template <class DataType>
class QCPDataContainer;
using QCPGraphDataContainer = QCPDataContainer<QCPGraphData>;

namespace sluice::widgets {

class SeriesStore
{
public:
    static constexpr int defaultMaxPoints = 20000;

    explicit SeriesStore(int maxPoints = defaultMaxPoints);

    // Appends (x, y) to `key`'s series; x must not be below the last x (see appendRewinding).
    void append(const QString &key, double x, double y);
    // Appends after dropping every point at or after x: a resumed run repeats the steps its
    // interrupted run had reached, and the repeat replaces them rather than zigzagging.
    void appendRewinding(const QString &key, double x, double y);

    // The series of `key`, created empty when it does not exist yet (graphs may bind to a series
    // before its first point). Never null.
    QSharedPointer<QCPGraphDataContainer> series(const QString &key);
    bool contains(const QString &key) const { return m_series.contains(key); }
    int size(const QString &key) const; // 0 for a missing series
    QStringList keys() const { return m_series.keys(); }
    int totalPoints() const;
    void clear();
    int maxPoints() const { return m_maxPoints; }

    // Halves `data` by averaging neighbouring pairs, the last point kept as it is (the live end
    // of the line stays exact). Public for tests.
    static void thin(QCPGraphDataContainer &data);

private:
    void bound(QCPGraphDataContainer &data);

    QMap<QString, QSharedPointer<QCPGraphDataContainer>> m_series;
    int m_maxPoints;
};

} // namespace sluice::widgets
