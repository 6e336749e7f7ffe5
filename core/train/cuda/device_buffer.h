#pragma once
// DeviceBuffer<T>: device memory owned by one object (tiny-cuda-nn's GPUMemory): allocated in
// the constructor, freed in the destructor, movable, never copied. Plain C++ (see runtime.h).
//
// Threading: a buffer is used by one thread at a time; its copies run on the stream given.

#include "train/cuda/runtime.h"

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace sluice::train::cuda {

template <typename T>
class DeviceBuffer
{
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count) : m_data(static_cast<T *>(deviceAlloc(count * sizeof(T)))), m_count(count) {}
    ~DeviceBuffer() { deviceFree(m_data); }

    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    DeviceBuffer(DeviceBuffer &&o) noexcept : m_data(std::exchange(o.m_data, nullptr)), m_count(std::exchange(o.m_count, 0)) {}
    DeviceBuffer &operator=(DeviceBuffer &&o) noexcept
    {
        if (this != &o) {
            deviceFree(m_data);
            m_data = std::exchange(o.m_data, nullptr);
            m_count = std::exchange(o.m_count, 0);
        }
        return *this;
    }

    T *data() { return m_data; }
    const T *data() const { return m_data; }
    std::size_t size() const { return m_count; }
    std::size_t bytes() const { return m_count * sizeof(T); }
    bool empty() const { return m_count == 0; }

    // Copies min(size(), host.size()) elements from the host.
    void upload(std::span<const T> host, Stream stream)
    {
        copyToDevice(m_data, host.data(), std::min(host.size(), m_count) * sizeof(T), stream);
    }
    // The whole buffer, after the stream's earlier work (synchronises the stream).
    std::vector<T> download(Stream stream) const
    {
        std::vector<T> host(m_count);
        copyToHost(host.data(), m_data, bytes(), stream);
        synchronize(stream);
        return host;
    }
    // Every byte 0xFF: NaN for float and bfloat16, so tests see elements a kernel did not write.
    void poison(Stream stream) { fillBytes(m_data, 0xFF, bytes(), stream); }
    void zero(Stream stream) { fillBytes(m_data, 0, bytes(), stream); }

private:
    T *m_data = nullptr;
    std::size_t m_count = 0;
};

// A buffer holding a copy of `host`.
template <typename T>
DeviceBuffer<T> toDevice(std::span<const T> host, Stream stream)
{
    DeviceBuffer<T> b(host.size());
    b.upload(host, stream);
    return b;
}

} // namespace sluice::train::cuda
