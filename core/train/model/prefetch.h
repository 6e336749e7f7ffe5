#pragma once
// Software prefetch of a row of floats, for loops that visit rows of a large table in an order
// the hardware prefetcher cannot guess (Embedding ids, the rows an optimizer updates): asking for
// the rows a few iterations ahead keeps several memory reads in flight instead of one.

#include <cstddef>

namespace sluice::train {

// How many rows ahead the loops ask: enough to cover a DRAM access at a few ns per row of work.
inline constexpr std::size_t kPrefetchRows = 8;

namespace detail {
// GCC 12 at -O2 deletes __builtin_prefetch once the function holding it is inlined (seen with
// objdump: not one prefetch was left in the optimizer), so on x86-64 the instruction is written
// as volatile asm, which the compiler keeps.
inline void prefetchLine(const char *p)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    asm volatile("prefetcht0 %0" : : "m"(*p));
#else
    __builtin_prefetch(p);
#endif
}
} // namespace detail

// The first four 64-byte lines of [row, row + floats) (longer rows stream well anyway). A
// prefetch never faults, so lines past the row's end are harmless.
inline void prefetchRow(const float *row, std::size_t floats)
{
    const char *p = reinterpret_cast<const char *>(row);
    detail::prefetchLine(p);
    detail::prefetchLine(p + 64);
    if (floats > 32) {
        detail::prefetchLine(p + 128);
        detail::prefetchLine(p + 192);
    }
}

} // namespace sluice::train
