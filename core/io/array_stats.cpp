#include "io/array_stats.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace sluice {
namespace {

// Elements per deterministic chunk and bytes per window of the streaming pass.
constexpr std::uint64_t kChunkElements = 1u << 16;
constexpr std::uint64_t kWindowBytes = 64u << 20;

// Partial result over a range of elements, in the element's own domain (A: the type the
// extremes are kept in).
template <typename A>
struct Partial
{
    std::uint64_t nan = 0;
    std::uint64_t seen = 0; // non-NaN elements
    double sum = 0;
    // ±infinity for floats, so that an array of infinities reports them as its extremes.
    A lo = std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
    A hi = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();

    void join(const Partial &o)
    {
        nan += o.nan;
        seen += o.seen;
        sum += o.sum;
        lo = std::min(lo, o.lo);
        hi = std::max(hi, o.hi);
    }
};

// Stored T, accumulated as A (Float16 → float, bool → uint64).
template <typename T, typename A, bool Swap>
Partial<A> scan(const std::byte *p, std::uint64_t begin, std::uint64_t end)
{
    Partial<A> r;
    for (std::uint64_t i = begin; i < end; ++i) {
        A v;
        if constexpr (std::is_same_v<T, Float16>)
            v = float(Float16{loadElement<std::uint16_t>(p + i * 2, Swap)});
        else if constexpr (std::is_same_v<T, bool>)
            v = std::to_integer<unsigned>(p[i]) != 0;
        else
            v = A(loadElement<T>(p + i * sizeof(T), Swap));
        if constexpr (std::is_floating_point_v<A>) {
            if (std::isnan(v)) {
                ++r.nan;
                continue;
            }
        }
        r.sum += double(v);
        r.lo = std::min(r.lo, v);
        r.hi = std::max(r.hi, v);
    }
    r.seen = (end - begin) - r.nan;
    return r;
}

template <typename T, typename A>
ArrayStats statsOf(const NdArray &array)
{
    const std::byte *data = array.data().data();
    const std::uint64_t n = array.count();
    const std::size_t item = itemSize(array.dtype());
    const bool swap = !array.descr().isNativeOrder();
    const MappedFile *mapping = array.mapping();
    const std::uint64_t windowElements = std::max<std::uint64_t>(kChunkElements, kWindowBytes / item / kChunkElements * kChunkElements);

    if (mapping)
        mapping->adviseAccess(MappedFile::Access::Sequential);
    Partial<A> total;
    for (std::uint64_t w = 0; w < n; w += windowElements) {
        const std::uint64_t wEnd = std::min(n, w + windowElements);
        // Deterministic reduce over fixed chunks: the same sum whatever the thread count.
        const Partial<A> part = tbb::parallel_deterministic_reduce(
            tbb::blocked_range<std::uint64_t>(w, wEnd, kChunkElements), Partial<A>{},
            [&](const tbb::blocked_range<std::uint64_t> &r, Partial<A> acc) {
                acc.join(swap ? scan<T, A, true>(data, r.begin(), r.end()) : scan<T, A, false>(data, r.begin(), r.end()));
                return acc;
            },
            [](Partial<A> a, const Partial<A> &b) {
                a.join(b);
                return a;
            });
        total.join(part);
        if (mapping) // release the window behind us: bounded RSS on files larger than RAM
            mapping->release(std::size_t(data - mapping->bytes().data()) + w * item, (wEnd - w) * item);
    }

    ArrayStats s;
    s.count = n;
    s.nanCount = total.nan;
    s.sum = total.sum;
    if (total.seen > 0) {
        s.mean = total.sum / double(total.seen);
        if constexpr (std::is_floating_point_v<A>) {
            s.min = double(total.lo);
            s.max = double(total.hi);
        } else if constexpr (std::is_signed_v<A>) {
            s.min = std::int64_t(total.lo);
            s.max = std::int64_t(total.hi);
        } else {
            s.min = std::uint64_t(total.lo);
            s.max = std::uint64_t(total.hi);
        }
    }
    return s;
}

} // namespace

ArrayStats computeStats(const NdArray &array, int threads)
{
    tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
    return arena.execute([&] {
        switch (array.dtype()) {
        case DType::Bool: return statsOf<bool, std::uint64_t>(array);
        case DType::Int8: return statsOf<std::int8_t, std::int64_t>(array);
        case DType::Int16: return statsOf<std::int16_t, std::int64_t>(array);
        case DType::Int32: return statsOf<std::int32_t, std::int64_t>(array);
        case DType::Int64: return statsOf<std::int64_t, std::int64_t>(array);
        case DType::UInt8: return statsOf<std::uint8_t, std::uint64_t>(array);
        case DType::UInt16: return statsOf<std::uint16_t, std::uint64_t>(array);
        case DType::UInt32: return statsOf<std::uint32_t, std::uint64_t>(array);
        case DType::UInt64: return statsOf<std::uint64_t, std::uint64_t>(array);
        case DType::Float16: return statsOf<Float16, float>(array);
        case DType::Float32: return statsOf<float, float>(array);
        case DType::Float64: return statsOf<double, double>(array);
        }
        return ArrayStats{};
    });
}

double extremeAsDouble(const ArrayStats::Extreme &e)
{
    if (const auto *d = std::get_if<double>(&e))
        return *d;
    if (const auto *i = std::get_if<std::int64_t>(&e))
        return double(*i);
    if (const auto *u = std::get_if<std::uint64_t>(&e))
        return double(*u);
    return std::nan("");
}

} // namespace sluice
