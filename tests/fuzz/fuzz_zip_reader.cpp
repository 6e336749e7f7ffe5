// libFuzzer target: any bytes handed to the zip directory reader and the inflater give
// entries or an error, never a crash; every entry listed lies inside the input.
#include "io/formats/npy_header.h"
#include "io/formats/zip_reader.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte *>(data), size);
    const auto entries = sluice::readZipDirectory(bytes, "fuzz.npz");
    if (!entries.ok())
        return 0;
    for (const sluice::ZipEntry &e : *entries) {
        if (e.dataOffset + e.compressedSize > size)
            std::abort();
        if (e.method == sluice::ZipEntry::Method::Deflated) {
            const auto inflated = sluice::inflateZipEntry(bytes, e, e.name);
            if (inflated.ok())
                (void)sluice::parseNpyHeader(*inflated, e.name);
        } else {
            (void)sluice::parseNpyHeader(bytes.subspan(e.dataOffset, e.compressedSize), e.name);
        }
    }
    return 0;
}
