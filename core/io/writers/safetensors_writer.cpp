#include "io/writers/safetensors_writer.h"

#include "io/writers/atomic_file.h"

#include <nlohmann/json.hpp>

#include <bit>
#include <set>

namespace sluice {

Result<std::string> safetensorsHeader(std::span<const SafetensorsTensor> tensors, const std::map<std::string, std::string> &metadata)
{
    // ordered_json keeps the tensors in file order, which makes the header easy to read.
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty())
        header["__metadata__"] = metadata;
    std::set<std::string> seen;
    std::uint64_t offset = 0;
    for (const auto &t : tensors) {
        if (t.name.empty() || t.name == "__metadata__")
            return Error::invalid(t.name.empty() ? "safetensors" : t.name, "is not a usable tensor name");
        if (!seen.insert(t.name).second)
            return Error::invalid(t.name, "appears twice: safetensors names its tensors uniquely");
        std::uint64_t count = 1;
        for (auto d : t.shape) {
            if (d < 0)
                return Error::invalid(t.name, "has a negative dimension");
            count *= std::uint64_t(d);
        }
        if (count != t.values.size())
            return Error::invalid(t.name, "its shape holds " + std::to_string(count) + " values, but " + std::to_string(t.values.size()) + " were given");
        const std::uint64_t bytes = count * sizeof(float);
        header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string text = header.dump();
    // The reference writer pads the header with spaces to a multiple of 8 bytes, so that the
    // tensors that follow are aligned for readers that map the file.
    text.append((8 - text.size() % 8) % 8, ' ');
    return text;
}

Status writeSafetensors(const std::string &path, std::span<const SafetensorsTensor> tensors, const std::map<std::string, std::string> &metadata)
{
    static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian values");
    auto header = safetensorsHeader(tensors, metadata);
    if (!header)
        return header.error();
    auto file = AtomicFile::create(path);
    if (!file)
        return file.error();
    std::uint64_t length = header->size();
    std::byte prefix[8];
    for (int i = 0; i < 8; ++i)
        prefix[i] = std::byte((length >> (8 * i)) & 0xff);
    if (auto s = file->write(std::span<const std::byte>(prefix, 8)); !s.ok())
        return s;
    if (auto s = file->write(*header); !s.ok())
        return s;
    for (const auto &t : tensors)
        if (auto s = file->write(std::as_bytes(t.values)); !s.ok())
            return s;
    return file->commit();
}

} // namespace sluice
