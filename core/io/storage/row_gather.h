#pragma once
// Gathering rows of a row-contiguous array straight from its storage (usually the file
// mapping) into a batch buffer: the copy every batch of the pipeline is made of.

#include "io/nd_array.h"

#include <cstdint>
#include <span>

namespace sluice {

// Copies rows `indices` (each < array.rowCount()) one after another into `out`, which must
// hold indices.size() * array.rowBytes() bytes. Requires array.isRowContiguous().
void gatherRows(const NdArray &array, std::span<const std::uint64_t> indices, std::byte *out);

// Copies rows [begin, end) into `out`.
void copyRows(const NdArray &array, std::uint64_t begin, std::uint64_t end, std::byte *out);

} // namespace sluice
