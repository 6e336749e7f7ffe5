#pragma once
// Writes a safetensors file (Hugging Face's format, read by `safetensors.torch.load_file` and
// `safetensors.numpy.load_file`): an 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the tensors' bytes back to back, in the order
// given. Written atomically (io/writers/atomic_file.h): a failed export leaves no half file.
//
// Threading: a free function; call it from any thread.

#include "io/error.h"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace sluice {

struct SafetensorsTensor
{
    std::string name;
    std::vector<std::int64_t> shape;
    std::span<const float> values; // float32, C order; as many as the shape holds
};

// The header the file starts with (without its length prefix): what writeSafetensors writes,
// exposed for tests. Errors: an empty or repeated name, a name "__metadata__", a shape whose
// element count differs from the values given.
Result<std::string> safetensorsHeader(std::span<const SafetensorsTensor> tensors, const std::map<std::string, std::string> &metadata);

Status writeSafetensors(const std::string &path, std::span<const SafetensorsTensor> tensors, const std::map<std::string, std::string> &metadata = {});

} // namespace sluice
