#include "pipeline/storage/pass_storage.h"

#include "io/storage/mapped_file.h"
#include "pipeline/storage/storage_throttle.h"
#include "telemetry/process_memory.h"
#include "util/mutex.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <tuple>
#include <sys/resource.h>
#include <time.h>

namespace sluice::pipeline {
namespace {

// The system's page size, as the mapping asks it (4 KiB on x86-64, 16 or 64 KiB on some ARM).
std::uint64_t pageBytes()
{
    return MappedFile::pageSize();
}
constexpr std::uint64_t kReleaseWindowBytes = 64u << 20; // in-order passes release behind in steps of this
constexpr std::uint64_t kReadAheadMaxBytes = 256u << 20;  // the read-ahead budget's ceiling
constexpr std::uint64_t kBudgetCheckEvery = 16;           // reads between resident-set checks
// Rows in a row found already resident before the read-ahead decides the data is served from
// the page cache and stops asking (it starts again at the next major fault).
constexpr std::uint64_t kResidentRowsToStop = 1u << 16;

// Where a finished in-order pass's pages go: released a few passes later, not at once. Its
// elements are often views into the mapping that the stages after it (an interleave's batch)
// copy only after the pass is done; releasing at once would have them fault the pages back in,
// and thousands of small files would stay resident. Bounded: the oldest is released first.
class DeferredReleases
{
public:
    static DeferredReleases &instance()
    {
        static DeferredReleases queue;
        return queue;
    }
    void add(const MappedFile &file, std::size_t offset, std::size_t length)
    {
        std::weak_ptr<const MappedFile> oldest;
        std::size_t oldestOffset = 0, oldestLength = 0;
        {
            MutexLock lock(m_mutex);
            m_queue.push_back({file.weak_from_this(), offset, length});
            if (m_queue.size() <= kKept)
                return;
            std::tie(oldest, oldestOffset, oldestLength) = std::move(m_queue.front());
            m_queue.pop_front();
        }
        if (auto alive = oldest.lock()) // an unmapped file has nothing left to release
            alive->release(oldestOffset, oldestLength);
    }

private:
    static constexpr std::size_t kKept = 64;
    Mutex m_mutex;
    // Weak: the queue never keeps a mapping alive after its pipeline is gone.
    std::deque<std::tuple<std::weak_ptr<const MappedFile>, std::size_t, std::size_t>> m_queue GUARDED_BY(m_mutex);
};

// Pages of the page cache one row occupies at least: each feature's part of the row lies in
// its own file.
std::uint64_t pagesPerRow(const RowSource &rows)
{
    std::uint64_t pages = 0;
    rows.visitStorage(0, 1, [&pages](const MappedFile &, std::size_t, std::size_t length) { pages += MappedFile::pagesSpanned(0, length); });
    return std::max<std::uint64_t>(1, pages);
}

} // namespace

ThreadClock ThreadClock::now(bool full)
{
    ThreadClock c;
    c.wallNs = nowNs();
    c.full = full;
    if (!full)
        return c;
    // The thread's CPU clock, not getrusage's times: those are sampled at the scheduler's tick on
    // many kernels, and a copy of a few tens of microseconds would look like all waiting.
    timespec cpu{};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
        c.cpuNs = std::int64_t(cpu.tv_sec) * 1000000000 + cpu.tv_nsec;
    rusage usage{};
    if (::getrusage(RUSAGE_THREAD, &usage) == 0)
        c.majorFaults = std::uint64_t(usage.ru_majflt);
    return c;
}

std::shared_ptr<PassStorage> PassStorage::open(const RowSource &rows, std::shared_ptr<const IndexMap> pass, StorageStats &stats,
                                               std::uint64_t batchRows)
{
    if (rows.mappings().empty() || pass->size() == 0)
        return nullptr;
    return std::shared_ptr<PassStorage>(new PassStorage(rows, std::move(pass), stats, std::max<std::uint64_t>(1, batchRows)));
}

PassStorage::PassStorage(const RowSource &rows, std::shared_ptr<const IndexMap> pass, StorageStats &stats, std::uint64_t batchRows)
    : m_rows(rows), m_pass(std::move(pass)), m_stats(stats), m_shuffled(!m_pass->inOrder()), m_batchRows(batchRows),
      m_size(m_pass->size()), m_files(rows.mappings())
{
    for (const MappedFile *file : m_files) {
        m_mappedBytes += file->size();
        file->adviseAccess(m_shuffled ? MappedFile::Access::Random : MappedFile::Access::Sequential);
    }
    m_budget = stats.residentBudgetBytes.load();
    if (m_budget == 0)
        m_budget = physicalMemoryBytes() / 4;
    m_rssAtStart = currentRssBytes();
    const std::uint64_t rowBytes = std::max<std::uint64_t>(1, rows.rowBytes());
    // A small budget (a test's, or a small machine's) releases in smaller steps.
    m_releaseWindowRows = std::max(batchRows, std::min(kReleaseWindowBytes, std::max<std::uint64_t>(m_budget / 4, pageBytes())) / rowBytes);
    if (!m_shuffled && m_size > 1) { // the window counts positions: a shard's pass spans num_shards rows per position
        const std::uint64_t span = m_pass->row(m_size - 1) - m_pass->row(0) + 1;
        m_releaseWindowRows = std::max<std::uint64_t>(1, m_releaseWindowRows / std::max<std::uint64_t>(1, span / m_size));
    }
    stats.access.store(m_shuffled ? StorageStats::Random : StorageStats::Sequential);
    stats.mappedBytes.store(m_mappedBytes);
    if (m_shuffled) {
        // The read-ahead budget: a slice of the resident budget, in rows as the page cache holds
        // them (a random row occupies whole pages).
        const std::uint64_t limitBytes = std::min(kReadAheadMaxBytes, std::max<std::uint64_t>(m_budget / 8, pageBytes()));
        const std::uint64_t limitRows = std::max<std::uint64_t>(1, limitBytes / (pagesPerRow(rows) * pageBytes()));
        stats.readAheadLimitBytes.store(limitBytes);
        stats.readAheadLimitRows.store(limitRows);
        if (stats.readAheadRows.load() == 0)
            stats.readAheadRows.store(std::min(limitRows, batchRows));
        // Data larger than the budget cannot stay resident: read ahead from the first batch.
        if (m_mappedBytes > m_budget)
            stats.readAhead.store(true);
    }
}

PassStorage::~PassStorage()
{
    if (m_shuffled)
        return;
    const std::uint64_t from = m_releasedTo.load();
    if (from >= m_size)
        return;
    m_rows.visitStorage(m_pass->row(from), m_pass->row(m_size - 1) + 1, [](const MappedFile &file, std::size_t offset, std::size_t length) {
        DeferredReleases::instance().add(file, offset, length);
    });
    m_stats.releases.fetch_add(1, std::memory_order_relaxed);
}

void PassStorage::beforeRead(std::uint64_t begin, std::uint64_t end)
{
    if (storageThrottle().count() > 0) { // a simulated slow device (tests of the storage verdict)
        std::uint64_t pages = 0;
        for (std::uint64_t p = begin; p < end; ++p) {
            const std::uint64_t row = m_pass->row(p);
            m_rows.visitStorage(row, row + 1, [&pages](const MappedFile &, std::size_t offset, std::size_t length) {
                pages += MappedFile::pagesSpanned(offset, length);
            });
        }
        throttleStorageRead(pages);
    }
    if (!m_shuffled || !m_stats.readAhead.load(std::memory_order_relaxed))
        return;
    // Claim [requested, target): this read's own rows and the window beyond, each once.
    const std::uint64_t target = std::min(m_size, end + m_stats.readAheadRows.load(std::memory_order_relaxed));
    std::uint64_t from = m_requestedTo.load(std::memory_order_relaxed);
    while (from < target && !m_requestedTo.compare_exchange_weak(from, target, std::memory_order_relaxed)) {
    }
    if (from < target)
        requestAhead(std::max(from, begin), target);
}

void PassStorage::requestAhead(std::uint64_t from, std::uint64_t to)
{
    std::uint64_t missing = 0;
    for (std::uint64_t p = from; p < to; ++p) {
        const std::uint64_t row = m_pass->row(p);
        m_rows.visitStorage(row, row + 1, [&missing](const MappedFile &file, std::size_t offset, std::size_t length) {
            if (file.resident(offset, length))
                return;
            file.willNeed(offset, length);
            missing += MappedFile::pagesSpanned(offset, length);
        });
    }
    if (missing) {
        m_stats.pagesReadAhead.fetch_add(missing, std::memory_order_relaxed);
        m_rowsSinceMissing.store(0, std::memory_order_relaxed);
    } else if (m_rowsSinceMissing.fetch_add(to - from, std::memory_order_relaxed) + (to - from) >= kResidentRowsToStop &&
               m_mappedBytes <= m_budget) {
        m_stats.readAhead.store(false, std::memory_order_relaxed); // served from the page cache now
    }
}

bool PassStorage::measureNext()
{
    return m_stats.readAhead.load(std::memory_order_relaxed) || m_measured.fetch_add(1, std::memory_order_relaxed) % kSampleEvery == 0;
}

void PassStorage::afterRead(std::uint64_t begin, std::uint64_t end, const ThreadClock *before, const ThreadClock *after)
{
    if (before && after)
        m_stats.readNs.fetch_add(after->wallNs - before->wallNs, std::memory_order_relaxed);
    if (before && after && before->full && after->full) {
        const std::int64_t wall = after->wallNs - before->wallNs;
        const std::int64_t offCpu = std::max<std::int64_t>(0, wall - (after->cpuNs - before->cpuNs));
        const std::uint64_t faults = after->majorFaults - before->majorFaults;
        m_stats.timedReadNs.fetch_add(wall, std::memory_order_relaxed);
        m_stats.waitNs.fetch_add(offCpu, std::memory_order_relaxed);
        m_stats.majorFaults.fetch_add(faults, std::memory_order_relaxed);
        if (m_shuffled && faults > 0 && !m_stats.readAhead.exchange(true, std::memory_order_relaxed)) {
            // Pages the copy had to fetch itself: the data comes from storage; read ahead from now on.
            m_requestedTo.store(end, std::memory_order_relaxed);
        } else if (m_shuffled && m_stats.readAhead.load(std::memory_order_relaxed) && (faults > 0 || 2 * offCpu > wall)) {
            // The copy still waited for storage most of its time, or fetched pages itself: the rows
            // were requested too late. A longer window gives the device more reads at once, up to
            // its budget (a full device queue then makes the requests themselves wait).
            const std::uint64_t rows = m_stats.readAheadRows.load(std::memory_order_relaxed);
            m_stats.readAheadRows.store(std::min(m_stats.readAheadLimitRows.load(), rows + std::max<std::uint64_t>(1, rows / 4)),
                                        std::memory_order_relaxed);
        }
    }
    m_stats.rowsRead.fetch_add(end - begin, std::memory_order_relaxed);
    if (m_shuffled) {
        if (m_reads.fetch_add(1, std::memory_order_relaxed) % kBudgetCheckEvery == kBudgetCheckEvery - 1)
            releaseOverBudget();
    } else {
        releaseBehind(begin);
    }
}

void PassStorage::releaseBehind(std::uint64_t begin)
{
    // Reads finish out of order on parallel tasks: keep one window behind the newest read
    // unreleased, so a slower task still copying there rarely has to fault its pages back in
    // (which would cost a minor fault, never wrong data: the pages stay in the page cache).
    std::uint64_t released = m_releasedTo.load(std::memory_order_relaxed);
    if (begin < released + 2 * m_releaseWindowRows)
        return;
    const std::uint64_t to = begin - m_releaseWindowRows;
    if (!m_releasedTo.compare_exchange_strong(released, to, std::memory_order_relaxed))
        return; // another task is releasing
    const std::uint64_t firstRow = m_pass->row(released), endRow = m_pass->row(to - 1) + 1;
    m_rows.visitStorage(firstRow, endRow, [](const MappedFile &file, std::size_t offset, std::size_t length) {
        // Whole pages inside the range only: the pages at its edges may hold rows still in use.
        const std::size_t page = pageBytes(), first = (offset + page - 1) / page * page, last = (offset + length) / page * page;
        if (last > first)
            file.release(first, last - first);
    });
    m_stats.releases.fetch_add(1, std::memory_order_relaxed);
}

void PassStorage::releaseOverBudget()
{
    if (m_mappedBytes <= m_budget || currentRssBytes() <= m_rssAtStart + m_budget)
        return;
    releaseAll();
}

void PassStorage::releaseAll()
{
    for (const MappedFile *file : m_files)
        file->release(0, file->size());
    m_stats.releases.fetch_add(1, std::memory_order_relaxed);
}

} // namespace sluice::pipeline
