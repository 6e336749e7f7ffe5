#pragma once
// GPU telemetry through NVML, loaded with dlopen at run time (docs/architecture.md, decision 4: no link
// dependency): per device utilisation, memory used / total, power and temperature. Where the
// library or the driver is missing, the object is unavailable and says why; nothing crashes.
//
// Threading: build it once; sample() may be called from any one thread at a time (the sampler's).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::telemetry {

// One device's readings; a figure NVML cannot read on this device (power on some boards) is empty.
struct GpuReading
{
    int index = 0;
    std::string name;
    std::optional<unsigned> utilizationPercent; // busy share of the last sample period
    std::optional<std::uint64_t> memoryUsedBytes;
    std::optional<std::uint64_t> memoryTotalBytes;
    std::optional<double> powerWatts;
    std::optional<int> temperatureC;
};

struct GpuSnapshot
{
    double timeSeconds = 0; // the caller's clock (seconds since the run started)
    std::vector<GpuReading> devices;
};

class NvmlTelemetry
{
public:
    // Loads `library` (NVML's soname by default; another name lets tests see the absent case)
    // and initialises NVML.
    explicit NvmlTelemetry(const std::string &library = "libnvidia-ml.so.1");
    ~NvmlTelemetry(); // shuts NVML down and unloads it
    NvmlTelemetry(const NvmlTelemetry &) = delete;
    NvmlTelemetry &operator=(const NvmlTelemetry &) = delete;

    bool available() const;
    // Why available() is false, in words for the user ("NVML not found (...): no NVIDIA driver?").
    const std::string &unavailableReason() const;
    int deviceCount() const;

    // Reads every device now; an unavailable NVML gives no devices.
    GpuSnapshot sample(double timeSeconds) const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace sluice::telemetry
