#pragma once
// Writes .npz archives that numpy's np.load reads: each array is a .npy member, stored or
// deflated. Used for previews, exported weights and checkpoints, whose members are in memory.
// Members and archives of any size: past 4 GiB (or 65534 members) the ZIP64 records are written,
// as Python's zipfile does, so a checkpoint of Adam over 350 M parameters is one archive too.
//
// Threading: one thread at a time.

#include "io/writers/atomic_file.h"
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

    // `zip64From`: sizes and offsets from which ZIP64 records are written (tests lower it to
    // check ZIP64 archives without writing 4 GiB).
    static constexpr std::uint64_t kZip32Limit = 0xfffffffeu;
    static Result<NpzWriter> create(const std::string &path, Compression compression = Compression::Stored,
                                    std::uint64_t zip64From = kZip32Limit + 1);

    // Adds array `name` (written as "name.npy") with C-ordered element bytes in `descr`'s byte order.
    Status add(const std::string &name, TypeDescr descr, std::span<const std::uint64_t> shape, std::span<const std::byte> data);

    // Adds byte strings as numpy's fixed-width bytes dtype ("|S<longest>", zero-padded), which
    // is how np.load gives back TensorFlow string features.
    Status addStrings(const std::string &name, std::span<const std::uint64_t> shape, const std::vector<std::string> &values);

    // Adds any file as a member (a .keras archive's config.json and weights, say).
    Status addFile(const std::string &memberName, std::span<const std::byte> bytes);

    Status finish();

private:
    struct Central
    {
        std::string name;
        std::uint32_t crc = 0;
        std::uint64_t compressedSize = 0;
        std::uint64_t size = 0;
        std::uint64_t offset = 0;
        std::uint16_t method = 0;
    };
    NpzWriter(AtomicFile file) : m_file(std::move(file)) {}
    Status addMember(const std::string &name, const std::string &header, std::span<const std::byte> data);

    AtomicFile m_file;
    Compression m_compression = Compression::Stored;
    std::uint64_t m_zip64From = kZip32Limit + 1;
    std::vector<Central> m_entries;
};

} // namespace sluice
