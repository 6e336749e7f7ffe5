#include "io/storage_probe.h"

#include "io/atomic_file.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread>
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
{
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
}

// The records file, read once per process and re-read after a write (a build looks records up
// for every file of a glob).
std::mutex g_recordsMutex;
std::optional<nlohmann::json> g_records; // GUARDED_BY(g_recordsMutex)

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

Result<StorageMeasurement> measureRandomReads(const std::string &path, double seconds, int queueDepth)
{
    constexpr int kBlock = 4096;
    auto device = storageDeviceOf(path);
    if (!device)
        return device.error();
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (err == EINVAL)
            return Error::unsupported(path, "its file system cannot read around the page cache (O_DIRECT), so its reads would "
                                            "measure memory, not a storage device");
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
    std::atomic<std::uint64_t> reads{0};
    std::atomic<int> failure{0};
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    std::vector<std::thread> readers;
    for (int t = 0; t < queueDepth; ++t) {
        readers.emplace_back([&, t] {
            void *buffer = nullptr;
            if (posix_memalign(&buffer, kBlock, kBlock) != 0) {
                failure.store(ENOMEM);
                return;
            }
            std::mt19937_64 rng(0x5eed + std::uint64_t(t));
            std::uniform_int_distribution<std::uint64_t> pick(0, blocks - 1);
            std::uint64_t done = 0;
            while (std::chrono::steady_clock::now() < deadline && !failure.load(std::memory_order_relaxed)) {
                if (::pread(fd, buffer, kBlock, off_t(pick(rng) * kBlock)) != kBlock) {
                    failure.store(errno ? errno : EIO);
                    break;
                }
                ++done;
            }
            reads.fetch_add(done);
            std::free(buffer);
        });
    }
    for (auto &r : readers)
        r.join();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::close(fd);
    if (const int err = failure.load())
        return Error::io(path, std::string("random read failed: ") + std::strerror(err));
    StorageMeasurement m;
    m.device = *device;
    m.randomReadIops = double(reads.load()) / elapsed;
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
    std::lock_guard lock(g_recordsMutex);
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
    std::lock_guard lock(g_recordsMutex);
    if (!g_records)
        g_records = loadRecords();
    const auto it = g_records->find(device->id);
    if (it == g_records->end())
        return std::nullopt;
    return fromJson(device->id, *it);
}

} // namespace sluice
