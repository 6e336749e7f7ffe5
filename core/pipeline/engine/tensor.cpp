#include "pipeline/engine/tensor.h"
#include "util/mutex.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <cstring>
#include <new>
#include <stdexcept>

namespace sluice::pipeline {

std::uint64_t elementCount(const Shape &shape)
{
    std::uint64_t n = 1;
    for (std::int64_t d : shape)
        n *= d < 0 ? 0 : std::uint64_t(d);
    return n;
}

std::string shapeText(const Shape &shape)
{
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            s += ", ";
        s += shape[i] < 0 ? std::string("None") : std::to_string(shape[i]);
    }
    return s + (shape.size() == 1 ? ",)" : ")");
}

std::string ValueType::name() const
{
    return isString ? "string" : std::string(dtypeName(dtype));
}

std::optional<ValueType> valueTypeFromName(std::string_view name)
{
    if (name == "string" || name == "bytes")
        return ValueType::string();
    if (auto d = dtypeFromName(name))
        return ValueType{*d, false};
    return std::nullopt;
}

namespace {

// Large buffers (batches) are recycled: a fresh one from the allocator is a new mmap whose
// pages fault in and are zeroed on first write, which cost more than the gather itself. Batches
// of one pipeline have the same few sizes, so a small cache per exact size serves nearly all.
class BufferPool
{
public:
    static constexpr std::size_t kMinBytes = 64 * 1024;
    static constexpr std::size_t kMaxCachedBytes = 128u << 20;
    static constexpr std::size_t kPerSize = 16;

    void *take(std::size_t bytes)
    {
        {
            MutexLock lock(m_mutex);
            auto it = m_free.find(bytes);
            if (it != m_free.end() && !it->second.empty()) {
                void *p = it->second.back();
                it->second.pop_back();
                m_cached -= bytes;
                return p;
            }
        }
        return ::operator new(bytes, std::align_val_t(64));
    }
    void give(void *p, std::size_t bytes)
    {
        {
            MutexLock lock(m_mutex);
            auto &list = m_free[bytes];
            if (list.size() < kPerSize && m_cached + bytes <= kMaxCachedBytes) {
                list.push_back(p);
                m_cached += bytes;
                return;
            }
        }
        ::operator delete(p, std::align_val_t(64));
    }
    ~BufferPool()
    {
        for (auto &[bytes, list] : m_free)
            for (void *p : list)
                ::operator delete(p, std::align_val_t(64));
    }

private:
    Mutex m_mutex;
    std::unordered_map<std::size_t, std::vector<void *>> m_free GUARDED_BY(m_mutex);
    std::size_t m_cached GUARDED_BY(m_mutex) = 0;
};

BufferPool &pool()
{
    static BufferPool instance; // destroyed at exit, after every pipeline
    return instance;
}

// Owned buffers are 64-byte aligned so that every row copy and vector loop starts on a cache line.
std::shared_ptr<const void> allocateAligned(std::size_t bytes)
{
    if (bytes >= BufferPool::kMinBytes) {
        void *p = pool().take(bytes);
        return std::shared_ptr<const void>(p, [bytes](const void *q) { pool().give(const_cast<void *>(q), bytes); });
    }
    void *p = ::operator new(bytes ? bytes : 1, std::align_val_t(64));
    return std::shared_ptr<const void>(p, [](const void *q) { ::operator delete(const_cast<void *>(q), std::align_val_t(64)); });
}

} // namespace

Tensor Tensor::allocate(DType dtype, Shape shape)
{
    Tensor t;
    t.m_dtype = dtype;
    t.m_shape = std::move(shape);
    const std::size_t bytes = elementCount(t.m_shape) * itemSize(dtype);
    if (bytes <= kInline) {
        t.m_inline = true;
        t.m_data = t.m_inlineBytes;
    } else {
        t.m_owner = allocateAligned(bytes);
        t.m_data = static_cast<const std::byte *>(t.m_owner.get());
    }
    return t;
}

Tensor Tensor::view(DType dtype, Shape shape, SharedBytes bytes)
{
    Tensor t;
    t.m_dtype = dtype;
    t.m_shape = std::move(shape);
    t.m_owner = std::move(bytes.owner);
    t.m_data = bytes.bytes.data();
    t.m_view = true;
    return t;
}

Tensor Tensor::strings(Shape shape, std::vector<std::string> values)
{
    if (values.size() != elementCount(shape))
        throw std::logic_error("Tensor::strings: value count does not match the shape");
    Tensor t;
    t.m_isString = true;
    t.m_dtype = DType::UInt8;
    t.m_shape = std::move(shape);
    t.m_owner = std::make_shared<const std::vector<std::string>>(std::move(values));
    return t;
}

std::uint64_t Tensor::nbytes() const
{
    if (!m_isString)
        return count() * itemSize(m_dtype);
    std::uint64_t n = 0;
    for (const auto &s : stringValues())
        n += s.size();
    return n;
}

std::byte *Tensor::mutableData()
{
    // Only owned numeric storage is writable; views into a mapping are read-only.
    return const_cast<std::byte *>(m_data);
}

const std::vector<std::string> &Tensor::stringValues() const
{
    static const std::vector<std::string> none;
    return m_isString ? *static_cast<const std::vector<std::string> *>(m_owner.get()) : none;
}

Tensor Tensor::reshaped(Shape shape) const
{
    Tensor t = *this;
    t.m_shape = std::move(shape);
    return t;
}

double Tensor::valueAsDouble(std::uint64_t i) const
{
    if (m_isString)
        return 0;
    return loadAsDouble(m_data + i * itemSize(m_dtype), TypeDescr{m_dtype, nativeByteOrder()});
}

void Tensor::pointAtStorage()
{
    if (m_inline)
        m_data = m_inlineBytes;
}

Tensor::Tensor(const Tensor &other)
    : m_dtype(other.m_dtype), m_isString(other.m_isString), m_inline(other.m_inline), m_view(other.m_view), m_shape(other.m_shape),
      m_data(other.m_data), m_owner(other.m_owner)
{
    if (m_inline)
        std::memcpy(m_inlineBytes, other.m_inlineBytes, kInline);
    pointAtStorage();
}

Tensor &Tensor::operator=(const Tensor &other)
{
    if (this != &other) {
        Tensor copy(other);
        *this = std::move(copy);
    }
    return *this;
}

Tensor::Tensor(Tensor &&other) noexcept
    : m_dtype(other.m_dtype), m_isString(other.m_isString), m_inline(other.m_inline), m_view(other.m_view),
      m_shape(std::move(other.m_shape)), m_data(other.m_data), m_owner(std::move(other.m_owner))
{
    if (m_inline)
        std::memcpy(m_inlineBytes, other.m_inlineBytes, kInline);
    pointAtStorage();
}

Tensor &Tensor::operator=(Tensor &&other) noexcept
{
    if (this != &other) {
        m_dtype = other.m_dtype;
        m_isString = other.m_isString;
        m_inline = other.m_inline;
        m_view = other.m_view;
        m_shape = std::move(other.m_shape);
        m_data = other.m_data;
        m_owner = std::move(other.m_owner);
        if (m_inline)
            std::memcpy(m_inlineBytes, other.m_inlineBytes, kInline);
        pointAtStorage();
    }
    return *this;
}

} // namespace sluice::pipeline
