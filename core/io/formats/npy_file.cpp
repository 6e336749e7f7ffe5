#include "io/formats/npy_file.h"

namespace sluice {
namespace {

// Reading the header faults its page in, and the kernel maps up to 16 neighbouring pages that
// are in the page cache along with it ("fault-around"). Thousands of small files opened for
// one pipeline would then hold up to 64 KiB each in the resident set before a row is read.
constexpr std::size_t kFaultAroundBytes = 64u << 10;

} // namespace

Result<NdArray> openNpy(const std::string &path)
{
    auto mapped = MappedFile::open(path);
    if (!mapped)
        return mapped.error();
    std::shared_ptr<const MappedFile> file = std::move(mapped).value();
    // A mapping nobody else uses has no advice yet: without one, the fault on the header would
    // read around it (the disk's readahead, often 8 MiB) from cold storage. The pass that reads
    // the rows advises its own pattern.
    if (file.use_count() == 1)
        file->adviseAccess(MappedFile::Access::Random);
    SharedBytes bytes{file, file->bytes()};
    auto array = NdArray::parse(std::move(bytes), path, Storage::Mapped);
    file->release(0, kFaultAroundBytes + 4096); // the pages stay in the page cache
    return array;
}

} // namespace sluice
