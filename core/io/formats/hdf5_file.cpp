#include "io/formats/hdf5_file.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

namespace sluice {
namespace {

// HDF5 prints its error stack to stderr by default; Sluice reports errors itself.
void silenceHdf5()
{
    static std::once_flag once;
    std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

// Closes an HDF5 handle of any kind when it goes.
class Handle
{
public:
    explicit Handle(hid_t id) : m_id(id) {}
    ~Handle()
    {
        if (m_id >= 0)
            H5Idec_ref(m_id);
    }
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    hid_t get() const { return m_id; }
    bool ok() const { return m_id >= 0; }

private:
    hid_t m_id;
};

// An HDF5 file starts with its signature, at 0 or at 512, 1024, ... (a user block).
bool hasSignature(const std::vector<std::byte> &bytes)
{
    static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    for (std::size_t at = 0; at + 8 <= bytes.size(); at = at == 0 ? 512 : at * 2)
        if (std::memcmp(bytes.data() + at, signature, 8) == 0)
            return true;
    return false;
}

bool linkExists(hid_t file, const std::string &path)
{
    // H5Lexists checks one link; every parent on the way must exist first.
    std::size_t at = 0;
    while (at != std::string::npos) {
        at = path.find('/', at + 1);
        const std::string part = path.substr(0, at);
        if (part.empty() || part == "/")
            continue;
        if (H5Lexists(file, part.c_str(), H5P_DEFAULT) <= 0)
            return false;
    }
    return true;
}

// H5I_GROUP, H5I_DATASET, or H5I_BADID where there is no such object (the calls used here exist
// alike in HDF5 1.10, Debian 12's, and later versions).
H5I_type_t objectType(hid_t file, const std::string &path)
{
    if (file < 0 || !linkExists(file, path))
        return H5I_BADID;
    Handle object(H5Oopen(file, path.c_str(), H5P_DEFAULT));
    return object.ok() ? H5Iget_type(object.get()) : H5I_BADID;
}

} // namespace

bool Hdf5File::available() { return true; }

Result<Hdf5File> Hdf5File::open(const std::string &path)
{
    silenceHdf5();
    FILE *probe = std::fopen(path.c_str(), "rb");
    if (!probe)
        return Error::notFound(path, "no such file");
    std::vector<std::byte> head(8);
    const bool readable = std::fread(head.data(), 1, 8, probe) == 8;
    std::fclose(probe);
    Hdf5File f;
    f.m_what = path;
    f.m_file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f.m_file < 0) // a signature further in (after a user block) is HDF5's to find
        return Error::corrupt(path, readable && hasSignature(head) ? "the HDF5 library cannot open it (damaged or truncated?)" : "is not an HDF5 file");
    return f;
}

Result<Hdf5File> Hdf5File::openImage(std::vector<std::byte> bytes, const std::string &what)
{
    silenceHdf5();
    if (!hasSignature(bytes))
        return Error::corrupt(what, "is not an HDF5 file");
    Hdf5File f;
    f.m_what = what;
    f.m_image = std::move(bytes);
    Handle access(H5Pcreate(H5P_FILE_ACCESS));
    if (!access.ok() || H5Pset_fapl_core(access.get(), 1 << 20, 0) < 0 ||
        H5Pset_file_image(access.get(), f.m_image.data(), f.m_image.size()) < 0)
        return Error::io(what, "the HDF5 library cannot take the file from memory");
    // The name only identifies the image to HDF5's core driver: nothing is read from disk.
    f.m_file = H5Fopen(("sluice-image:" + what).c_str(), H5F_ACC_RDONLY, access.get());
    if (f.m_file < 0)
        return Error::corrupt(what, "the HDF5 library cannot open it (damaged or truncated?)");
    f.m_image.clear(); // H5Pset_file_image copied it
    f.m_image.shrink_to_fit();
    return f;
}

Hdf5File::Hdf5File(Hdf5File &&other) noexcept
    : m_file(std::exchange(other.m_file, -1)), m_image(std::move(other.m_image)), m_what(std::move(other.m_what))
{
}

Hdf5File &Hdf5File::operator=(Hdf5File &&other) noexcept
{
    if (this != &other) {
        if (m_file >= 0)
            H5Fclose(hid_t(m_file));
        m_file = std::exchange(other.m_file, -1);
        m_image = std::move(other.m_image);
        m_what = std::move(other.m_what);
    }
    return *this;
}

Hdf5File::~Hdf5File()
{
    if (m_file >= 0)
        H5Fclose(hid_t(m_file));
}

bool Hdf5File::isGroup(const std::string &path) const { return objectType(hid_t(m_file), path) == H5I_GROUP; }
bool Hdf5File::isDataset(const std::string &path) const { return objectType(hid_t(m_file), path) == H5I_DATASET; }

Result<std::vector<std::string>> Hdf5File::members(const std::string &group) const
{
    if (!isGroup(group))
        return Error::notFound(m_what, "has no group " + group);
    Handle g(H5Gopen2(hid_t(m_file), group.c_str(), H5P_DEFAULT));
    if (!g.ok())
        return Error::corrupt(m_what, "cannot open group " + group);
    H5G_info_t info;
    if (H5Gget_info(g.get(), &info) < 0)
        return Error::corrupt(m_what, "cannot list group " + group);
    std::vector<std::string> names;
    for (hsize_t i = 0; i < info.nlinks; ++i) {
        const ssize_t length = H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
        if (length < 0)
            return Error::corrupt(m_what, "cannot list group " + group);
        std::string name(std::size_t(length) + 1, '\0');
        if (H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT) < 0)
            return Error::corrupt(m_what, "cannot list group " + group);
        name.resize(std::size_t(length));
        names.push_back(std::move(name));
    }
    return names;
}

Result<Hdf5Array> Hdf5File::readFloats(const std::string &dataset) const
{
    if (!isDataset(dataset))
        return Error::notFound(m_what, "has no dataset " + dataset);
    Handle d(H5Dopen2(hid_t(m_file), dataset.c_str(), H5P_DEFAULT));
    if (!d.ok())
        return Error::corrupt(m_what, "cannot open dataset " + dataset);
    Handle type(H5Dget_type(d.get()));
    if (!type.ok() || H5Tget_class(type.get()) != H5T_FLOAT)
        return Error::unsupported(m_what, "dataset " + dataset + " does not hold floating-point values");
    Handle space(H5Dget_space(d.get()));
    const int rank = space.ok() ? H5Sget_simple_extent_ndims(space.get()) : -1;
    if (rank < 0 || rank > 32)
        return Error::corrupt(m_what, "dataset " + dataset + " has no readable shape");
    std::vector<hsize_t> dims(std::size_t(rank), 0);
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
        return Error::corrupt(m_what, "dataset " + dataset + " has no readable shape");
    Hdf5Array out;
    std::uint64_t count = 1;
    for (hsize_t extent : dims) {
        out.shape.push_back(std::int64_t(extent));
        if (extent != 0 && count > (std::uint64_t(1) << 34) / extent)
            return Error::unsupported(m_what, "dataset " + dataset + " is larger than 16 G values");
        count *= extent;
    }
    try {
        out.values.resize(count);
    } catch (const std::bad_alloc &) {
        return Error::outOfMemory(m_what, "dataset " + dataset + " does not fit in memory");
    }
    if (count > 0 && H5Dread(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.values.data()) < 0)
        return Error::corrupt(m_what, "cannot read dataset " + dataset);
    return out;
}

Result<Hdf5Builder> Hdf5Builder::create(const std::string &what)
{
    silenceHdf5();
    Hdf5Builder b;
    b.m_what = what;
    Handle access(H5Pcreate(H5P_FILE_ACCESS));
    // The core driver without a backing store: the file lives in memory only.
    if (!access.ok() || H5Pset_fapl_core(access.get(), 1 << 20, 0) < 0)
        return Error::io(what, "the HDF5 library cannot make a file in memory");
    b.m_file = H5Fcreate(("sluice-build:" + what).c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
    if (b.m_file < 0)
        return Error::io(what, "the HDF5 library cannot make a file in memory");
    return b;
}

Hdf5Builder::Hdf5Builder(Hdf5Builder &&other) noexcept : m_file(std::exchange(other.m_file, -1)), m_what(std::move(other.m_what)) {}

Hdf5Builder &Hdf5Builder::operator=(Hdf5Builder &&other) noexcept
{
    if (this != &other) {
        if (m_file >= 0)
            H5Fclose(hid_t(m_file));
        m_file = std::exchange(other.m_file, -1);
        m_what = std::move(other.m_what);
    }
    return *this;
}

Hdf5Builder::~Hdf5Builder()
{
    if (m_file >= 0)
        H5Fclose(hid_t(m_file));
}

Status Hdf5Builder::addGroup(const std::string &path)
{
    if (linkExists(hid_t(m_file), path))
        return Status::success();
    Handle links(H5Pcreate(H5P_LINK_CREATE));
    if (!links.ok() || H5Pset_create_intermediate_group(links.get(), 1) < 0)
        return Error::io(m_what, "cannot make group " + path);
    Handle g(H5Gcreate2(hid_t(m_file), path.c_str(), links.get(), H5P_DEFAULT, H5P_DEFAULT));
    if (!g.ok())
        return Error::io(m_what, "cannot make group " + path);
    return Status::success();
}

Status Hdf5Builder::addFloats(const std::string &path, const std::vector<std::int64_t> &shape, const float *values)
{
    std::vector<hsize_t> dims(shape.begin(), shape.end());
    Handle space(dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr));
    Handle links(H5Pcreate(H5P_LINK_CREATE));
    if (!space.ok() || !links.ok() || H5Pset_create_intermediate_group(links.get(), 1) < 0)
        return Error::io(m_what, "cannot make dataset " + path);
    Handle d(H5Dcreate2(hid_t(m_file), path.c_str(), H5T_IEEE_F32LE, space.get(), links.get(), H5P_DEFAULT, H5P_DEFAULT));
    if (!d.ok() || H5Dwrite(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
        return Error::io(m_what, "cannot write dataset " + path);
    return Status::success();
}

Result<std::vector<std::byte>> Hdf5Builder::bytes()
{
    if (H5Fflush(hid_t(m_file), H5F_SCOPE_GLOBAL) < 0)
        return Error::io(m_what, "cannot flush the file");
    const ssize_t size = H5Fget_file_image(hid_t(m_file), nullptr, 0);
    if (size < 0)
        return Error::io(m_what, "cannot take the file's image");
    std::vector<std::byte> out(static_cast<std::size_t>(size));
    if (H5Fget_file_image(hid_t(m_file), out.data(), out.size()) < 0)
        return Error::io(m_what, "cannot take the file's image");
    return out;
}

} // namespace sluice
