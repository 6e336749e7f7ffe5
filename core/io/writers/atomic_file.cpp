#include "io/writers/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sluice {
namespace {

constexpr std::size_t kBufferSize = 4u << 20;

std::string errnoText(const char *action) { return std::string(action) + ": " + std::strerror(errno); }

} // namespace

Result<AtomicFile> AtomicFile::create(const std::string &path)
{
    AtomicFile f;
    f.m_path = path;
    f.m_tempPath = path + ".partial-XXXXXX";
    f.m_fd = ::mkstemp(f.m_tempPath.data());
    if (f.m_fd < 0)
        return Error::io(path, errnoText("cannot create"));
    ::fchmod(f.m_fd, 0644); // mkstemp makes 0600; a data file should be readable like any other
    f.m_buffer.reserve(kBufferSize);
    return f;
}

AtomicFile::AtomicFile(AtomicFile &&other) noexcept { *this = std::move(other); }

AtomicFile &AtomicFile::operator=(AtomicFile &&other) noexcept
{
    if (this != &other) {
        discard();
        m_path = std::move(other.m_path);
        m_tempPath = std::move(other.m_tempPath);
        m_fd = std::exchange(other.m_fd, -1);
        m_size = other.m_size;
        m_buffer = std::move(other.m_buffer);
        m_failed = other.m_failed;
    }
    return *this;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard()
{
    if (m_fd >= 0) {
        ::close(m_fd);
        ::unlink(m_tempPath.c_str());
        m_fd = -1;
    }
}

Status AtomicFile::flush()
{
    const std::byte *p = m_buffer.data();
    std::size_t left = m_buffer.size();
    while (left > 0) {
        const ssize_t n = ::write(m_fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            m_failed = true;
            return Error::io(m_path, errnoText("write failed"));
        }
        p += n;
        left -= std::size_t(n);
    }
    m_buffer.clear();
    return Status::success();
}

Status AtomicFile::write(std::span<const std::byte> bytes)
{
    if (m_fd < 0)
        return Error::invalid(m_path, "write after commit");
    if (m_failed)
        return Error::io(m_path, "an earlier write failed");
    while (!bytes.empty()) {
        const std::size_t n = std::min(bytes.size(), kBufferSize - m_buffer.size());
        m_buffer.insert(m_buffer.end(), bytes.begin(), bytes.begin() + std::ptrdiff_t(n));
        bytes = bytes.subspan(n);
        m_size += n;
        if (m_buffer.size() == kBufferSize)
            if (auto s = flush(); !s)
                return s;
    }
    return Status::success();
}

Status AtomicFile::writeAt(std::uint64_t offset, std::span<const std::byte> bytes)
{
    if (m_fd < 0)
        return Error::invalid(m_path, "write after commit");
    if (auto s = flush(); !s)
        return s;
    while (!bytes.empty()) {
        const ssize_t n = ::pwrite(m_fd, bytes.data(), bytes.size(), off_t(offset));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            m_failed = true;
            return Error::io(m_path, errnoText("write failed"));
        }
        bytes = bytes.subspan(std::size_t(n));
        offset += std::uint64_t(n);
    }
    return Status::success();
}

Status AtomicFile::sync()
{
    if (m_fd < 0)
        return Error::invalid(m_path, "sync after commit");
    if (m_failed)
        return Error::io(m_path, "an earlier write failed");
    if (auto s = flush(); !s)
        return s;
    if (::fsync(m_fd) != 0) {
        m_failed = true;
        return Error::io(m_path, errnoText("sync failed"));
    }
    return Status::success();
}

Status AtomicFile::commit()
{
    if (m_fd < 0)
        return Error::invalid(m_path, "committed twice");
    if (auto s = sync(); !s)
        return s;
    if (::close(m_fd) != 0) {
        m_fd = -1;
        ::unlink(m_tempPath.c_str());
        return Error::io(m_path, errnoText("close failed"));
    }
    m_fd = -1;
    if (::rename(m_tempPath.c_str(), m_path.c_str()) != 0) {
        const Error e = Error::io(m_path, errnoText("cannot rename into place"));
        ::unlink(m_tempPath.c_str());
        return e;
    }
    // The rename itself survives a crash only once the folder's entry is on disk.
    const std::string folder = m_path.find('/') == std::string::npos ? "." : m_path.substr(0, m_path.rfind('/') + 1);
    if (const int dirFd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dirFd >= 0) {
        ::fsync(dirFd);
        ::close(dirFd);
    }
    return Status::success();
}

} // namespace sluice
