#include "telemetry/gpu_sampler.h"

#include "telemetry/nvml_telemetry.h"
#include "util/mutex.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace sluice::telemetry {

struct GpuSampler::Impl
{
    NvmlTelemetry nvml;
    Callback onEvent;
    std::chrono::duration<double> interval;
    std::string reason;
    Mutex mutex;
    std::condition_variable wake;
    bool stopping GUARDED_BY(mutex) = false;
    std::thread thread;

    Impl(Callback callback, double seconds, const std::string &library) : nvml(library), onEvent(std::move(callback)), interval(seconds) {}

    void loop()
    {
        const auto start = std::chrono::steady_clock::now();
        MutexLock lock(mutex);
        while (!stopping) {
            lock.unlock();
            const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            onEvent(nvml.sample(t));
            lock.lock();
            const auto deadline = std::chrono::steady_clock::now() + interval;
            while (!stopping && wake.wait_until(lock.native(), deadline) != std::cv_status::timeout) {
            }
        }
    }
};

GpuSampler::GpuSampler(Callback onEvent, double intervalSeconds, const std::string &library)
    : m_impl(std::make_unique<Impl>(std::move(onEvent), intervalSeconds, library))
{
    if (!m_impl->nvml.available())
        m_impl->reason = m_impl->nvml.unavailableReason();
    else if (m_impl->nvml.deviceCount() == 0)
        m_impl->reason = "NVML reports no GPU";
    else
        m_impl->thread = std::thread([impl = m_impl.get()] { impl->loop(); });
}

GpuSampler::~GpuSampler()
{
    {
        MutexLock lock(m_impl->mutex);
        m_impl->stopping = true;
    }
    m_impl->wake.notify_all();
    if (m_impl->thread.joinable())
        m_impl->thread.join();
}

bool GpuSampler::running() const { return m_impl->thread.joinable(); }
const std::string &GpuSampler::reason() const { return m_impl->reason; }
int GpuSampler::devices() const { return m_impl->nvml.available() ? m_impl->nvml.deviceCount() : 0; }

} // namespace sluice::telemetry
