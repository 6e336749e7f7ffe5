#pragma once
// Read-only access to an HDF5 file's groups and floating-point datasets, for Keras's weight files
// (`model.weights.h5`, alone or inside a `.keras` archive). Wraps the HDF5 C library, whose
// own error printing is switched off: every failure is an Error naming the file and the object.
// A build without HDF5 (SLUICE_WITH_HDF5=OFF) has the same interface, and open() says so.
//
// Threading: one thread at a time per object (the HDF5 library Debian ships is not thread-safe:
// callers do not share files between threads).

#include "io/error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

struct Hdf5Array
{
    std::vector<std::int64_t> shape;
    std::vector<float> values; // C order, converted to float32 by HDF5 from the stored type
};

class Hdf5File
{
public:
    static bool available(); // false in a build without HDF5

    static Result<Hdf5File> open(const std::string &path);
    // A file held in memory (a member of an archive); `what` names it in errors.
    static Result<Hdf5File> openImage(std::vector<std::byte> bytes, const std::string &what);

    Hdf5File(Hdf5File &&other) noexcept;
    Hdf5File &operator=(Hdf5File &&other) noexcept;
    Hdf5File(const Hdf5File &) = delete;
    Hdf5File &operator=(const Hdf5File &) = delete;
    ~Hdf5File();

    const std::string &what() const { return m_what; }
    bool isGroup(const std::string &path) const;
    bool isDataset(const std::string &path) const;
    // The names of a group's members, in the file's name order; an error when it is no group.
    Result<std::vector<std::string>> members(const std::string &group) const;
    // A dataset of a floating-point type (float16/32/64 are converted); others are refused.
    Result<Hdf5Array> readFloats(const std::string &dataset) const;

private:
    Hdf5File() = default;
    std::int64_t m_file = -1; // hid_t
    std::vector<std::byte> m_image; // openImage: HDF5's core driver reads from it
    std::string m_what;
};

// An HDF5 file built in memory and handed back as bytes (for a member of a .keras archive):
// groups and float32 datasets, with intermediate groups made as needed.
class Hdf5Builder
{
public:
    static Result<Hdf5Builder> create(const std::string &what);
    Hdf5Builder(Hdf5Builder &&other) noexcept;
    Hdf5Builder &operator=(Hdf5Builder &&other) noexcept;
    Hdf5Builder(const Hdf5Builder &) = delete;
    Hdf5Builder &operator=(const Hdf5Builder &) = delete;
    ~Hdf5Builder();

    Status addGroup(const std::string &path);
    Status addFloats(const std::string &path, const std::vector<std::int64_t> &shape, const float *values);
    // The file's bytes as it stands (flushed first).
    Result<std::vector<std::byte>> bytes();

private:
    Hdf5Builder() = default;
    std::int64_t m_file = -1; // hid_t
    std::string m_what;
};

} // namespace sluice
