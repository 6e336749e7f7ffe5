#include "io/writers/dataset_publish.h"

#include "io/writers/shard_writer.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace sluice {

namespace fs = std::filesystem;

namespace {

std::string join(const std::string &folder, const std::string &name) { return (fs::path(folder) / name).string(); }

std::string errnoText(const char *what) { return std::string(what) + ": " + std::strerror(errno); }

// The renames are durable only once the folder's entries are on disk.
void syncFolder(const std::string &folder)
{
    if (const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

// Every file a manifest names (shard files; not the manifest itself).
std::set<std::string> filesOf(const DatasetManifest &manifest)
{
    std::set<std::string> names;
    for (const auto &shard : manifest.shards)
        names.insert(shard.files.begin(), shard.files.end());
    return names;
}

} // namespace

Result<std::string> createStagingFolder(const std::string &folder)
{
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        return Error::io(folder, "cannot create folder: " + ec.message());
    if (!fs::is_directory(folder, ec))
        return Error::io(folder, "is not a folder");
    // Unique within the process (a counter) and between processes (the pid); mkdir refuses a
    // name that exists, so two writers never share one.
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
        const std::string name = ".sluice-partial-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
        const std::string path = join(folder, name);
        if (::mkdir(path.c_str(), 0777) == 0)
            return path;
        if (errno != EEXIST)
            return Error::io(path, errnoText("cannot create the staging folder"));
    }
    return Error::io(folder, "cannot find a free name for a staging folder");
}

Status publishDataset(const std::string &staging, const std::string &folder, bool overwrite)
{
    auto manifest = readDatasetManifest(staging);
    if (!manifest)
        return manifest.error();
    const std::set<std::string> names = filesOf(*manifest);

    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        return Error::io(folder, "cannot create folder: " + ec.message());
    const std::string manifestPath = join(folder, kDatasetManifestName);
    const bool hadManifest = fs::exists(manifestPath, ec);
    if (!overwrite) {
        if (hadManifest)
            return Error::invalid(folder, "already holds a saved dataset (manifest.json); overwrite it or choose another folder");
        for (const auto &name : names)
            if (fs::exists(join(folder, name), ec))
                return Error::invalid(folder, "already holds '" + name + "'; overwrite it or choose another folder");
    }

    // The files of the dataset being replaced, read before its manifest goes.
    std::set<std::string> stale;
    if (hadManifest)
        if (auto old = readDatasetManifest(folder))
            stale = filesOf(*old);
    if (hadManifest && ::unlink(manifestPath.c_str()) != 0 && errno != ENOENT)
        return Error::io(manifestPath, errnoText("cannot remove the old manifest"));
    for (const auto &name : names) {
        const std::string to = join(folder, name);
        if (::rename(join(staging, name).c_str(), to.c_str()) != 0)
            return Error::io(to, errnoText("cannot move the shard into place"));
        stale.erase(name);
    }
    syncFolder(folder);
    // The manifest last: from here on the folder holds the complete new dataset.
    if (::rename(join(staging, kDatasetManifestName).c_str(), manifestPath.c_str()) != 0)
        return Error::io(manifestPath, errnoText("cannot move the manifest into place"));
    syncFolder(folder);
    for (const auto &name : stale)
        ::unlink(join(folder, name).c_str());
    removeStagingFolder(staging);
    return Status::success();
}

void removeStagingFolder(const std::string &staging)
{
    std::error_code ec;
    fs::remove_all(staging, ec);
}

} // namespace sluice
