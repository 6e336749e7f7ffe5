#pragma once
// What the storage under a file can do: its random 4 KiB read rate at a queue depth, measured
// around the page cache (O_DIRECT, kernel AIO keeping the queue full from one thread, as fio's
// libaio engine does) by `sluice bench storage FILE` and remembered per device, so
// that a profile of a storage-bound pipeline can say how close it runs to the device's limit.
//
// The records live in one JSON file per user ($SLUICE_STORAGE_RECORDS, else
// $XDG_CACHE_HOME/sluice/storage.json, else ~/.cache/sluice/storage.json), keyed by the
// device's major:minor numbers.
//
// Threading: any thread; measureRandomReads blocks its caller for `seconds`.

#include "io/error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace sluice {

struct StorageDevice
{
    std::string id;   // "253:0": the block device's major:minor, as st_dev gives it
    std::string name; // "vda" (the kernel's name; the partition's disk where the file sits on a partition)
};

// The block device a file lives on.
Result<StorageDevice> storageDeviceOf(const std::string &path);

struct StorageMeasurement
{
    StorageDevice device;
    double randomReadIops = 0; // 4 KiB reads per second, at random offsets
    int queueDepth = 0;        // reads in flight (kernel AIO, as fio's libaio engine)
    int blockBytes = 4096;
    double seconds = 0;
    std::string file;       // what was read
    std::string measuredAt; // ISO 8601, UTC
};

// Random reads of `blockBytes` at `queueDepth` for `seconds` over `path`, bypassing the page
// cache. A file system that cannot (tmpfs: its files are memory) is an error saying so.
Result<StorageMeasurement> measureRandomReads(const std::string &path, double seconds, int queueDepth);

// Where the records are kept.
std::string storageRecordsPath();
// Adds or replaces the record of the measured device.
Status rememberStorage(const StorageMeasurement &measurement);
// The record of the device `path` lives on, if it was measured. The records file is read once
// per process (a build looks up every file of a glob); a damaged file or record counts as none.
std::optional<StorageMeasurement> knownStorage(const std::string &path);
// Reads the records file again at the next lookup (another process may have measured since).
void forgetStorageRecords();

} // namespace sluice
