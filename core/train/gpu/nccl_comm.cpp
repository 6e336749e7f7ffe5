// NCCL through dlopen (nccl_comm.h says why): the few entry points mirrored training needs.
#include "train/gpu/nccl_comm.h"

#if SLUICE_HAVE_NCCL
#include <nccl.h>
#endif
#include <dlfcn.h>

#include <cstring>
#include <mutex>

namespace sluice::train::gpu {

#if SLUICE_HAVE_NCCL
namespace {

struct NcclLibrary
{
    void *handle = nullptr;
    std::string reason;
    decltype(&ncclGetUniqueId) getUniqueId = nullptr;
    decltype(&ncclCommInitRank) commInitRank = nullptr;
    decltype(&ncclCommDestroy) commDestroy = nullptr;
    decltype(&ncclAllReduce) allReduce = nullptr;
    decltype(&ncclGroupStart) groupStart = nullptr;
    decltype(&ncclGroupEnd) groupEnd = nullptr;
    decltype(&ncclGetErrorString) errorString = nullptr;

    NcclLibrary()
    {
        handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            reason = std::string("NCCL could not be loaded (") + dlerror() + ")";
            return;
        }
        bool ok = true;
        auto load = [&](auto &fn, const char *name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
            ok = ok && fn;
        };
        load(getUniqueId, "ncclGetUniqueId");
        load(commInitRank, "ncclCommInitRank");
        load(commDestroy, "ncclCommDestroy");
        load(allReduce, "ncclAllReduce");
        load(groupStart, "ncclGroupStart");
        load(groupEnd, "ncclGroupEnd");
        load(errorString, "ncclGetErrorString");
        if (!ok) {
            reason = "libnccl.so.2 lacks an entry point mirrored training needs";
            dlclose(handle);
            handle = nullptr;
        }
    }

    void check(ncclResult_t rc, const char *what) const
    {
        if (rc != ncclSuccess)
            throw cuda::CudaError(std::string("NCCL ") + what + " failed: " + errorString(rc));
    }
};

const NcclLibrary &library()
{
    static const NcclLibrary lib; // loaded once, thread-safe
    return lib;
}

} // namespace

bool NcclComm::available(std::string &reason)
{
    reason = library().reason;
    return library().handle != nullptr;
}

NcclId NcclComm::newId()
{
    const auto &lib = library();
    if (!lib.handle)
        throw cuda::CudaError(lib.reason);
    ncclUniqueId id;
    lib.check(lib.getUniqueId(&id), "ncclGetUniqueId");
    NcclId out;
    static_assert(sizeof(id) == sizeof(out.bytes));
    std::memcpy(out.bytes.data(), &id, sizeof(id));
    return out;
}

std::vector<std::unique_ptr<NcclComm>> NcclComm::create(const NcclId &id, int ranks, int firstRank, const std::vector<int> &devices)
{
    const auto &lib = library();
    if (!lib.handle)
        throw cuda::CudaError(lib.reason);
    ncclUniqueId uid;
    std::memcpy(&uid, id.bytes.data(), sizeof(uid));
    std::vector<std::unique_ptr<NcclComm>> comms;
    // Several devices of one process join inside one group, or the first would wait for the others.
    lib.check(lib.groupStart(), "ncclGroupStart");
    try {
        for (std::size_t i = 0; i < devices.size(); ++i) {
            cuda::setDevice(devices[i]);
            std::unique_ptr<NcclComm> c(new NcclComm);
            ncclComm_t comm = nullptr;
            lib.check(lib.commInitRank(&comm, ranks, uid, firstRank + int(i)), "ncclCommInitRank");
            c->m_comm = comm;
            comms.push_back(std::move(c));
        }
    } catch (...) {
        (void)lib.groupEnd();
        throw;
    }
    lib.check(lib.groupEnd(), "ncclCommInitRank (group)");
    return comms;
}

NcclComm::~NcclComm()
{
    if (m_comm)
        (void)library().commDestroy(static_cast<ncclComm_t>(m_comm));
}

void NcclComm::allReduceSum(float *buffer, std::size_t n, cuda::Stream stream)
{
    const auto &lib = library();
    lib.check(lib.allReduce(buffer, buffer, n, ncclFloat32, ncclSum, static_cast<ncclComm_t>(m_comm), stream), "ncclAllReduce");
}

void NcclComm::groupStart() { library().check(library().groupStart(), "ncclGroupStart"); }
void NcclComm::groupEnd() { library().check(library().groupEnd(), "ncclGroupEnd"); }

#else // built without nccl.h

bool NcclComm::available(std::string &reason)
{
    reason = "this Sluice was built without NCCL";
    return false;
}
NcclId NcclComm::newId() { throw cuda::CudaError("this Sluice was built without NCCL"); }
std::vector<std::unique_ptr<NcclComm>> NcclComm::create(const NcclId &, int, int, const std::vector<int> &)
{
    throw cuda::CudaError("this Sluice was built without NCCL");
}
NcclComm::~NcclComm() = default;
void NcclComm::allReduceSum(float *, std::size_t, cuda::Stream) {}
void NcclComm::groupStart() {}
void NcclComm::groupEnd() {}

#endif

} // namespace sluice::train::gpu
