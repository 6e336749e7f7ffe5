#pragma once
// A file written under a temporary name in the destination folder and renamed into place by
// commit(), so that readers never see half a file and a failed write never clobbers the old
// one (docs/architecture.md, decision 10). Not committed → the temporary is removed.
//
// Threading: one thread at a time.

#include "io/error.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sluice {

class AtomicFile
{
public:
    static Result<AtomicFile> create(const std::string &path);
    AtomicFile(AtomicFile &&other) noexcept;
    AtomicFile &operator=(AtomicFile &&other) noexcept;
    AtomicFile(const AtomicFile &) = delete;
    AtomicFile &operator=(const AtomicFile &) = delete;
    ~AtomicFile();

    const std::string &path() const { return m_path; }
    std::uint64_t size() const { return m_size; }

    // Appends (buffered).
    Status write(std::span<const std::byte> bytes);
    Status write(const std::string &text) { return write(std::as_bytes(std::span(text.data(), text.size()))); }
    // Overwrites bytes already written at `offset` (flushes the buffer first).
    Status writeAt(std::uint64_t offset, std::span<const std::byte> bytes);
    // Flushes and syncs the data to disk (commit() does it too).
    Status sync();
    // Flushes, syncs and renames over the destination, then syncs the folder.
    Status commit();

private:
    AtomicFile() = default;
    Status flush();
    void discard();

    std::string m_path;
    std::string m_tempPath;
    int m_fd = -1;
    std::uint64_t m_size = 0;
    std::vector<std::byte> m_buffer;
    bool m_failed = false; // a write failed: the temporary is incomplete and must never be committed
};

} // namespace sluice
