#pragma once
// Writes .npz archives that numpy's np.load reads: each array is a .npy member, stored or
// deflated. Used for previews and exported weights, whose members fit in memory. Members
// and the archive are limited to 4 GiB (no ZIP64 records are written).
//
// Threading: one thread at a time.

#include "io/atomic_file.h"
#include "io/dtype.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sluice {

class NpzWriter
{
public:
    enum class Compression { Stored, Deflated };

    static Result<NpzWriter> create(const std::string &path, Compression compression = Compression::Stored);

    // Adds array `name` (written as "name.npy") with C-ordered element bytes in `descr`'s byte order.
    Status add(const std::string &name, TypeDescr descr, std::span<const std::uint64_t> shape, std::span<const std::byte> data);

    // Adds byte strings as numpy's fixed-width bytes dtype ("|S<longest>", zero-padded), which
    // is how np.load gives back TensorFlow string features.
    Status addStrings(const std::string &name, std::span<const std::uint64_t> shape, const std::vector<std::string> &values);

    Status finish();

private:
    struct Central
    {
        std::string name;
        std::uint32_t crc = 0;
        std::uint32_t compressedSize = 0;
        std::uint32_t size = 0;
        std::uint32_t offset = 0;
        std::uint16_t method = 0;
    };
    NpzWriter(AtomicFile file) : m_file(std::move(file)) {}
    Status addMember(const std::string &name, const std::string &header, std::span<const std::byte> data);

    AtomicFile m_file;
    Compression m_compression = Compression::Stored;
    std::vector<Central> m_entries;
};

} // namespace sluice
