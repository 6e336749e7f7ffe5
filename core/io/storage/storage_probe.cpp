#include "io/storage/storage_probe.h"

#include "io/writers/atomic_file.h"
#include "util/mutex.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <vector>

namespace sluice {
namespace {

std::string utcNow()
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

nlohmann::json toJson(const StorageMeasurement &m)
{
    return {{"device", m.device.name},   {"random_read_iops", m.randomReadIops}, {"queue_depth", m.queueDepth},
            {"block_bytes", m.blockBytes}, {"seconds", m.seconds},               {"file", m.file},
            {"measured_at", m.measuredAt}};
}

std::optional<StorageMeasurement> fromJson(const std::string &id, const nlohmann::json &j)
try {
    if (!j.is_object() || !j.contains("random_read_iops") || !j["random_read_iops"].is_number())
        return std::nullopt;
    StorageMeasurement m;
    m.device = {id, j.value("device", std::string())};
    m.randomReadIops = j["random_read_iops"].get<double>();
    m.queueDepth = j.value("queue_depth", 0);
    m.blockBytes = j.value("block_bytes", 4096);
    m.seconds = j.value("seconds", 0.0);
    m.file = j.value("file", std::string());
    m.measuredAt = j.value("measured_at", std::string());
    return m;
} catch (const nlohmann::json::exception &) { // a key of another type: a damaged record is none
    return std::nullopt;
}

// The records file, read once per process and re-read after a write (a build looks records up
// for every file of a glob).
Mutex g_recordsMutex;
std::optional<nlohmann::json> g_records GUARDED_BY(g_recordsMutex);

nlohmann::json loadRecords()
{
    std::ifstream in(storageRecordsPath());
    if (!in)
        return nlohmann::json::object();
    auto j = nlohmann::json::parse(in, nullptr, false);
    return j.is_object() ? j : nlohmann::json::object(); // a damaged file is as good as none
}

} // namespace

Result<StorageDevice> storageDeviceOf(const std::string &path)
{
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0)
        return Error::notFound(path, std::strerror(errno));
    StorageDevice device;
    device.id = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
    // /sys/dev/block/MAJ:MIN links to the device (a partition's link sits inside its disk's folder).
    std::error_code ec;
    const std::filesystem::path link = std::filesystem::canonical("/sys/dev/block/" + device.id, ec);
    if (!ec) {
        device.name = link.filename().string();
        if (std::filesystem::exists(link / "partition", ec))
            device.name = link.parent_path().filename().string();
    }
    if (device.name.empty())
        device.name = "device " + device.id; // not a block device (a network or memory file system)
    return device;
}

namespace {

constexpr int kBlock = 4096;

// Kernel AIO (what fio's libaio engine uses), through its system calls: one thread keeps
// `depth` O_DIRECT reads in flight, so the device sees the queue depth asked for without a
// thread per read. Returns the reads done, or -errno; `setupFailed` tells that AIO could not
// even start (no AIO in this kernel or sandbox, or the system-wide limit fs.aio-max-nr reached).
std::int64_t aioRandomReads(int fd, std::uint64_t blocks, int depth, std::chrono::steady_clock::time_point deadline, bool &setupFailed)
{
    aio_context_t context = 0;
    setupFailed = syscall(SYS_io_setup, depth, &context) != 0;
    if (setupFailed)
        return -errno;
    void *memory = nullptr;
    if (posix_memalign(&memory, kBlock, std::size_t(kBlock) * std::size_t(depth)) != 0) {
        syscall(SYS_io_destroy, context);
        return -ENOMEM;
    }
    auto *buffers = static_cast<std::byte *>(memory);
    std::vector<iocb> blocksInFlight(static_cast<std::size_t>(depth));
    std::vector<io_event> events(static_cast<std::size_t>(depth));
    std::mt19937_64 rng(0x5eed);
    std::uniform_int_distribution<std::uint64_t> pick(0, blocks - 1);
    std::vector<iocb *> batch;
    // Refills the given slots with new random reads in one system call; returns how many the
    // kernel took (those are in flight whatever happens next), with `error` set if it refused the rest.
    auto submit = [&](const std::vector<std::size_t> &slots, std::int64_t &error) -> std::int64_t {
        batch.clear();
        for (std::size_t slot : slots) {
            iocb &cb = blocksInFlight[slot];
            std::memset(&cb, 0, sizeof cb);
            cb.aio_fildes = std::uint32_t(fd);
            cb.aio_lio_opcode = IOCB_CMD_PREAD;
            cb.aio_buf = std::uint64_t(reinterpret_cast<std::uintptr_t>(buffers + slot * kBlock));
            cb.aio_nbytes = kBlock;
            cb.aio_offset = std::int64_t(pick(rng) * kBlock);
            cb.aio_data = slot;
            batch.push_back(&cb);
        }
        std::int64_t submitted = 0;
        while (submitted < std::int64_t(batch.size())) {
            const long n = syscall(SYS_io_submit, context, long(batch.size()) - long(submitted), batch.data() + submitted);
            if (n <= 0) {
                error = n < 0 ? -errno : -EIO;
                break;
            }
            submitted += n;
        }
        return submitted;
    };
    std::int64_t done = 0, inFlight = 0, failure = 0;
    std::vector<std::size_t> slots(static_cast<std::size_t>(depth));
    for (std::size_t i = 0; i < slots.size(); ++i)
        slots[i] = i;
    inFlight = submit(slots, failure);
    bool stopping = failure != 0;
    while (inFlight > 0) {
        timespec wait{0, 100'000'000}; // look at the clock at least every 100 ms
        const long n = syscall(SYS_io_getevents, context, 1, long(inFlight), events.data(), &wait);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            failure = -errno;
            break;
        }
        stopping = stopping || std::chrono::steady_clock::now() >= deadline;
        slots.clear();
        for (long i = 0; i < n; ++i) {
            const io_event &event = events[std::size_t(i)];
            --inFlight;
            if (event.res != kBlock) {
                failure = event.res < 0 ? event.res : -EIO;
                stopping = true;
                continue;
            }
            ++done;
            slots.push_back(std::size_t(event.data));
        }
        if (!stopping && !slots.empty()) {
            inFlight += submit(slots, failure);
            stopping = failure != 0;
        }
    }
    syscall(SYS_io_destroy, context); // also cancels anything left after an error
    std::free(memory);
    return failure != 0 ? failure : done;
}

} // namespace

Result<StorageMeasurement> measureRandomReads(const std::string &path, double seconds, int queueDepth)
{
    auto device = storageDeviceOf(path);
    if (!device)
        return device.error();
    const std::string inMemory = "its file system cannot read around the page cache (O_DIRECT), so its reads would "
                                 "measure memory, not a storage device";
    // tmpfs and ramfs accept O_DIRECT on recent kernels, and their files are memory all the same.
    struct statfs fs{};
    if (::statfs(path.c_str(), &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC))
        return Error::unsupported(path, inMemory);
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (err == EINVAL)
            return Error::unsupported(path, inMemory);
        return Error::io(path, std::strerror(err));
    }
    struct stat st{};
    ::fstat(fd, &st);
    const std::uint64_t blocks = std::uint64_t(st.st_size) / kBlock;
    if (blocks < 16) {
        ::close(fd);
        return Error::invalid(path, "is too small to measure random reads (" + std::to_string(st.st_size) +
                                        " bytes; use a file of a few hundred MiB or more, larger than any device cache)");
    }
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    bool setupFailed = false;
    const std::int64_t reads = aioRandomReads(fd, blocks, queueDepth, deadline, setupFailed);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::close(fd);
    if (setupFailed)
        return Error::unsupported(path, std::string("kernel asynchronous I/O cannot start here: ") + std::strerror(int(-reads)) +
                                            (reads == -EAGAIN ? " (the system-wide limit fs.aio-max-nr is reached)" : ""));
    if (reads < 0)
        return Error::io(path, std::string("random reads failed: ") + std::strerror(int(-reads)));
    StorageMeasurement m;
    m.device = *device;
    m.randomReadIops = double(reads) / elapsed;
    m.queueDepth = queueDepth;
    m.blockBytes = kBlock;
    m.seconds = elapsed;
    m.file = std::filesystem::absolute(path).string();
    m.measuredAt = utcNow();
    return m;
}

std::string storageRecordsPath()
{
    if (const char *p = std::getenv("SLUICE_STORAGE_RECORDS"); p && *p)
        return p;
    if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return std::string(x) + "/sluice/storage.json";
    const char *home = std::getenv("HOME");
    return std::string(home && *home ? home : ".") + "/.cache/sluice/storage.json";
}

Status rememberStorage(const StorageMeasurement &measurement)
{
    MutexLock lock(g_recordsMutex);
    nlohmann::json records = loadRecords();
    records[measurement.device.id] = toJson(measurement);
    const std::string path = storageRecordsPath();
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    auto file = AtomicFile::create(path);
    if (!file)
        return file.error();
    if (auto s = file->write(records.dump(1) + "\n"); !s.ok())
        return s;
    if (auto s = file->commit(); !s.ok())
        return s;
    g_records = std::move(records);
    return Status::success();
}

std::optional<StorageMeasurement> knownStorage(const std::string &path)
{
    auto device = storageDeviceOf(path);
    if (!device)
        return std::nullopt;
    MutexLock lock(g_recordsMutex);
    if (!g_records)
        g_records = loadRecords();
    const auto it = g_records->find(device->id);
    if (it == g_records->end())
        return std::nullopt;
    return fromJson(device->id, *it);
}

void forgetStorageRecords()
{
    MutexLock lock(g_recordsMutex);
    g_records.reset();
}

} // namespace sluice
