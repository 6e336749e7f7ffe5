#include "pipeline/functions/host_functions.h"
#include "util/mutex.h"

#include <mutex>

namespace sluice::pipeline {
namespace {
Mutex g_hostMutex;
std::shared_ptr<HostFunctions> g_host GUARDED_BY(g_hostMutex);
std::function<std::shared_ptr<HostFunctions>()> g_provider GUARDED_BY(g_hostMutex);
} // namespace

void setHostFunctionsProvider(std::function<std::shared_ptr<HostFunctions>()> provider)
{
    MutexLock lock(g_hostMutex);
    g_provider = std::move(provider);
}

void setHostFunctions(std::shared_ptr<HostFunctions> host)
{
    MutexLock lock(g_hostMutex);
    g_host = std::move(host);
}

std::shared_ptr<HostFunctions> hostFunctions()
{
    MutexLock lock(g_hostMutex);
    if (!g_host && g_provider)
        g_host = g_provider();
    return g_host;
}

} // namespace sluice::pipeline
