#include "train/loop/checkpoint.h"

#include "io/formats/npz_file.h"
#include "io/writers/npz_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace sluice::train {

namespace fs = std::filesystem;

Status saveCheckpoint(const std::string &path, const Model &model, std::span<const float> weights, const std::vector<OptimizerSlot> &slots,
                      const CheckpointState &state)
{
    auto writer = NpzWriter::create(path);
    if (!writer)
        return writer.error();
    for (const auto &p : model.parameters()) {
        std::vector<std::uint64_t> shape(p.shape.begin(), p.shape.end());
        if (auto s = writer->add(p.name, TypeDescr{DType::Float32}, shape, std::as_bytes(weights.subspan(p.offset, p.count))); !s.ok())
            return s;
    }
    for (const auto &slot : slots) {
        const std::uint64_t n = slot.values.size();
        if (auto s = writer->add("optimizer/" + slot.name, TypeDescr{DType::Float32}, std::span(&n, 1), std::as_bytes(std::span(slot.values))); !s.ok())
            return s;
    }
    const std::string text = state.toJson().dump();
    const std::uint64_t n = text.size();
    if (auto s = writer->add("state", TypeDescr{DType::UInt8}, std::span(&n, 1), std::as_bytes(std::span(text.data(), text.size()))); !s.ok())
        return s;
    return writer->finish();
}

Result<CheckpointState> loadCheckpoint(const std::string &path, const Model &model, std::span<float> weights, std::vector<OptimizerSlot> &slots)
{
    if (auto s = model.loadWeights(path, weights); !s.ok())
        return s.error();
    auto npz = NpzFile::open(path);
    if (!npz)
        return npz.error();
    for (auto &slot : slots) {
        auto array = npz->load("optimizer/" + slot.name);
        if (!array)
            return Error::corrupt(path, "has no optimizer state '" + slot.name + "' (another optimizer?)");
        const auto native = array->toNative();
        if (native.dtype() != DType::Float32 || native.count() != slot.values.size())
            return Error::corrupt(path, "optimizer state '" + slot.name + "' does not fit this model");
        std::copy_n(reinterpret_cast<const float *>(native.data().data()), slot.values.size(), slot.values.begin());
    }
    auto stateArray = npz->load("state");
    if (!stateArray)
        return Error::corrupt(path, "has no training state");
    const auto bytes = stateArray->data();
    auto state = nlohmann::json::parse(reinterpret_cast<const char *>(bytes.data()), reinterpret_cast<const char *>(bytes.data()) + bytes.size(), nullptr,
                                       false);
    if (state.is_discarded() || !state.is_object())
        return Error::corrupt(path, "its training state is not valid JSON");
    return CheckpointState::fromJson(state, path);
}

std::string checkpointPath(const std::string &dir, std::int64_t step)
{
    char name[64];
    std::snprintf(name, sizeof name, "ckpt-%010lld.npz", static_cast<long long>(step));
    return (fs::path(dir) / name).string();
}

std::vector<std::string> listCheckpoints(const std::string &dir)
{
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.size() == 19 && name.rfind("ckpt-", 0) == 0 && name.ends_with(".npz"))
            found.push_back(entry.path().string());
    }
    std::sort(found.rbegin(), found.rend());
    return found;
}

void pruneCheckpoints(const std::string &dir, int keep)
{
    const auto all = listCheckpoints(dir);
    std::error_code ec;
    for (std::size_t i = std::size_t(std::max(keep, 0)); i < all.size(); ++i)
        fs::remove(all[i], ec);
}

namespace {

std::string gib(std::uint64_t bytes)
{
    char text[32];
    if (bytes >= (std::uint64_t(1) << 30))
        std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(std::uint64_t(1) << 30));
    else
        std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1 << 20));
    return text;
}

} // namespace

Status checkCheckpointRoom(const std::string &dir, std::uint64_t bytesEach, int count, std::optional<std::uint64_t> availableBytes)
{
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        return Error::invalid(dir, "cannot hold the run's checkpoints: the folder cannot be created (" + ec.message() + ")");
    const std::string probe = dir + "/.sluice-write-check-" + std::to_string(::getpid());
    std::FILE *f = std::fopen(probe.c_str(), "wb");
    if (!f)
        return Error::invalid(dir, std::string("cannot hold the run's checkpoints: the folder is not writable (") + std::strerror(errno) + ")");
    const bool written = std::fputc('s', f) != EOF;
    const bool closed = std::fclose(f) == 0;
    std::remove(probe.c_str());
    if (!written || !closed)
        return Error::invalid(dir, "cannot hold the run's checkpoints: writing to the folder failed");
    if (count <= 0)
        return Status::success();
    std::uint64_t available = 0;
    if (availableBytes) {
        available = *availableBytes;
    } else {
        const auto space = fs::space(dir, ec);
        if (ec)
            return Status::success(); // a file system that does not say: the writes will tell
        available = space.available;
    }
    const std::uint64_t needed = bytesEach * std::uint64_t(count);
    if (needed > available)
        return Error::invalid(dir, "has " + gib(available) + " free, and the run keeps up to " + std::to_string(count) + " checkpoint" +
                                       (count == 1 ? "" : "s") + " of " + gib(bytesEach) + " (" + gib(needed) +
                                       "): free space, choose another --out, or lower training.checkpoint.keep");
    return Status::success();
}

} // namespace sluice::train
