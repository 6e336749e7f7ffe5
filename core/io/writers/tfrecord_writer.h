#pragma once
// Writing TFRecord files, the inverse of tfrecord_reader.h: each record framed as
//   uint64 length | uint32 masked CRC-32C of length | data | uint32 masked CRC-32C of data
// (little-endian). With GZIP, the whole framed stream is one gzip member, as TensorFlow's
// TFRecordWriter(options="GZIP") writes it (zlib, windowBits 16 + 15, default level).
//
// The file is written under a temporary name in its destination folder (AtomicFile) and
// appears under its name only when commit() succeeds; a writer destroyed without commit()
// removes its temporary, so a half-written file never looks complete.
//
// Threading: one thread at a time per writer; writers of different files are independent.

#include "io/writers/atomic_file.h"
#include "io/error.h"
#include "io/formats/tfrecord_reader.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

class TfRecordWriter
{
public:
    // The reader's enum, so that TfRecordReader::parseCompression ("" or "GZIP") serves both.
    using Compression = TfRecordReader::Compression;

    // `gzipLevel`: zlib's 0-9, or -1 for its default (TensorFlow's choice).
    static Result<TfRecordWriter> create(const std::string &path, Compression compression = Compression::None, int gzipLevel = -1);
    TfRecordWriter(TfRecordWriter &&) noexcept;
    TfRecordWriter &operator=(TfRecordWriter &&) noexcept;
    ~TfRecordWriter();

    // Appends one record (any bytes; usually a serialized tf.train.Example).
    Status write(std::span<const std::byte> record);
    Status write(std::string_view record) { return write(std::as_bytes(std::span(record.data(), record.size()))); }

    // Ends the GZIP stream, syncs, and renames the file into place. Nothing may be written after.
    Status commit();

    const std::string &path() const { return m_file.path(); }
    Compression compression() const { return m_deflater ? Compression::Gzip : Compression::None; }
    std::uint64_t records() const { return m_records; }
    // Bytes of framed records so far (before compression).
    std::uint64_t recordBytes() const { return m_recordBytes; }
    // Bytes in the file so far (after compression; GZIP holds some back until commit()).
    std::uint64_t fileBytes() const { return m_file.size(); }

private:
    explicit TfRecordWriter(AtomicFile file);
    // Hands framed bytes to the file, through zlib when compressing.
    Status put(std::span<const std::byte> bytes);
    Status deflateInto(int flush);

    AtomicFile m_file;
    struct Deflater; // zlib's stream, on the heap: zlib keeps a pointer to it
    std::unique_ptr<Deflater> m_deflater;
    std::uint64_t m_records = 0;
    std::uint64_t m_recordBytes = 0;
    bool m_failed = false; // a write failed: the file must never be committed
    bool m_committed = false;
};

} // namespace sluice
