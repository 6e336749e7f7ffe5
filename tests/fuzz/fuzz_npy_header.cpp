// libFuzzer target: any bytes handed to the .npy header parser give a header or an error,
// never a crash, and a parsed header never claims more data than the input holds.
#include "io/formats/npy_header.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte *>(data), size);
    const auto header = sluice::parseNpyHeader(bytes, "fuzz.npy");
    if (header.ok() && header->dataOffset + header->nbytes > size)
        std::abort();
    (void)sluice::npyHeaderLength(bytes);
    return 0;
}
