#include "io/writers/tfrecord_writer.h"

#include "io/crc32c.h"

#include <zlib.h>

#include <algorithm>

namespace sluice {
namespace {

constexpr std::size_t kDeflateChunk = 256u << 10; // TensorFlow's ZlibOutputBuffer uses the same
// The reader takes a longer record for damage (tfrecord_reader.cpp); writing one would make a
// file that no reader accepts.
constexpr std::uint64_t kMaxRecordBytes = std::uint64_t(1) << 31;

void putLittleEndian(std::byte *p, std::uint64_t v, int n)
{
    for (int i = 0; i < n; ++i)
        p[i] = std::byte((v >> (8 * i)) & 0xff);
}

} // namespace

struct TfRecordWriter::Deflater
{
    z_stream zs{};
    std::vector<std::byte> out = std::vector<std::byte>(kDeflateChunk);
    ~Deflater() { deflateEnd(&zs); }
};

TfRecordWriter::TfRecordWriter(AtomicFile file) : m_file(std::move(file)) {}
TfRecordWriter::TfRecordWriter(TfRecordWriter &&) noexcept = default;
TfRecordWriter &TfRecordWriter::operator=(TfRecordWriter &&) noexcept = default;
TfRecordWriter::~TfRecordWriter() = default; // AtomicFile removes the temporary unless committed

Result<TfRecordWriter> TfRecordWriter::create(const std::string &path, Compression compression, int gzipLevel)
{
    if (gzipLevel < -1 || gzipLevel > 9)
        return Error::invalid(path, "GZIP level " + std::to_string(gzipLevel) + " is not -1 (default) or 0 to 9");
    auto file = AtomicFile::create(path);
    if (!file)
        return file.error();
    TfRecordWriter w(std::move(file).value());
    if (compression == Compression::Gzip) {
        w.m_deflater = std::make_unique<Deflater>();
        // 16 + 15: a gzip wrapper around a 32 KiB-window deflate stream, TensorFlow's
        // ZlibCompressionOptions::GZIP(); memLevel 8 is zlib's default.
        if (deflateInit2(&w.m_deflater->zs, gzipLevel, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return Error::outOfMemory(path, "zlib could not start compressing");
    }
    return w;
}

Status TfRecordWriter::deflateInto(int flush)
{
    z_stream &zs = m_deflater->zs;
    std::vector<std::byte> &out = m_deflater->out;
    for (;;) {
        zs.next_out = reinterpret_cast<Bytef *>(out.data());
        zs.avail_out = uInt(out.size());
        const int rc = deflate(&zs, flush);
        if (rc == Z_STREAM_ERROR)
            return Error::io(path(), "zlib failed while compressing");
        const std::size_t produced = out.size() - zs.avail_out;
        if (produced > 0)
            if (auto s = m_file.write(std::span(out.data(), produced)); !s)
                return s;
        // zlib is done with the input once it leaves output room to spare; Z_FINISH is done
        // only at the end of the stream.
        if (flush == Z_FINISH ? rc == Z_STREAM_END : zs.avail_out != 0)
            return Status::success();
    }
}

Status TfRecordWriter::put(std::span<const std::byte> bytes)
{
    if (!m_deflater)
        return m_file.write(bytes);
    z_stream &zs = m_deflater->zs;
    while (!bytes.empty()) {
        const std::size_t n = std::min<std::size_t>(bytes.size(), 1u << 30); // avail_in is 32 bits
        zs.next_in = const_cast<Bytef *>(reinterpret_cast<const Bytef *>(bytes.data()));
        zs.avail_in = uInt(n);
        if (auto s = deflateInto(Z_NO_FLUSH); !s)
            return s;
        bytes = bytes.subspan(n);
    }
    return Status::success();
}

Status TfRecordWriter::write(std::span<const std::byte> record)
{
    if (m_committed)
        return Error::invalid(path(), "record written after commit()");
    if (m_failed)
        return Error::io(path(), "an earlier write failed");
    if (record.size() > kMaxRecordBytes)
        return Error::invalid(path(), "record " + std::to_string(m_records) + " is " + std::to_string(record.size()) +
                                          " bytes; TFRecord readers refuse records over 2 GiB");
    std::byte header[12];
    putLittleEndian(header, record.size(), 8);
    putLittleEndian(header + 8, maskCrc32c(crc32c({header, 8})), 4);
    std::byte footer[4];
    putLittleEndian(footer, maskCrc32c(crc32c(record)), 4);
    for (std::span<const std::byte> part : {std::span<const std::byte>(header), record, std::span<const std::byte>(footer)}) {
        if (auto s = put(part); !s) {
            m_failed = true;
            return s;
        }
    }
    ++m_records;
    m_recordBytes += sizeof header + record.size() + sizeof footer;
    return Status::success();
}

Status TfRecordWriter::commit()
{
    if (m_committed)
        return Error::invalid(path(), "committed twice");
    if (m_failed)
        return Error::io(path(), "an earlier write failed; the file is incomplete");
    if (m_deflater) {
        m_deflater->zs.next_in = nullptr;
        m_deflater->zs.avail_in = 0;
        if (auto s = deflateInto(Z_FINISH); !s) {
            m_failed = true;
            return s;
        }
    }
    m_committed = true;
    return m_file.commit();
}

} // namespace sluice
