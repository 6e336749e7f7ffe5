#pragma once
// The .npy header: magic, version, and the Python dict literal that describes the array.
// Pure functions over bytes, so that the parser can be fuzzed on its own.

#include "io/dtype.h"
#include "io/error.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sluice {

struct NpyHeader
{
    int versionMajor = 1;
    int versionMinor = 0;
    TypeDescr descr;
    bool fortranOrder = false;
    std::vector<std::uint64_t> shape;
    std::uint64_t dataOffset = 0; // bytes from the start of the .npy to its first element
    std::uint64_t count = 1;      // number of elements (product of shape; 1 for 0-d)
    std::uint64_t nbytes = 0;     // count * item size

    std::string versionString() const { return std::to_string(versionMajor) + "." + std::to_string(versionMinor); }
};

// Parses the header at the start of `bytes`, which holds the whole .npy (file or zip member)
// so that the data size can be checked against it. `name` is used in error messages.
Result<NpyHeader> parseNpyHeader(std::span<const std::byte> bytes, const std::string &name);

// How many bytes of a .npy must be read to be sure to hold the whole header of a file
// whose first bytes (at least 12) are `prefix`; 0 if the prefix is not a .npy at all.
std::uint64_t npyHeaderLength(std::span<const std::byte> prefix);

// Builds a complete header (magic to the newline) for the given array. The dict is padded
// with spaces so that the data starts on a 64-byte boundary, as numpy does. When
// `reserveRows` is set, the padding leaves room for the first dimension to grow to any
// 64-bit value, so that a streaming writer can rewrite the header in place when it knows
// the final row count. Version 1.0 is used when the header fits, else 2.0.
std::string formatNpyHeader(TypeDescr descr, bool fortranOrder, std::span<const std::uint64_t> shape,
                            bool reserveRows = false);
// The same with numpy's descr text as given (fixed-width byte strings: "|S12").
std::string formatNpyHeaderText(const std::string &descr, bool fortranOrder, std::span<const std::uint64_t> shape,
                            bool reserveRows = false);

} // namespace sluice
