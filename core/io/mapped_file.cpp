#include "io/mapped_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sluice {
namespace {

std::size_t pageSize()
{
    static const std::size_t size = std::size_t(sysconf(_SC_PAGESIZE));
    return size;
}

// Widens [offset, offset+length) to whole pages inside the mapping, as madvise needs.
bool pageRange(std::size_t mappingSize, std::size_t offset, std::size_t length, std::size_t &start, std::size_t &bytes)
{
    if (offset >= mappingSize || length == 0)
        return false;
    length = std::min(length, mappingSize - offset);
    start = offset / pageSize() * pageSize();
    bytes = offset + length - start;
    return true;
}

} // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (err == ENOENT)
            return Error::notFound(path, "no such file");
        return Error::io(path, std::string("cannot open: ") + std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return Error::io(path, std::string("cannot stat: ") + std::strerror(err));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        return Error::invalid(path, "is a directory, not a file");
    }
    const std::size_t size = std::size_t(st.st_size);
    const std::byte *data = nullptr;
    if (size > 0) {
        void *p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            return Error::io(path, std::string("cannot map: ") + std::strerror(err));
        }
        data = static_cast<const std::byte *>(p);
    }
    ::close(fd); // the mapping keeps the file open
    return std::shared_ptr<const MappedFile>(new MappedFile(path, data, size));
}

MappedFile::MappedFile(std::string path, const std::byte *data, std::size_t size)
    : m_path(std::move(path)), m_data(data), m_size(size)
{
}

MappedFile::~MappedFile()
{
    if (m_data)
        ::munmap(const_cast<std::byte *>(m_data), m_size);
}

void MappedFile::adviseAccess(Access access) const
{
    if (!m_data)
        return;
    const int advice = access == Access::Sequential ? MADV_SEQUENTIAL : access == Access::Random ? MADV_RANDOM : MADV_NORMAL;
    ::madvise(const_cast<std::byte *>(m_data), m_size, advice); // a hint: failure changes nothing but speed
}

void MappedFile::willNeed(std::size_t offset, std::size_t length) const
{
    std::size_t start = 0, bytes = 0;
    if (m_data && pageRange(m_size, offset, length, start, bytes))
        ::madvise(const_cast<std::byte *>(m_data) + start, bytes, MADV_WILLNEED);
}

void MappedFile::release(std::size_t offset, std::size_t length) const
{
    std::size_t start = 0, bytes = 0;
    if (m_data && pageRange(m_size, offset, length, start, bytes))
        ::madvise(const_cast<std::byte *>(m_data) + start, bytes, MADV_DONTNEED);
}

} // namespace sluice
