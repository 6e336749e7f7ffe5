#include "train/mpi_reducer.h"

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

    Status sum(std::span<std::vector<float> *const> buffers) override
    {
        sumLocalReplicas(buffers);
        if (m_size == 1)
            return Status::success();
        auto &b = *buffers[0];
        // MPI counts are ints: reduce in pieces for models over 2^31 parameters.
        constexpr std::size_t piece = std::size_t(1) << 30;
        for (std::size_t off = 0; off < b.size(); off += piece) {
            const int count = int(std::min(piece, b.size() - off));
            if (auto s = check(MPI_Allreduce(MPI_IN_PLACE, b.data() + off, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "Allreduce"); !s.ok())
                return s;
        }
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
