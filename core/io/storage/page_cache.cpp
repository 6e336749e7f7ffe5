#include "io/storage/page_cache.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace sluice {
namespace {

// Fraction of the file's pages in the page cache, through a private mapping of our own (mincore
// reports the page cache for file mappings of files the caller may write or owns).
double cachedFraction(int fd, std::size_t size)
{
    if (size == 0)
        return 0;
    void *p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return 0;
    const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE)), pages = (size + page - 1) / page;
    std::vector<unsigned char> vec(pages);
    std::size_t cached = 0;
    if (::mincore(p, size, vec.data()) == 0)
        for (unsigned char v : vec)
            cached += v & 1;
    ::munmap(p, size);
    return double(cached) / double(pages);
}

} // namespace

Result<double> evictFromPageCache(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return Error::io(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    ::fstat(fd, &st);
    ::fdatasync(fd); // dirty pages cannot be dropped; a read-only descriptor may still flush them
    const int err = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    const double left = cachedFraction(fd, std::size_t(st.st_size));
    ::close(fd);
    if (err != 0)
        return Error::io(path, std::string("cannot drop from the page cache: ") + std::strerror(err));
    return left;
}

} // namespace sluice
