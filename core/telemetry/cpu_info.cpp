#include "telemetry/cpu_info.h"

#include <oneapi/tbb/info.h>

namespace sluice {

int defaultThreadCount() { return tbb::info::default_concurrency(); }

} // namespace sluice
