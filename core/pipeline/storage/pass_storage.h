#pragma once
// How one pass over a mapped source reads its files, so that shuffled passes over data larger
// than RAM run at the storage's random-read rate and resident memory stays bounded:
//  - the kernel is told the pass's order (MADV_RANDOM for a global_shuffle, MADV_SEQUENTIAL for
//    in-order passes), so a random row no longer drags a whole readahead window from disk;
//  - a shuffled pass knows its permutation, so the rows of the batch being read and of the next
//    ones (the read-ahead window, AUTOTUNE'd within a budget) are requested with MADV_WILLNEED
//    before they are copied: the device sees many reads at once instead of one page fault at a
//    time. Rows already in the page cache are skipped, and the read-ahead switches itself off
//    while the data is served from the page cache;
//  - an in-order pass releases the pages behind it; a shuffled pass over more than the resident
//    budget releases its mappings whenever the process has grown by the budget;
//  - the time spent copying rows out of the mappings, and the part of it spent off the CPU
//    waiting for pages, is measured and charged to the source.
//
// Threading: one PassStorage per pass, shared by the tasks reading it; every function may be
// called from several tasks at once.

#include "pipeline/engine/random_access.h"
#include "pipeline/profile/stage_stats.h"

#include <atomic>
#include <cstdint>
#include <memory>

namespace sluice::pipeline {

// Wall time, this thread's CPU time and its major page faults, around a copy out of mappings.
struct ThreadClock
{
    std::int64_t wallNs = 0;
    std::int64_t cpuNs = 0;
    std::uint64_t majorFaults = 0;
    bool full = false; // CPU time and faults taken too (two system calls), not just the wall clock
    static ThreadClock now(bool full = true);
};

class PassStorage
{
public:
    // Null when the source reads no mapping (range, arrays held in memory). `batchRows` is how
    // many positions one read covers; it sizes the read-ahead window's first step.
    static std::shared_ptr<PassStorage> open(const RowSource &rows, std::shared_ptr<const IndexMap> pass, StorageStats &stats,
                                             std::uint64_t batchRows);
    // An in-order pass hands what it has not released yet to a short queue of finished passes,
    // released a few passes later (once the stages after it have copied its rows): the pages of
    // thousands of small files (interleave's sub-pipelines) would otherwise stay resident.
    ~PassStorage();

    // Whether the next read is worth the full clocks: always while reading from storage, one
    // read in kSampleEvery while the rows come from the page cache (their system calls would
    // otherwise cost a few percent of an in-memory pass).
    bool measureNext();
    static constexpr std::uint64_t kSampleEvery = 16;

    // Before positions [begin, end) of the pass are read: a shuffled pass requests their rows
    // and the read-ahead window's beyond them.
    void beforeRead(std::uint64_t begin, std::uint64_t end);
    // After they were read, with the clocks taken around the copy (or none, where the rows are
    // read later by another stage): accounts the time and releases pages.
    void afterRead(std::uint64_t begin, std::uint64_t end, const ThreadClock *before, const ThreadClock *after);

    bool shuffled() const { return m_shuffled; }

private:
    PassStorage(const RowSource &rows, std::shared_ptr<const IndexMap> pass, StorageStats &stats, std::uint64_t batchRows);
    void requestAhead(std::uint64_t from, std::uint64_t to);
    void releaseBehind(std::uint64_t begin);
    void releaseOverBudget();
    void releaseAll();

    const RowSource &m_rows;
    std::shared_ptr<const IndexMap> m_pass;
    StorageStats &m_stats;
    const bool m_shuffled;
    const std::uint64_t m_batchRows;
    const std::uint64_t m_size;
    std::uint64_t m_mappedBytes = 0;
    std::uint64_t m_budget = 0;
    std::uint64_t m_rssAtStart = 0;
    std::uint64_t m_releaseWindowRows = 0; // in-order passes release in windows of this many positions
    std::vector<const MappedFile *> m_files;

    std::atomic<std::uint64_t> m_requestedTo{0}; // positions below this have been requested
    std::atomic<std::uint64_t> m_releasedTo{0};  // in-order: positions below this are released
    std::atomic<std::uint64_t> m_reads{0};       // reads done, for the periodic budget check
    std::atomic<std::uint64_t> m_measured{0};    // reads asked whether to measure
    std::atomic<std::uint64_t> m_rowsSinceMissing{0}; // read-ahead found everything resident this long
};

} // namespace sluice::pipeline
