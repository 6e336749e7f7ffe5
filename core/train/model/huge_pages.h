#pragma once
// Transparent huge pages for the large flat buffers of training (weights, gradients, optimizer
// slots). An Embedding table of millions of rows is read and written at random rows every step;
// with 4 KiB pages nearly every such access also misses the TLB, with 2 MiB pages it mostly does
// not. Linux gives huge pages to memory advised with MADV_HUGEPAGE when it is first touched, but a
// std::vector has touched (zero-filled) its pages already: so the advice is given to the 2 MiB
// aligned interior of a buffer that is still all zeros, and those pages are handed back, to be
// faulted in again as huge pages, still zero. Elsewhere, or where the kernel says no: nothing.
//
// Threading: call on a buffer no other thread uses.

#include <vector>

namespace sluice::train {

// `zeroed` must hold only zeros (it still does afterwards). Buffers under 4 MiB are left alone.
void adviseHugePages(std::vector<float> &zeroed);

// A copy of `values` in a buffer advised as above (initial weights).
std::vector<float> copyToHugePages(const std::vector<float> &values);

} // namespace sluice::train
