#include "train/distribute/mpi_reducer.h"

#include <algorithm>
#include <cstdlib>

#ifdef SLUICE_HAVE_MPI
#include <mpi.h>
#endif

namespace sluice::train {

bool launchedByMpi()
{
    for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
        if (std::getenv(var))
            return true;
    return false;
}

#ifdef SLUICE_HAVE_MPI

namespace {

bool g_initialised = false;

Status check(int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return Status::success();
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    return Error::io(std::string("MPI ") + call, std::string(text, std::size_t(length)));
}

class MpiReducer final : public GradientReducer
{
public:
    MpiReducer()
    {
        MPI_Comm_size(MPI_COMM_WORLD, &m_size);
        MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    }
    std::string name() const override { return "MPI (" + std::to_string(m_size) + " processes)"; }
    int processCount() const override { return m_size; }
    int processIndex() const override { return m_rank; }

    Status sumRanges(std::span<std::vector<float> *const> buffers, std::span<const FloatRange> ranges) override
    {
        for (const auto &range : ranges) {
            sumLocalReplicas(buffers, range);
            if (m_size == 1)
                continue;
            float *b = buffers[0]->data() + range.offset;
            // MPI counts are ints: reduce in pieces for models over 2^31 parameters.
            constexpr std::size_t piece = std::size_t(1) << 30;
            for (std::size_t off = 0; off < range.count; off += piece) {
                const int count = int(std::min(piece, range.count - off));
                if (auto s = check(MPI_Allreduce(MPI_IN_PLACE, b + off, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "Allreduce"); !s.ok())
                    return s;
            }
        }
        return Status::success();
    }

    // Each process sends its used rows and their sums to all (an all-gather, in proportion to
    // the batch); every process then adds them up in process order, so all hold the same bits.
    Status sumRows(std::span<std::vector<float> *const> buffers, std::size_t offset, std::size_t rowSize,
                   std::span<const std::vector<std::int64_t> *const> rows, std::vector<std::int64_t> &used) override
    {
        used = sumLocalRows(buffers, offset, rowSize, rows);
        if (m_size == 1)
            return Status::success();
        float *table = buffers[0]->data() + offset;
        const int mine = int(used.size());
        std::vector<int> counts(std::size_t(m_size), 0);
        if (auto s = check(MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD), "Allgather"); !s.ok())
            return s;
        std::vector<int> starts(counts.size(), 0), valueCounts(counts.size()), valueStarts(counts.size());
        std::size_t total = 0;
        for (std::size_t p = 0; p < counts.size(); ++p) {
            starts[p] = int(total);
            total += std::size_t(counts[p]);
            valueCounts[p] = counts[p] * int(rowSize);
            valueStarts[p] = starts[p] * int(rowSize);
        }
        std::vector<std::int64_t> ids(total);
        if (auto s = check(MPI_Allgatherv(used.data(), mine, MPI_INT64_T, ids.data(), counts.data(), starts.data(), MPI_INT64_T, MPI_COMM_WORLD),
                           "Allgatherv");
            !s.ok())
            return s;
        std::vector<float> own(used.size() * rowSize), values(total * rowSize);
        for (std::size_t i = 0; i < used.size(); ++i)
            std::copy_n(table + std::size_t(used[i]) * rowSize, rowSize, own.data() + i * rowSize);
        if (auto s = check(MPI_Allgatherv(own.data(), int(own.size()), MPI_FLOAT, values.data(), valueCounts.data(), valueStarts.data(), MPI_FLOAT,
                                          MPI_COMM_WORLD),
                           "Allgatherv");
            !s.ok())
            return s;
        for (std::int64_t row : used)
            std::fill_n(table + std::size_t(row) * rowSize, rowSize, 0.0f);
        for (std::size_t i = 0; i < total; ++i) {
            float *dst = table + std::size_t(ids[i]) * rowSize;
            for (std::size_t k = 0; k < rowSize; ++k)
                dst[k] += values[i * rowSize + k];
        }
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        used = std::move(ids);
        return Status::success();
    }

    Status sumAcrossProcesses(std::span<double> values) override
    {
        if (m_size == 1 || values.empty())
            return Status::success();
        return check(MPI_Allreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "Allreduce");
    }

    Status broadcastFromFirst(std::span<float> values) override
    {
        if (m_size == 1 || values.empty())
            return Status::success();
        return check(MPI_Bcast(values.data(), int(values.size()), MPI_FLOAT, 0, MPI_COMM_WORLD), "Bcast");
    }

private:
    int m_size = 1, m_rank = 0;
};

} // namespace

Result<std::unique_ptr<GradientReducer>> makeMpiReducer()
{
    if (!g_initialised) {
        int provided = 0;
        // Only the training thread calls MPI.
        if (auto s = check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "Init"); !s.ok())
            return s.error();
        g_initialised = true;
    }
    return std::unique_ptr<GradientReducer>(std::make_unique<MpiReducer>());
}

void abortAllRanks(int code)
{
    if (g_initialised)
        MPI_Abort(MPI_COMM_WORLD, code);
}

void finalizeMpi()
{
    if (g_initialised) {
        MPI_Finalize();
        g_initialised = false;
    }
}

#else

Result<std::unique_ptr<GradientReducer>> makeMpiReducer()
{
    return Error::unsupported("MPI", "this Sluice was built without MPI (SLUICE_WITH_MPI); rebuild with Open MPI installed");
}

void abortAllRanks(int) {}
void finalizeMpi() {}

#endif

} // namespace sluice::train
