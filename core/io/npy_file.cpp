#include "io/npy_file.h"

namespace sluice {

Result<NdArray> openNpy(const std::string &path)
{
    auto mapped = MappedFile::open(path);
    if (!mapped)
        return mapped.error();
    std::shared_ptr<const MappedFile> file = std::move(mapped).value();
    SharedBytes bytes{file, file->bytes()};
    return NdArray::parse(std::move(bytes), path, Storage::Mapped);
}

} // namespace sluice
