#pragma once
// A tensor as the pipeline passes it between stages: a dtype, a shape and bytes that are
// either a zero-copy view (into a file mapping) or owned by the tensor. Strings (TFRecord
// bytes features, CSV text columns) are held as a list of byte strings.
//
// Threading: a Tensor is immutable once handed to the next stage; copies share the bytes.
// mutableData() is only for the stage that allocated it, before handing it on.

#include "io/dtype.h"
#include "io/storage/mapped_file.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sluice::pipeline {

using Shape = std::vector<std::int64_t>;

std::uint64_t elementCount(const Shape &shape);
std::string shapeText(const Shape &shape); // "(256,)", "(2, 3)", "()"

// A feature's element type: one of numpy's numeric dtypes, or a byte string.
struct ValueType
{
    DType dtype = DType::Float32;
    bool isString = false;

    static ValueType string() { return {DType::UInt8, true}; }
    std::string name() const; // "float32", "int64", "string"
    bool operator==(const ValueType &) const = default;
};
// "float32", "int64", "string", … (numpy's names); nothing for unknown names.
std::optional<ValueType> valueTypeFromName(std::string_view name);

class Tensor
{
public:
    Tensor() = default;
    // Uninitialised owned storage of the given type and shape (small tensors live inline).
    static Tensor allocate(DType dtype, Shape shape);
    // A view of bytes someone else owns (a mapping); `bytes.owner` keeps them alive.
    static Tensor view(DType dtype, Shape shape, SharedBytes bytes);
    static Tensor strings(Shape shape, std::vector<std::string> values);
    template <typename T> static Tensor scalar(T value)
    {
        Tensor t = allocate(DTypeOf<T>::value, {});
        *t.mutableAs<T>() = value;
        return t;
    }

    ValueType type() const { return {m_dtype, m_isString}; }
    DType dtype() const { return m_dtype; }
    bool isString() const { return m_isString; }
    const Shape &shape() const { return m_shape; }
    std::uint64_t count() const { return elementCount(m_shape); }
    std::uint64_t nbytes() const; // strings: the sum of their lengths

    const std::byte *data() const { return m_data; }
    std::byte *mutableData(); // owned tensors only
    template <typename T> const T *as() const { return reinterpret_cast<const T *>(m_data); }
    template <typename T> T *mutableAs() { return reinterpret_cast<T *>(mutableData()); }
    std::span<const std::byte> bytes() const { return {m_data, std::size_t(nbytes())}; }
    const std::vector<std::string> &stringValues() const;

    // True when no other tensor shares these bytes and they are the tensor's own (not a view
    // into a mapping or another tensor): a consumer holding it may write to them.
    bool exclusivelyOwned() const { return !m_isString && !m_view && (m_inline || m_owner.use_count() == 1); }
    // The same bytes under another shape with the same element count.
    Tensor reshaped(Shape shape) const;
    // Value i (flat index) as double, for printing and comparisons.
    double valueAsDouble(std::uint64_t i) const;

    Tensor(const Tensor &other);
    Tensor &operator=(const Tensor &other);
    Tensor(Tensor &&other) noexcept;
    Tensor &operator=(Tensor &&other) noexcept;
    ~Tensor() = default;

private:
    static constexpr std::size_t kInline = 16; // scalars and tiny vectors need no allocation
    void pointAtStorage();

    DType m_dtype = DType::Float32;
    bool m_isString = false;
    bool m_inline = false;
    bool m_view = false; // bytes someone else owns (view())
    Shape m_shape;
    const std::byte *m_data = nullptr;
    std::shared_ptr<const void> m_owner; // keeps m_data alive (owned buffer, mapping, or strings)
    alignas(16) std::byte m_inlineBytes[kInline] = {};
};

} // namespace sluice::pipeline
