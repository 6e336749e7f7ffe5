#include "io/storage/mapped_file.h"
#include "util/mutex.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace sluice {

std::size_t MappedFile::pageSize()
{
    static const std::size_t size = std::size_t(sysconf(_SC_PAGESIZE));
    return size;
}

std::size_t MappedFile::pagesSpanned(std::size_t offset, std::size_t length)
{
    const std::size_t page = pageSize();
    return length == 0 ? 0 : (offset + length - 1) / page - offset / page + 1;
}

namespace {

// Widens [offset, offset+length) to whole pages inside the mapping, as madvise needs.
bool pageRange(std::size_t mappingSize, std::size_t offset, std::size_t length, std::size_t &start, std::size_t &bytes)
{
    if (offset >= mappingSize || length == 0)
        return false;
    length = std::min(length, mappingSize - offset);
    start = offset / MappedFile::pageSize() * MappedFile::pageSize();
    bytes = offset + length - start;
    return true;
}

// The live mappings of this process, by file identity. A rewritten file (other size or
// modification time) gets a new mapping; the old one lives on while something still uses it.
struct MappingKey
{
    std::string path;
    dev_t device;
    ino_t inode;
    off_t size;
    std::int64_t mtimeNs;
    auto tie() const { return std::tie(path, device, inode, size, mtimeNs); }
    bool operator<(const MappingKey &o) const { return tie() < o.tie(); }
};

struct MappingCache
{
    Mutex mutex;
    std::map<MappingKey, std::weak_ptr<const MappedFile>> live GUARDED_BY(mutex);
    std::size_t purgeAt GUARDED_BY(mutex) = 1024;
};

MappingCache &mappingCache()
{
    static MappingCache cache; // never destroyed before the mappings: they hold no reference to it
    return cache;
}

std::atomic<MappedFile::HintObserver *> g_hintObserver{nullptr};
Mutex g_hintObserverMutex;

std::size_t countLines(const char *path)
{
    std::ifstream in(path);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
        ++n;
    return n;
}

} // namespace

std::string mappingFailureReason(int err, std::size_t mappings, std::size_t limit)
{
    if (err != ENOMEM)
        return std::string("cannot map: ") + std::strerror(err);
    if (limit > 0 && mappings + 64 >= limit)
        return "cannot map: the process already has " + std::to_string(mappings) +
               " memory mappings, the kernel's limit (vm.max_map_count) is " + std::to_string(limit) +
               "; read fewer files at once or raise the limit (sysctl -w vm.max_map_count=" + std::to_string(limit * 4) + ")";
    return "cannot map: out of address space (" + std::string(std::strerror(err)) + ", " + std::to_string(mappings) +
           " mappings); check the process's virtual memory limit (ulimit -v)";
}

namespace {

std::string mapFailureReason(int err)
{
    std::size_t limit = 0;
    std::ifstream("/proc/sys/vm/max_map_count") >> limit;
    return mappingFailureReason(err, countLines("/proc/self/maps"), limit);
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
    const MappingKey key{path, st.st_dev, st.st_ino, st.st_size, std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
    MappingCache &cache = mappingCache();
    MutexLock lock(cache.mutex);
    if (auto it = cache.live.find(key); it != cache.live.end())
        if (auto existing = it->second.lock()) {
            ::close(fd);
            return existing;
        }
    const std::size_t size = std::size_t(st.st_size);
    const std::byte *data = nullptr;
    if (size > 0) {
        void *p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            return Error::io(path, mapFailureReason(err));
        }
        data = static_cast<const std::byte *>(p);
    }
    ::close(fd); // the mapping keeps the file open
    std::shared_ptr<const MappedFile> file(new MappedFile(path, data, size));
    cache.live[key] = file;
    if (cache.live.size() >= cache.purgeAt) { // forget files no longer mapped, now and then
        std::erase_if(cache.live, [](const auto &entry) { return entry.second.expired(); });
        cache.purgeAt = std::max<std::size_t>(1024, 2 * cache.live.size());
    }
    return file;
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

void MappedFile::setHintObserver(HintObserver observer)
{
    MutexLock lock(g_hintObserverMutex);
    // Observers are few and set by tests: the old one is kept alive (leaked) so that a hint in
    // flight on another thread never calls a destroyed function.
    g_hintObserver.store(observer ? new HintObserver(std::move(observer)) : nullptr);
}

void MappedFile::notify(Hint hint, std::size_t offset, std::size_t length) const
{
    if (HintObserver *observer = g_hintObserver.load(std::memory_order_acquire))
        (*observer)(*this, hint, offset, length);
}

void MappedFile::adviseAccess(Access access) const
{
    if (!m_data)
        return;
    const int advice = access == Access::Sequential ? MADV_SEQUENTIAL : access == Access::Random ? MADV_RANDOM : MADV_NORMAL;
    ::madvise(const_cast<std::byte *>(m_data), m_size, advice); // a hint: failure changes nothing but speed
    notify(access == Access::Sequential ? Hint::Sequential : access == Access::Random ? Hint::Random : Hint::Normal, 0, m_size);
}

void MappedFile::willNeed(std::size_t offset, std::size_t length) const
{
    std::size_t start = 0, bytes = 0;
    if (m_data && pageRange(m_size, offset, length, start, bytes)) {
        ::madvise(const_cast<std::byte *>(m_data) + start, bytes, MADV_WILLNEED);
        notify(Hint::WillNeed, offset, length);
    }
}

void MappedFile::release(std::size_t offset, std::size_t length) const
{
    std::size_t start = 0, bytes = 0;
    if (m_data && pageRange(m_size, offset, length, start, bytes)) {
        ::madvise(const_cast<std::byte *>(m_data) + start, bytes, MADV_DONTNEED);
        notify(Hint::Release, offset, length);
    }
}

bool MappedFile::resident(std::size_t offset, std::size_t length) const
{
    std::size_t start = 0, bytes = 0;
    if (!m_data || !pageRange(m_size, offset, std::max<std::size_t>(length, 1), start, bytes))
        return false;
    // Every page, a window of them per mincore call (a row is a page or two; a long range many).
    unsigned char vec[256];
    const std::size_t page = pageSize(), pages = (bytes + page - 1) / page;
    for (std::size_t first = 0; first < pages; first += sizeof vec) {
        const std::size_t count = std::min(sizeof vec, pages - first);
        const std::size_t from = start + first * page, length = std::min(count * page, start + bytes - from);
        if (::mincore(const_cast<std::byte *>(m_data) + from, length, vec) != 0)
            return false;
        for (std::size_t i = 0; i < count; ++i)
            if (!(vec[i] & 1))
                return false;
    }
    return true;
}

} // namespace sluice
