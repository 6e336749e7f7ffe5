#include "pipeline/host_functions.h"

#include <mutex>

namespace sluice::pipeline {
namespace {
std::mutex g_hostMutex;
std::shared_ptr<HostFunctions> g_host; // GUARDED_BY(g_hostMutex)
} // namespace

void setHostFunctions(std::shared_ptr<HostFunctions> host)
{
    std::lock_guard lock(g_hostMutex);
    g_host = std::move(host);
}

std::shared_ptr<HostFunctions> hostFunctions()
{
    std::lock_guard lock(g_hostMutex);
    return g_host;
}

} // namespace sluice::pipeline
