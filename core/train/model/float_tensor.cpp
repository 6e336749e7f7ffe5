#include "train/model/float_tensor.h"

#include <algorithm>

namespace sluice::train {

std::int64_t shapeCount(const Shape &shape)
{
    std::int64_t n = 1;
    for (auto d : shape)
        n *= d;
    return n;
}

std::string shapeString(const Shape &shape)
{
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            s += ", ";
        s += shape[i] < 0 ? std::string("None") : std::to_string(shape[i]);
    }
    if (shape.size() == 1)
        s += ",";
    return s + ")";
}

void FloatTensor::resize(Shape s)
{
    shape = std::move(s);
    data.resize(std::size_t(shapeCount(shape)));
}

void FloatTensor::fill(float value)
{
    std::fill(data.begin(), data.end(), value);
}

std::int64_t FloatTensor::rowSize() const
{
    std::int64_t n = 1;
    for (std::size_t i = 1; i < shape.size(); ++i)
        n *= shape[i];
    return n;
}

} // namespace sluice::train
