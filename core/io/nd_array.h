#pragma once
// An N-d array read from a .npy (file or .npz member): its header plus its bytes, which are
// either a zero-copy view into a file mapping, an inflated buffer, or a converted copy.
//
// Threading: an NdArray is immutable; copies share the same bytes and may be used from
// any thread.

#include "io/storage/mapped_file.h"
#include "io/formats/npy_header.h"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace sluice {

// Where an array's bytes live, so that callers (and `sluice inspect`) can tell whether
// they read the file itself or a copy.
enum class Storage {
    Mapped,    // zero-copy view into the file mapping
    Inflated,  // decompressed from a deflated .npz member into memory
    Converted, // copied to native byte order / C order / alignment in memory
};
const char *storageName(Storage s);

template <typename T> class TypedView;

class NdArray
{
public:
    // Parses the .npy held in `npy` (header and data). `name` is used in messages.
    static Result<NdArray> parse(SharedBytes npy, std::string name, Storage storage);

    const std::string &name() const { return m_name; }
    const NpyHeader &header() const { return m_header; }
    TypeDescr descr() const { return m_header.descr; }
    DType dtype() const { return m_header.descr.type; }
    const std::vector<std::uint64_t> &shape() const { return m_header.shape; }
    std::size_t ndim() const { return m_header.shape.size(); }
    std::uint64_t count() const { return m_header.count; }
    std::uint64_t nbytes() const { return m_header.nbytes; }
    Storage storage() const { return m_storage; }
    bool isZeroCopy() const { return m_storage == Storage::Mapped; }

    // Rows are the slices along the first dimension (a 0-d array is one row).
    std::uint64_t rowCount() const;
    std::uint64_t rowBytes() const;
    std::vector<std::uint64_t> rowShape() const;

    // True when the bytes are in C order (rows are contiguous); false for a Fortran-order
    // array with more than one dimension longer than 1.
    bool isRowContiguous() const;
    // True when typed views can point straight at the bytes: native byte order, rows
    // contiguous, elements aligned. Otherwise toNative() makes a converted copy.
    bool isViewable() const;
    // Why the array is not viewable ("big-endian", "Fortran order", "unaligned in the .npz"),
    // empty when it is.
    std::string conversionReason() const;

    // The element bytes exactly as stored (file byte order and layout).
    std::span<const std::byte> data() const { return m_data.bytes; }
    // Bytes of rows [begin, end). Requires isRowContiguous(); works for any byte order.
    std::span<const std::byte> rowRangeBytes(std::uint64_t begin, std::uint64_t end) const;

    // This array if it is viewable, else a copy in native byte order and C order.
    NdArray toNative() const;

    // A typed view; fails (naming the reason) if T is not the dtype or the array is not viewable.
    template <typename T> Result<TypedView<T>> view() const;

    // The mapping the bytes live in, for access hints and page release; null unless Mapped.
    const MappedFile *mapping() const;

private:
    NdArray() = default;
    std::string m_name;
    NpyHeader m_header;
    SharedBytes m_data; // element bytes only
    Storage m_storage = Storage::Mapped;
};

// Element access over C-ordered, native, aligned data. Cheap to copy; does not own the bytes
// (keep the NdArray alive).
template <typename T>
class TypedView
{
public:
    TypedView(const T *data, std::vector<std::uint64_t> shape) : m_data(data), m_shape(std::move(shape))
    {
        m_rowElements = 1;
        for (std::size_t i = 1; i < m_shape.size(); ++i)
            m_rowElements *= m_shape[i];
    }
    const std::vector<std::uint64_t> &shape() const { return m_shape; }
    std::uint64_t size() const { return m_shape.empty() ? 1 : m_shape[0] * m_rowElements; }
    const T *data() const { return m_data; }

    // Element by flat C-order index.
    const T &flat(std::uint64_t i) const { return m_data[i]; }
    // Element by N-d index (as many indices as dimensions).
    const T &at(std::initializer_list<std::uint64_t> index) const
    {
        std::uint64_t offset = 0;
        std::size_t d = 0;
        for (std::uint64_t i : index)
            offset = offset * m_shape[d++] + i;
        return m_data[offset];
    }
    std::span<const T> row(std::uint64_t i) const { return {m_data + i * m_rowElements, std::size_t(m_rowElements)}; }
    std::span<const T> rows(std::uint64_t begin, std::uint64_t end) const
    {
        return {m_data + begin * m_rowElements, std::size_t((end - begin) * m_rowElements)};
    }

private:
    const T *m_data;
    std::vector<std::uint64_t> m_shape;
    std::uint64_t m_rowElements = 1;
};

template <typename T>
Result<TypedView<T>> NdArray::view() const
{
    if (DTypeOf<T>::value != dtype())
        return Error::invalid(m_name, "typed view as " + std::string(dtypeName(DTypeOf<T>::value)) + " of a " +
                                          std::string(dtypeName(dtype())) + " array");
    if (!isViewable())
        return Error::invalid(m_name, "cannot view in place (" + conversionReason() + "); call toNative() first");
    return TypedView<T>(reinterpret_cast<const T *>(m_data.bytes.data()), shape());
}

} // namespace sluice
