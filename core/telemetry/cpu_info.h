#pragma once

namespace sluice {

// Threads a oneTBB arena gets when the user asks for "all cores" (respects CPU affinity).
int defaultThreadCount();

} // namespace sluice
