// from_files: one element per file, {image: the file's bytes, label, path}, from a list of files
// and globs or from a directory whose sub-folders are the classes, as Keras's
// image_dataset_from_directory lists them (class names in sorted folder order, each class's
// files in sorted order, nested folders included, integer labels). Files are read when their
// element is, so a pass reads only what it uses; the source is random access (global_shuffle,
// shard, take and skip remap positions without reading anything).
#include "pipeline/sources/source_files.h"

#include "pipeline/engine/random_access.h"
#include "pipeline/profile/stage_stats.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sluice::pipeline {
namespace {

namespace fs = std::filesystem;

// The extensions Keras's image_dataset_from_directory lists that decode_image reads.
bool isImageFile(const fs::path &path)
{
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

// Every image file under `folder`, nested folders included, in sorted path order.
std::vector<std::string> imagesUnder(const fs::path &folder)
{
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec) && isImageFile(it->path()))
            files.push_back(it->path().string());
    std::sort(files.begin(), files.end());
    return files;
}

// `"labels": null` (no labels) differs from leaving labels out (inferred from the folders).
bool explicitlyNull(const Params &params, const char *name)
{
    const auto &p = params.node().params;
    return p.is_object() && p.contains(name) && p[name].is_null();
}

struct FileList
{
    std::vector<std::string> files;
    std::vector<std::int64_t> labels; // empty: no label feature
    std::vector<std::string> classNames;
};

FileList fromDirectory(BuildContext &context, Params &params)
{
    const fs::path root = context.project().resolvePath(params.string("directory", std::nullopt));
    std::error_code ec;
    if (!fs::is_directory(root, ec))
        params.fail("directory", "\"" + root.string() + "\" is not a folder");
    FileList list;
    const nlohmann::json *labels = params.raw("labels");
    const bool inferred = !explicitlyNull(params, "labels") && !(labels && labels->is_array());
    if (labels && labels->is_string() && *labels != "inferred")
        params.fail("labels", "must be \"inferred\" (from the sub-folders), a list of integer labels, or null (no labels)");
    if (inferred) {
        std::vector<std::string> found;
        for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
            if (it->is_directory(ec))
                found.push_back(it->path().filename().string());
        std::sort(found.begin(), found.end());
        list.classNames = params.has("class_names") ? params.strings("class_names", std::nullopt) : found;
        for (const auto &name : list.classNames)
            if (std::find(found.begin(), found.end(), name) == found.end())
                params.fail("class_names", "\"" + name + "\" is not a sub-folder of " + root.string());
        if (list.classNames.empty())
            params.fail("directory", root.string() + " has no sub-folders, one per class (or set labels to null or a list)");
        for (std::size_t c = 0; c < list.classNames.size(); ++c)
            for (auto &file : imagesUnder(root / list.classNames[c])) {
                list.files.push_back(std::move(file));
                list.labels.push_back(std::int64_t(c));
            }
    } else {
        if (params.has("class_names"))
            params.fail("class_names", "is only used with labels \"inferred\"");
        list.files = imagesUnder(root);
    }
    if (list.files.empty())
        params.fail("directory", "no .jpg, .jpeg or .png files under " + root.string());
    return list;
}

FileList buildFileList(BuildContext &context, Params &params)
{
    if (params.has("files") == params.has("directory"))
        params.fail(params.has("files") ? "directory" : "files", "give either files (paths and glob patterns) or directory (one sub-folder per class)");
    FileList list = params.has("directory") ? fromDirectory(context, params)
                                            : FileList{expandSourceFiles(context, params, "files", *params.raw("files")), {}, {}};
    if (params.has("files") && params.has("class_names"))
        params.fail("class_names", "is only used with a directory");
    const nlohmann::json *labels = params.raw("labels");
    if (labels && labels->is_array()) {
        list.labels.clear();
        for (const auto &l : *labels) {
            if (!l.is_number_integer())
                params.fail("labels", "must hold integers, got " + l.dump());
            list.labels.push_back(l.get<std::int64_t>());
        }
        if (list.labels.size() != list.files.size())
            params.fail("labels", "has " + std::to_string(list.labels.size()) + " labels for " + std::to_string(list.files.size()) +
                                      " files (one per file, in sorted path order)");
    } else if (labels && !labels->is_null() && !labels->is_string()) {
        params.fail("labels", "must be \"inferred\", a list of integers or null");
    } else if (params.has("files") && labels && labels->is_string()) {
        params.fail("labels", "\"inferred\" needs a directory of class sub-folders");
    }
    return list;
}

class FileRows final : public RowSource
{
public:
    FileRows(FileList list, bool skipUnreadable, StageStats *stats) : m_list(std::move(list)), m_skip(skipUnreadable), m_stats(stats) {}

    std::uint64_t rowCount() const override { return m_list.files.size(); }
    // Only the label is fixed-size; batch never gathers a source with string features.
    void gather(std::size_t feature, std::span<const std::uint64_t> rows, std::byte *out) const override
    {
        if (feature != 1 || m_list.labels.empty())
            return;
        auto *labels = reinterpret_cast<std::int64_t *>(out);
        for (std::size_t i = 0; i < rows.size(); ++i)
            labels[i] = m_list.labels[std::size_t(rows[i])];
    }
    Result<Element> element(std::uint64_t row) const override
    {
        const std::string &path = m_list.files[std::size_t(row)];
        std::string bytes;
        if (auto error = readWhole(path, bytes)) {
            if (!m_skip)
                return *error;
            m_stats->recordSkip(error->message());
            return Element{};
        }
        Element e;
        e.tensors.push_back(Tensor::strings({}, {std::move(bytes)}));
        if (!m_list.labels.empty())
            e.tensors.push_back(Tensor::scalar<std::int64_t>(m_list.labels[std::size_t(row)]));
        e.tensors.push_back(Tensor::strings({}, {path}));
        return e;
    }

private:
    static std::optional<Error> readWhole(const std::string &path, std::string &out)
    {
        // Only a regular file of a sane size is read: a folder or a device named like a picture
        // would otherwise report any size at all.
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return Error::io(path, std::string("cannot open: ") + std::strerror(errno));
        struct stat st{};
        std::optional<Error> error;
        if (::fstat(fd, &st) != 0)
            error = Error::io(path, std::string("cannot stat: ") + std::strerror(errno));
        else if (!S_ISREG(st.st_mode))
            error = Error::io(path, "not a regular file");
        else if (std::uint64_t(st.st_size) > kLargestFile)
            error = Error::unsupported(path, std::to_string(st.st_size) + " bytes: larger than the 1 GiB a single picture may have");
        if (!error) {
            out.resize(std::size_t(st.st_size));
            for (std::size_t done = 0; done < out.size() && !error;) {
                const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
                if (n < 0 && errno == EINTR)
                    continue;
                if (n <= 0)
                    error = Error::io(path, n < 0 ? std::string("read failed: ") + std::strerror(errno) : "the file shrank while it was read");
                else
                    done += std::size_t(n);
            }
        }
        ::close(fd);
        return error;
    }
    static constexpr std::uint64_t kLargestFile = std::uint64_t(1) << 30;

    FileList m_list;
    bool m_skip;
    StageStats *m_stats;
};

class FilesDataset final : public RandomAccessDataset
{
public:
    FilesDataset(ElementSpec spec, StageStats *stats, std::shared_ptr<const RowSource> rows)
        : RandomAccessDataset(std::move(spec), stats), m_rows(std::move(rows))
    {
    }
    const RowSource &rows() const override { return *m_rows; }
    std::shared_ptr<const IndexMap> openPass(bool) const override
    {
        struct Identity final : IndexMap
        {
            std::uint64_t n;
            explicit Identity(std::uint64_t count) : n(count) {}
            std::uint64_t size() const override { return n; }
            std::uint64_t row(std::uint64_t position) const override { return position; }
        };
        return std::make_shared<Identity>(m_rows->rowCount());
    }

private:
    std::shared_ptr<const RowSource> m_rows;
};

std::shared_ptr<Dataset> buildFromFiles(BuildContext &context, Params &params, const Inputs &)
{
    FileList list = buildFileList(context, params);
    const bool skip = params.choice("on_error", "error", {"error", "skip"}) == "skip";
    // Interleave's per-file copies keep one file of the list (MPI workers shard right after this
    // source instead: train/distribute/worker_sharding.cpp).
    context.noteFiles(params.node().id, list.files.size());
    if (auto f = context.fileFilter()) {
        list.files = {list.files.at(*f)};
        if (!list.labels.empty())
            list.labels = {list.labels.at(*f)};
    }
    if (!list.classNames.empty()) {
        std::string names;
        for (const auto &n : list.classNames)
            names += (names.empty() ? "" : ", ") + n;
        context.statsFor(params.node())->note = std::to_string(list.classNames.size()) + " classes: " + names;
    }
    ElementSpec spec;
    spec.features.push_back({"image", ValueType::string(), {}});
    if (!list.labels.empty())
        spec.features.push_back({"label", {DType::Int64, false}, {}});
    spec.features.push_back({"path", ValueType::string(), {}});
    StageStats *stats = context.statsFor(params.node());
    return std::make_shared<FilesDataset>(std::move(spec), stats, std::make_shared<FileRows>(std::move(list), skip, stats));
}

} // namespace

void registerFilesSource(std::vector<OpInfo> &ops)
{
    ops.push_back({"from_files", "sources",
                   "One element per file: {image: its bytes, label, path}, for decode_image to decode. From paths and glob patterns, or "
                   "from a directory with one sub-folder per class as keras.utils.image_dataset_from_directory reads it (class names in "
                   "sorted folder order, integer labels, .jpg/.jpeg/.png files). Random access: a fresh order every epoch and shards "
                   "read only the files they use.",
                   {{"files", "path|glob|list", "", "image files (absent: directory)"},
                    {"directory", "path", "", "a folder with one sub-folder of images per class (absent: files)"},
                    {"labels", "list", "",
                     "\"inferred\" from the sub-folders, a list of integers (one per file, sorted path order), or null: no label feature "
                     "(absent: inferred with a directory, none with files)"},
                    {"class_names", "list", "", "the sub-folders to read, in label order (absent: all, sorted)"},
                    {"on_error", "enum:error|skip", "error", "a file that cannot be read stops the run, naming it, or is left out and counted"}},
                   0, 0, buildFromFiles});
}

} // namespace sluice::pipeline
