#pragma once
// Loss or one metric over the training steps. For the chosen metric m:
//   - per step, the epoch's running mean (the "step" events' value), and for the loss the
//     loss of each batch as a faint line;
//   - per epoch, m and val_m at the step each epoch ended, with markers; validation dashed;
//   - the same lines of every overlaid run, faded.
// learning_rate and samples_per_s are metrics too (the step events carry them).
//
// Threading: a widget; GUI thread only.

#include "charts/chart_view.h"

namespace sluice::widgets {

class LossChart : public ChartView
{
    Q_OBJECT
public:
    explicit LossChart(QWidget *parent = nullptr);

    QString metric() const { return m_metric; }
    void setMetric(const QString &metric); // rebuilds the lines

    // Legend names of the live lines of `metric`.
    static QString stepLineName(const QString &metric) { return metric + QStringLiteral(" (step)"); }
    static QString batchLossLineName() { return QStringLiteral("batch loss"); }
    static QString epochLineName(const QString &metric) { return metric + QStringLiteral(" (epoch)"); }
    static QString validationLineName(const QString &metric) { return QStringLiteral("val_") + metric; }

protected:
    void build() override;
    QString signature() const override;

private:
    void addRunLines(const RunRecord &record, const QString &prefix, int colorIndex, bool overlay);

    QString m_metric = QStringLiteral("loss");
};

} // namespace sluice::widgets
