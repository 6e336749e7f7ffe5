#include "train/model/huge_pages.h"

#include <algorithm>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace sluice::train {

void adviseHugePages(std::vector<float> &zeroed)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t huge = std::uintptr_t(2) << 20;
    const std::size_t bytes = zeroed.size() * sizeof(float);
    if (bytes < 2 * huge)
        return;
    const auto begin = reinterpret_cast<std::uintptr_t>(zeroed.data());
    const std::uintptr_t first = (begin + huge - 1) / huge * huge, last = (begin + bytes) / huge * huge;
    if (last <= first)
        return;
    void *interior = reinterpret_cast<void *>(first);
    // Only if the kernel takes the advice are the zero pages given back: private anonymous
    // memory reads as zeros again after MADV_DONTNEED (a heap block from malloc's mmap).
    if (madvise(interior, last - first, MADV_HUGEPAGE) == 0)
        (void)madvise(interior, last - first, MADV_DONTNEED);
#else
    (void)zeroed;
#endif
}

std::vector<float> copyToHugePages(const std::vector<float> &values)
{
    std::vector<float> out(values.size(), 0.0f);
    adviseHugePages(out);
    std::copy(values.begin(), values.end(), out.begin());
    return out;
}

} // namespace sluice::train
