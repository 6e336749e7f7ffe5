#pragma once
// Throughput over the run's time: samples/s read by the pipeline's sources (the bold line) and
// elements/s of every stage, one line per stage id, on a logarithmic axis (a source's rows/s and
// a batch stage's batches/s differ by the batch size). Overlaid runs add their samples/s, faded.
//
// Threading: a widget; GUI thread only.

#include "charts/chart_view.h"

namespace sluice::widgets {

class ThroughputChart : public ChartView
{
    Q_OBJECT
public:
    explicit ThroughputChart(QWidget *parent = nullptr);

    static QString samplesLineName() { return QStringLiteral("samples/s"); }
    // The legend name of a stage's line: "<id> (<op>)".
    static QString stageLineName(const QString &id, const QString &op);

protected:
    void build() override;
    QString signature() const override;
};

} // namespace sluice::widgets
