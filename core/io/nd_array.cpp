#include "io/nd_array.h"

#include <cstring>

namespace sluice {

const char *storageName(Storage s)
{
    switch (s) {
    case Storage::Mapped: return "mapped";
    case Storage::Inflated: return "inflated";
    case Storage::Converted: return "converted";
    }
    return "?";
}

Result<NdArray> NdArray::parse(SharedBytes npy, std::string name, Storage storage)
{
    auto header = parseNpyHeader(npy.bytes, name);
    if (!header)
        return header.error();
    NdArray a;
    a.m_name = std::move(name);
    a.m_header = std::move(header).value();
    a.m_data.owner = std::move(npy.owner);
    a.m_data.bytes = npy.bytes.subspan(a.m_header.dataOffset, a.m_header.nbytes);
    a.m_storage = storage;
    return a;
}

std::uint64_t NdArray::rowCount() const { return shape().empty() ? 1 : shape()[0]; }

std::uint64_t NdArray::rowBytes() const
{
    std::uint64_t bytes = itemSize(dtype());
    for (std::size_t i = 1; i < shape().size(); ++i)
        bytes *= shape()[i];
    return bytes;
}

std::vector<std::uint64_t> NdArray::rowShape() const
{
    return shape().empty() ? std::vector<std::uint64_t>{} : std::vector<std::uint64_t>(shape().begin() + 1, shape().end());
}

bool NdArray::isRowContiguous() const
{
    if (!m_header.fortranOrder)
        return true;
    // Fortran and C layouts coincide when at most one dimension is longer than 1.
    int longDims = 0;
    for (std::uint64_t d : shape())
        longDims += d > 1;
    return longDims <= 1;
}

std::string NdArray::conversionReason() const
{
    std::string reason;
    auto add = [&](const char *r) { reason += (reason.empty() ? "" : ", ") + std::string(r); };
    if (!descr().isNativeOrder())
        add(descr().order == ByteOrder::Big ? "big-endian" : "little-endian");
    if (!isRowContiguous())
        add("Fortran order");
    if (reinterpret_cast<std::uintptr_t>(m_data.bytes.data()) % itemSize(dtype()) != 0)
        add("unaligned");
    return reason;
}

bool NdArray::isViewable() const { return conversionReason().empty(); }

std::span<const std::byte> NdArray::rowRangeBytes(std::uint64_t begin, std::uint64_t end) const
{
    const std::uint64_t rb = rowBytes();
    return m_data.bytes.subspan(begin * rb, (end - begin) * rb);
}

const MappedFile *NdArray::mapping() const
{
    return m_storage == Storage::Mapped ? static_cast<const MappedFile *>(m_data.owner.get()) : nullptr;
}

namespace {

// Copies Fortran-ordered elements into C order. Walks the output in C order with an
// odometer; the innermost (last) dimension is a strided gather from the source.
void fortranToC(const std::byte *src, std::byte *dst, const std::vector<std::uint64_t> &shape, std::size_t item)
{
    const std::size_t n = shape.size();
    std::vector<std::uint64_t> fstride(n, 1); // in elements
    for (std::size_t k = 1; k < n; ++k)
        fstride[k] = fstride[k - 1] * shape[k - 1];
    std::vector<std::uint64_t> index(n, 0);
    const std::uint64_t inner = shape[n - 1];
    const std::uint64_t innerStride = fstride[n - 1] * item;
    for (;;) {
        std::uint64_t base = 0;
        for (std::size_t k = 0; k + 1 < n; ++k)
            base += index[k] * fstride[k];
        const std::byte *s = src + base * item;
        for (std::uint64_t j = 0; j < inner; ++j, s += innerStride, dst += item)
            std::memcpy(dst, s, item);
        // advance the odometer over all dimensions but the last
        std::size_t k = n - 1;
        while (k > 0) {
            --k;
            if (++index[k] < shape[k])
                break;
            index[k] = 0;
            if (k == 0)
                return;
        }
        if (n == 1)
            return;
    }
}

} // namespace

NdArray NdArray::toNative() const
{
    if (isViewable())
        return *this;
    const std::size_t item = itemSize(dtype());
    auto buffer = std::make_shared<std::vector<std::byte>>(m_header.nbytes);
    if (m_header.nbytes > 0) {
        if (isRowContiguous())
            std::memcpy(buffer->data(), m_data.bytes.data(), m_header.nbytes);
        else
            fortranToC(m_data.bytes.data(), buffer->data(), shape(), item);
        if (!descr().isNativeOrder())
            byteSwapInPlace(buffer->data(), m_header.count, item);
    }
    NdArray out = *this;
    out.m_header.descr.order = nativeByteOrder();
    out.m_header.fortranOrder = false;
    out.m_data.bytes = std::span<const std::byte>(buffer->data(), buffer->size());
    out.m_data.owner = std::move(buffer);
    out.m_storage = Storage::Converted;
    return out;
}

} // namespace sluice
