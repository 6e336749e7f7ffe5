#pragma once
// Reading TFRecord files: a sequence of records, each framed as
//   uint64 length | uint32 masked CRC-32C of length | data | uint32 masked CRC-32C of data
// (little-endian), optionally inside a GZIP stream. Uncompressed files are read zero-copy
// from a mapping; GZIP files are inflated as a stream through a bounded buffer.
//
// Threading: one reader per thread; the span next() returns is valid until the next call.

#include "io/error.h"
#include "io/storage/mapped_file.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sluice {

class TfRecordReader
{
public:
    enum class Compression { None, Gzip };

    // compression as tf.data spells it: "" or "GZIP"; anything else is an error.
    static Result<Compression> parseCompression(const std::string &name);
    // Guesses from the first bytes (GZIP magic or a valid length CRC).
    static std::optional<Compression> sniff(const std::string &path);

    static Result<TfRecordReader> open(const std::string &path, Compression compression, bool verifyCrc = true);
    TfRecordReader(TfRecordReader &&) noexcept;
    TfRecordReader &operator=(TfRecordReader &&) noexcept;
    ~TfRecordReader();

    // The next record's bytes; nothing at the end of the file; an error naming the record
    // and the reason (CRC mismatch, truncation) on damage.
    Result<std::optional<std::span<const std::byte>>> next();

    std::uint64_t recordsRead() const { return m_records; }
    const std::string &path() const { return m_path; }
    std::uint64_t fileSize() const { return m_file->size(); }

private:
    TfRecordReader() = default;
    // Makes at least `n` bytes available at m_pending (GZIP path); false at end of stream.
    Result<bool> fill(std::size_t n);

    std::string m_path;
    bool m_verify = true;
    std::uint64_t m_records = 0;
    std::shared_ptr<const MappedFile> m_file;
    std::uint64_t m_offset = 0; // uncompressed: position in the mapping; GZIP: bytes handed to zlib
    std::size_t m_released = 0; // pages of the mapping below this were released
    // GZIP state
    struct Inflater;
    std::unique_ptr<Inflater> m_inflater;
    std::vector<std::byte> m_buffer;
    std::size_t m_begin = 0, m_end = 0; // unread inflated bytes are m_buffer[m_begin, m_end)
};

} // namespace sluice
