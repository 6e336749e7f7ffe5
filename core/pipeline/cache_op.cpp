// cache: the first complete pass over the input is kept (in memory, or in a file) and every later
// pass replays it, as tf.data cache. A pass that stops early keeps nothing, so a cache is never
// partial. A cache file is written atomically and read back zero-copy from a mapping; it records
// the element spec it was written for and is refused if the pipeline changed.
#include "pipeline/build_context.h"
#include "pipeline/op_registry.h"

#include "io/atomic_file.h"

#include <cstring>
#include <filesystem>
#include <mutex>

namespace sluice::pipeline {
namespace {

constexpr char kMagic[] = "SLUICE-CACHE 1\n";

struct CacheState
{
    std::mutex mutex;
    std::shared_ptr<const std::vector<Element>> elements; // GUARDED_BY(mutex): set once a pass completed
};

class ReplayIterator final : public Iterator
{
public:
    explicit ReplayIterator(std::shared_ptr<const std::vector<Element>> elements) : m_elements(std::move(elements)) {}
    Result<Poll> next(Element &out) override
    {
        if (m_i >= m_elements->size())
            return Poll::End;
        out = (*m_elements)[m_i++];
        return Poll::Ready;
    }

private:
    std::shared_ptr<const std::vector<Element>> m_elements;
    std::size_t m_i = 0;
};

void append(std::vector<std::byte> &buffer, const void *data, std::size_t n)
{
    const auto *p = static_cast<const std::byte *>(data);
    buffer.insert(buffer.end(), p, p + n);
}

std::vector<std::byte> serialize(const Element &e)
{
    std::vector<std::byte> out;
    for (const auto &t : e.tensors) {
        const std::uint32_t ndim = std::uint32_t(t.shape().size());
        append(out, &ndim, 4);
        append(out, t.shape().data(), ndim * sizeof(std::int64_t));
        if (t.isString()) {
            const std::uint64_t n = t.stringValues().size();
            append(out, &n, 8);
            for (const auto &s : t.stringValues()) {
                const std::uint64_t len = s.size();
                append(out, &len, 8);
                append(out, s.data(), s.size());
            }
        } else {
            append(out, t.data(), std::size_t(t.nbytes()));
        }
    }
    return out;
}

// Records a pass; hands the elements (or the file) over only when the pass reaches its end.
class RecordIterator final : public Iterator
{
public:
    RecordIterator(std::unique_ptr<Iterator> input, std::shared_ptr<CacheState> state, std::optional<AtomicFile> file)
        : m_input(std::move(input)), m_state(std::move(state)), m_file(std::move(file))
    {
    }
    Result<Poll> next(Element &out) override
    {
        auto r = m_input->next(out);
        if (!r.ok() || *r == Poll::Pending)
            return r;
        if (*r == Poll::Ready) {
            if (m_file) {
                const auto bytes = serialize(out);
                if (Status s = m_file->write(bytes); !s.ok())
                    return s.error();
            } else {
                m_recorded.push_back(out);
            }
            return r;
        }
        if (m_file) {
            if (Status s = m_file->commit(); !s.ok())
                return s.error();
            m_file.reset();
        } else {
            std::lock_guard lock(m_state->mutex);
            if (!m_state->elements)
                m_state->elements = std::make_shared<const std::vector<Element>>(std::move(m_recorded));
        }
        return Poll::End;
    }

private:
    std::unique_ptr<Iterator> m_input;
    std::shared_ptr<CacheState> m_state;
    std::optional<AtomicFile> m_file;
    std::vector<Element> m_recorded;
};

class FileReplayIterator final : public Iterator
{
public:
    FileReplayIterator(std::shared_ptr<const MappedFile> file, std::size_t offset, const ElementSpec &spec)
        : m_file(std::move(file)), m_offset(offset), m_spec(spec)
    {
    }
    Result<Poll> next(Element &out) override
    {
        const auto bytes = m_file->bytes();
        if (m_offset == bytes.size())
            return Poll::End;
        out.tensors.clear();
        for (const auto &f : m_spec.features) {
            std::uint32_t ndim;
            if (!read(&ndim, 4) || ndim != f.shape.size())
                return corrupt();
            Shape shape(ndim);
            if (!read(shape.data(), ndim * 8))
                return corrupt();
            if (f.type.isString) {
                std::uint64_t n;
                if (!read(&n, 8) || n != elementCount(shape))
                    return corrupt();
                std::vector<std::string> values(n);
                for (auto &s : values) {
                    std::uint64_t len;
                    if (!read(&len, 8) || len > bytes.size() - m_offset)
                        return corrupt();
                    s.assign(reinterpret_cast<const char *>(bytes.data() + m_offset), len);
                    m_offset += len;
                }
                out.tensors.push_back(Tensor::strings(std::move(shape), std::move(values)));
                continue;
            }
            const std::uint64_t n = elementCount(shape) * itemSize(f.type.dtype);
            if (n > bytes.size() - m_offset)
                return corrupt();
            out.tensors.push_back(Tensor::view(f.type.dtype, std::move(shape), SharedBytes{m_file, {bytes.data() + m_offset, n}}));
            m_offset += n;
        }
        return Poll::Ready;
    }

private:
    bool read(void *dst, std::size_t n)
    {
        if (n == 0)
            return true; // a scalar's empty shape: nothing to copy (and dst may be null)
        if (n > m_file->size() - m_offset)
            return false;
        std::memcpy(dst, m_file->bytes().data() + m_offset, n);
        m_offset += n;
        return true;
    }
    Error corrupt() const { return Error::corrupt(m_file->path(), "cache file is damaged at byte " + std::to_string(m_offset) + "; delete it"); }

    std::shared_ptr<const MappedFile> m_file;
    std::size_t m_offset;
    const ElementSpec &m_spec;
};

class CacheDataset final : public Dataset
{
public:
    CacheDataset(StageStats *stats, DatasetPtr input, std::string path)
        : Dataset(input->spec(), stats), m_input(std::move(input)), m_path(std::move(path)), m_state(std::make_shared<CacheState>())
    {
    }
    std::int64_t cardinality() const override { return m_input->cardinality(); }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        if (m_path.empty()) {
            std::lock_guard lock(m_state->mutex);
            if (m_state->elements)
                return std::make_unique<ReplayIterator>(m_state->elements);
            return std::make_unique<RecordIterator>(m_input->makeIterator(context), m_state, std::nullopt);
        }
        const std::string header = std::string(kMagic) + spec().text() + "\n";
        if (std::filesystem::exists(m_path)) {
            auto file = MappedFile::open(m_path);
            if (!file.ok())
                return failing(file.error());
            const auto bytes = (*file)->bytes();
            if (bytes.size() < header.size() || std::memcmp(bytes.data(), header.data(), header.size()) != 0)
                return failing(Error::invalid(m_path, "cache file was written by a different pipeline (its elements differ from " +
                                                          spec().text() + "); delete it to rebuild the cache"));
            return std::make_unique<FileReplayIterator>(std::move(file).value(), header.size(), spec());
        }
        auto file = AtomicFile::create(m_path);
        if (!file.ok())
            return failing(file.error());
        if (Status s = file->write(header); !s.ok())
            return failing(s.error());
        return std::make_unique<RecordIterator>(m_input->makeIterator(context), m_state, std::move(file).value());
    }

private:
    static std::unique_ptr<Iterator> failing(Error error)
    {
        class Failing final : public Iterator
        {
        public:
            explicit Failing(Error e) : m_error(std::move(e)) {}
            Result<Poll> next(Element &) override { return m_error; }

        private:
            Error m_error;
        };
        return std::make_unique<Failing>(std::move(error));
    }

    DatasetPtr m_input;
    std::string m_path;
    std::shared_ptr<CacheState> m_state;
};

std::shared_ptr<Dataset> buildCache(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::string filename = params.string("filename", "");
    return std::make_shared<CacheDataset>(context.statsFor(params.node()), inputs.at(0),
                                          filename.empty() ? "" : context.project().resolvePath(filename));
}

} // namespace

void registerCacheOp(std::vector<OpInfo> &ops)
{
    ops.push_back({"cache", "performance",
                   "Keeps the first complete pass (in memory, or in filename) and replays it on later passes, as tf.data "
                   "cache. A pass that stops early caches nothing.",
                   {{"filename", "path", "", "a cache file, reused by later runs while the pipeline is unchanged (absent or \"\": the cache is in memory)"}},
                   1, 1, buildCache});
}

} // namespace sluice::pipeline
