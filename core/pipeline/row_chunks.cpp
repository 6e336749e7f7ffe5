#include "pipeline/row_chunks.h"

#include <cstring>

namespace sluice::pipeline {

void attachChunkError(Element &chunk, const Error &error)
{
    chunk.tensors.push_back(Tensor::strings({3}, {std::to_string(int(error.kind)), error.what, error.reason}));
}

std::optional<Error> chunkError(const Element &chunk, std::size_t features)
{
    if (chunk.tensors.size() <= features)
        return std::nullopt;
    const auto &e = chunk.tensors.back().stringValues();
    return Error{Error::Kind(std::stoi(e.at(0))), e.at(1), e.at(2)};
}

std::uint64_t chunkRows(const Element &chunk)
{
    return chunk.tensors.empty() || chunk.tensors[0].shape().empty() ? 0 : std::uint64_t(chunk.tensors[0].shape()[0]);
}

void copyChunkRows(const Element &chunk, std::size_t feature, std::uint64_t begin, std::uint64_t end, std::byte *out,
                   std::vector<std::string> *strings)
{
    const Tensor &column = chunk.tensors.at(feature);
    if (column.isString()) {
        const auto &values = column.stringValues();
        strings->insert(strings->end(), values.begin() + std::ptrdiff_t(begin), values.begin() + std::ptrdiff_t(end));
        return;
    }
    const std::size_t rowBytes = column.nbytes() / std::max<std::size_t>(1, std::size_t(chunkRows(chunk)));
    std::memcpy(out, column.data() + begin * rowBytes, (end - begin) * rowBytes);
}

} // namespace sluice::pipeline
