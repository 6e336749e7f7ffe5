#pragma once
// fp32 tensors for training: contiguous, batch-major (dimension 0 is the batch). Layers,
// losses and optimizers of the CPU backend read and write these; the pipeline's typed tensors
// are converted once per batch (train/loop/batch_slicer.h).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sluice::train {

using Shape = std::vector<std::int64_t>;

std::int64_t shapeCount(const Shape &shape); // product of the dimensions, 1 for ()
std::string shapeString(const Shape &shape); // "(None, 32)"-style text for messages: "(32, 8)"

struct FloatTensor
{
    Shape shape;
    std::vector<float> data;

    FloatTensor() = default;
    explicit FloatTensor(Shape s) { resize(std::move(s)); }

    // Sets the shape and sizes the storage (keeps capacity: replicas reuse their buffers).
    void resize(Shape s);
    void fill(float value);
    void zero() { fill(0.0f); }

    std::int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
    std::int64_t rowSize() const; // elements per row (product of shape[1:])
    std::size_t size() const { return data.size(); }
    float *ptr() { return data.data(); }
    const float *ptr() const { return data.data(); }
    std::span<float> span() { return data; }
    std::span<const float> span() const { return data; }
};

} // namespace sluice::train
