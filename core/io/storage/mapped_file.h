#pragma once
// A read-only memory mapping of a whole file, with the access hints and page release
// that keep resident memory bounded on files larger than RAM (docs/architecture.md, decision 5).
//
// Each file is mapped once per process: open() hands out the live mapping of a file already
// mapped (same device, inode, size and modification time) instead of mapping it again, so
// that interleave's sub-pipelines, a validation pipeline and the training pipeline over the
// same files share one mapping each. Thousands of files then cost thousands of mappings, not
// their square (the kernel allows vm.max_map_count of them, 65,530 by default).
//
// Threading: a MappedFile is immutable after open(); bytes() and the hint functions may be
// called from any thread at once, and so may open().

#include "io/error.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace sluice {

class MappedFile : public std::enable_shared_from_this<MappedFile>
{
public:
    enum class Access { Normal, Sequential, Random };
    // What a hint asked of the kernel; the seam tests use to see that advice reaches the mapping.
    enum class Hint { Normal, Sequential, Random, WillNeed, Release };
    using HintObserver = std::function<void(const MappedFile &file, Hint hint, std::size_t offset, std::size_t length)>;

    static Result<std::shared_ptr<const MappedFile>> open(const std::string &path);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;

    const std::string &path() const { return m_path; }
    std::span<const std::byte> bytes() const { return {m_data, m_size}; }
    std::size_t size() const { return m_size; }

    // Tells the kernel how the whole mapping will be read (madvise).
    void adviseAccess(Access access) const;
    // Asks the kernel to start reading [offset, offset+length) ahead of use. It returns once the
    // reads are queued, not when they are done: many calls in a row keep the device's queue full.
    void willNeed(std::size_t offset, std::size_t length) const;
    // Drops [offset, offset+length) from this process's resident set. The pages stay in the
    // page cache, so reading them again costs a minor fault, not a disk read.
    void release(std::size_t offset, std::size_t length) const;
    // Whether the pages holding [offset, offset+length) are all in the page cache (mincore over
    // every one of them): reading them costs no storage access.
    bool resident(std::size_t offset, std::size_t length = 1) const;

    // The system's page size (asked once), and how many pages [offset, offset+length) touches:
    // what the storage path counts in.
    static std::size_t pageSize();
    static std::size_t pagesSpanned(std::size_t offset, std::size_t length);

    // Installs (or, with an empty function, removes) an observer called on every hint of every
    // mapping, from the thread that gives it. For tests; costs one atomic load when unset.
    static void setHintObserver(HintObserver observer);

private:
    MappedFile(std::string path, const std::byte *data, std::size_t size);
    void notify(Hint hint, std::size_t offset, std::size_t length) const;
    std::string m_path;
    const std::byte *m_data = nullptr;
    std::size_t m_size = 0;
};

// Why mmap failed, in words a user can act on: errno `err` with the process's `mappings` and the
// kernel's vm.max_map_count `limit` (ENOMEM near the limit names it and how to raise it).
std::string mappingFailureReason(int err, std::size_t mappings, std::size_t limit);

// Bytes a caller owns or shares: a view into a mapping or an owned buffer, plus what keeps
// it alive. Lets arrays refer to mapped or inflated storage through one type.
struct SharedBytes
{
    std::shared_ptr<const void> owner;
    std::span<const std::byte> bytes;
};

} // namespace sluice
