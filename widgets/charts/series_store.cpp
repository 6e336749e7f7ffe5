#include "charts/series_store.h"

#include "charts/qcustomplot_include.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sluice::widgets {

SeriesStore::SeriesStore(int maxPoints) : m_maxPoints(std::max(16, maxPoints)) {}

QSharedPointer<QCPGraphDataContainer> SeriesStore::series(const QString &key)
{
    auto it = m_series.find(key);
    if (it == m_series.end())
        it = m_series.insert(key, QSharedPointer<QCPGraphDataContainer>::create());
    return *it;
}

void SeriesStore::append(const QString &key, double x, double y)
{
    auto data = series(key);
    data->add(QCPGraphData(x, y)); // appended in O(1) when x is not below the last key
    bound(*data);
}

void SeriesStore::appendRewinding(const QString &key, double x, double y)
{
    auto data = series(key);
    if (!data->isEmpty() && (data->constEnd() - 1)->key >= x)
        // [x, last], the repeated part; remove() ignores an empty range (from == to), hence the
        // upper end just past the last key.
        data->remove(x, std::nextafter((data->constEnd() - 1)->key, std::numeric_limits<double>::infinity()));
    data->add(QCPGraphData(x, y));
    bound(*data);
}

int SeriesStore::size(const QString &key) const
{
    const auto it = m_series.constFind(key);
    return it == m_series.constEnd() ? 0 : (*it)->size();
}

int SeriesStore::totalPoints() const
{
    int total = 0;
    for (const auto &data : m_series)
        total += data->size();
    return total;
}

void SeriesStore::clear()
{
    // Emptied in place, not dropped: graphs still bound to a container keep a valid one.
    for (const auto &data : m_series)
        data->clear();
    m_series.clear();
}

void SeriesStore::bound(QCPGraphDataContainer &data)
{
    if (data.size() > m_maxPoints)
        thin(data);
}

void SeriesStore::thin(QCPGraphDataContainer &data)
{
    // The whole line is halved, not just its old end: repeated thinning of only the oldest part
    // would squeeze a long run's beginning into a handful of points. Pairs are averaged (rather
    // than every other point dropped) to keep a noisy line's level; the last point stays as it
    // is, so the live end of the line shows the latest value.
    const int n = data.size();
    if (n < 3)
        return;
    QVector<QCPGraphData> kept;
    kept.reserve(n / 2 + 1);
    auto it = data.constBegin();
    const auto last = data.constEnd() - 1;
    for (; it + 1 < last; it += 2)
        kept.append(QCPGraphData((it->key + (it + 1)->key) / 2, (it->value + (it + 1)->value) / 2));
    for (; it != data.constEnd(); ++it)
        kept.append(*it);
    data.set(kept, true); // in place: graphs sharing the container see the thinned points
}

} // namespace sluice::widgets
