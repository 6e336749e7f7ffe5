// Hdf5File in a build without the HDF5 C library (SLUICE_WITH_HDF5=OFF): open() says so.
#include "io/formats/hdf5_file.h"

namespace sluice {

namespace {
Error missing(const std::string &what)
{
    return Error::unsupported(what, "this Sluice was built without the HDF5 library (SLUICE_WITH_HDF5), which Keras weight files need");
}
} // namespace

bool Hdf5File::available() { return false; }
Result<Hdf5File> Hdf5File::open(const std::string &path) { return missing(path); }
Result<Hdf5File> Hdf5File::openImage(std::vector<std::byte>, const std::string &what) { return missing(what); }
Hdf5File::Hdf5File(Hdf5File &&other) noexcept = default;
Hdf5File &Hdf5File::operator=(Hdf5File &&other) noexcept = default;
Hdf5File::~Hdf5File() = default;
bool Hdf5File::isGroup(const std::string &) const { return false; }
bool Hdf5File::isDataset(const std::string &) const { return false; }
Result<std::vector<std::string>> Hdf5File::members(const std::string &) const { return missing(m_what); }
Result<Hdf5Array> Hdf5File::readFloats(const std::string &) const { return missing(m_what); }

Result<Hdf5Builder> Hdf5Builder::create(const std::string &what) { return missing(what); }
Hdf5Builder::Hdf5Builder(Hdf5Builder &&other) noexcept = default;
Hdf5Builder &Hdf5Builder::operator=(Hdf5Builder &&other) noexcept = default;
Hdf5Builder::~Hdf5Builder() = default;
Status Hdf5Builder::addGroup(const std::string &) { return missing(m_what); }
Status Hdf5Builder::addFloats(const std::string &, const std::vector<std::int64_t> &, const float *) { return missing(m_what); }
Result<std::vector<std::byte>> Hdf5Builder::bytes() { return missing(m_what); }

} // namespace sluice
