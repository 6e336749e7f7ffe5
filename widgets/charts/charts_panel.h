#pragma once
// The workbench's live charts: throughput (samples/s and elements/s per stage), loss and metrics
// (per step and per epoch, validation dashed, a metric picker) and devices (GPU utilisation and
// memory, CPU use), plus past runs overlaid, faded, for comparison. It draws what the run bridge
// delivers (app/bridge/run_session.h) and computes nothing beyond rates between snapshots.
//
// Threading contract: a widget; every function is called from the GUI thread. The bridge's
// signals arrive there already coalesced (~25 batches a second at most); each call appends its
// batch and asks each chart it touched for one queued replot (never one per point). Results of a
// run other than the one of the last beginRun() are ignored (stale results, docs/architecture.md).

#include "io/error.h"

#include "events/run_events.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <vector>

class QComboBox;
class QLabel;
class QSplitter;

namespace sluice::widgets {

class ChartView;
class DeviceChart;
class LossChart;
class RunRecord;
class ThroughputChart;

class ChartsPanel : public QWidget
{
    Q_OBJECT
public:
    // Points kept per line; beyond it a line is thinned to half (pairs averaged).
    static constexpr int maxPointsPerSeries = 20000;

    explicit ChartsPanel(QWidget *parent = nullptr);
    ~ChartsPanel() override;

    // A new run: its id is the one later calls must carry. Clears the live lines, keeps the
    // overlays; `label` names the run above the charts.
    void beginRun(quint64 runId, const QString &label);
    // Training events as the Trainer emits them ("step", "epoch_end", "stats", …) and device
    // samples ("gpu", "cpu"), in order.
    void addRunEvents(quint64 runId, const QList<events::Event> &events);
    // A pipeline statistics snapshot (PipelineSnapshot::toJson()).
    void addPipelineStats(quint64 runId, const pipeline::PipelineSnapshot &snapshot);
    // The run has ended: its lines stay until the next beginRun().
    void endRun(quint64 runId);
    // Another project: no run, no overlays, "No run yet".
    void reset();
    // A past run's lines drawn as the current run's (the project's newest run, on opening it),
    // labelled `label`; an unreadable folder is an error and leaves the charts as they were.
    Status showPastRun(const QString &runFolder, const QString &label);
    // The folder whose lines are drawn as the current run (live or past); empty when none.
    QString currentRunFolder() const { return m_currentFolder; }
    void setCurrentRunFolder(const QString &folder) { m_currentFolder = folder; }
    quint64 runId() const { return m_runId; }

    // True once any chart holds a point (a live line or an overlay).
    bool hasData() const;

    // Overlays a past run's folder (events.jsonl, metrics.csv as `sluice run --out` writes
    // them): its loss, metric and throughput lines are drawn faded. Overlaying a folder again
    // reloads it. An unreadable folder is an error naming the file and the reason; the charts
    // are then unchanged.
    Status overlayRun(const QString &runFolder);
    void clearOverlays();
    void removeOverlay(const QString &runFolder);
    QStringList overlays() const; // the folders, in the order they were overlaid

    // The metric the loss chart shows ("loss" by default), and the ones it can show.
    QString metric() const;
    void setMetric(const QString &metric);
    QStringList metrics() const;

    // Side by side (a wide bottom dock) or stacked (a tall side dock).
    void setOrientation(Qt::Orientation orientation);

    // One time cursor for the three charts: the mouse over one places it on the others at the
    // same moment of the run (steps map to seconds through the step events' time).
    void showCursorAt(const ChartView *from, double x);

    ThroughputChart *throughputChart() const { return m_throughput; }
    LossChart *lossChart() const { return m_loss; }
    DeviceChart *deviceChart() const { return m_devices; }

private:
    struct Overlay;
    void refresh(int changes);
    void updateMetricChoices();
    void updateTitle();
    void setSources();

    quint64 m_runId = 0;
    QString m_label;
    QString m_currentFolder;
    bool m_running = false;
    std::unique_ptr<RunRecord> m_live;
    std::vector<std::unique_ptr<Overlay>> m_overlays;

    QLabel *m_title = nullptr;
    QComboBox *m_metricCombo = nullptr;
    QSplitter *m_splitter = nullptr;
    ThroughputChart *m_throughput = nullptr;
    LossChart *m_loss = nullptr;
    DeviceChart *m_devices = nullptr;
};

} // namespace sluice::widgets
