// Built when Sluice is configured without CUDA.
#include "train/gpu/device_query.h"

namespace sluice {

DeviceQuery queryGpuDevices()
{
    DeviceQuery q;
    q.reason = "this build of Sluice has no CUDA support (configure with SLUICE_WITH_CUDA)";
    return q;
}

} // namespace sluice
