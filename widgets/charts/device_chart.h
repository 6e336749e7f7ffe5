#pragma once
// The devices a run uses over time: above, utilisation in % — one line per GPU (NVML's "gpu"
// events) and the process's CPU use as a share of its cores ("cpu" events, when training on
// CPU); below, each GPU's memory in use (GiB) with its capacity dotted. Both share the time axis.
//
// Threading: a widget; GUI thread only.

#include "charts/chart_view.h"

namespace sluice::widgets {

class DeviceChart : public ChartView
{
    Q_OBJECT
public:
    explicit DeviceChart(QWidget *parent = nullptr);
    ~DeviceChart() override; // the memory chart while it is out of the layout is ours to delete

    QCPAxisRect *utilizationRect() const { return axisRect(0); }
    QCPAxisRect *memoryRect() const { return m_memoryRect; }

    // Legend names: "GPU 0 H100" / "GPU 0 memory" / "CPU (8 cores)".
    static QString gpuLineName(int index, const QString &name);
    static QString gpuMemoryLineName(int index);
    static QString cpuLineName(int cores);

protected:
    void build() override;
    QString signature() const override;
    void rescale() override;

private:
    void showMemory(bool shown);
    QCPAxisRect *m_memoryRect = nullptr;
};

} // namespace sluice::widgets
