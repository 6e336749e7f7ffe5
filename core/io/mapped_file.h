#pragma once
// A read-only memory mapping of a whole file, with the access hints and page release
// that keep resident memory bounded on files larger than RAM (blueprint decision 5).
//
// Threading: a MappedFile is immutable after open(); bytes() and the hint functions may be
// called from any thread at once.

#include "io/error.h"

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace sluice {

class MappedFile
{
public:
    enum class Access { Normal, Sequential, Random };

    static Result<std::shared_ptr<const MappedFile>> open(const std::string &path);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;

    const std::string &path() const { return m_path; }
    std::span<const std::byte> bytes() const { return {m_data, m_size}; }
    std::size_t size() const { return m_size; }

    // Tells the kernel how the whole mapping will be read (madvise).
    void adviseAccess(Access access) const;
    // Asks the kernel to start reading [offset, offset+length) ahead of use.
    void willNeed(std::size_t offset, std::size_t length) const;
    // Drops [offset, offset+length) from this process's resident set. The pages stay in the
    // page cache, so reading them again costs a minor fault, not a disk read.
    void release(std::size_t offset, std::size_t length) const;

private:
    MappedFile(std::string path, const std::byte *data, std::size_t size);
    std::string m_path;
    const std::byte *m_data = nullptr;
    std::size_t m_size = 0;
};

// Bytes a caller owns or shares: a view into a mapping or an owned buffer, plus what keeps
// it alive. Lets arrays refer to mapped or inflated storage through one type.
struct SharedBytes
{
    std::shared_ptr<const void> owner;
    std::span<const std::byte> bytes;
};

} // namespace sluice
