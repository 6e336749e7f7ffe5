#pragma once
// Opening .npy files: a mapping of the whole file and a parsed header; nothing is read
// until the caller touches the data.

#include "io/nd_array.h"

#include <string>

namespace sluice {

Result<NdArray> openNpy(const std::string &path);

} // namespace sluice
