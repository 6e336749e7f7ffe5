// cache: the first complete pass over the input is kept (in memory, or in a file) and every later
// pass replays it, as tf.data cache. A pass that stops early keeps nothing, so a cache is never
// partial. A cache file is written atomically and read back zero-copy from a mapping.
//
// A cache file is never stale: its header holds what it was written from (cache_fingerprint.h:
// the elements' spec, the stages upstream and their parameters, their seeds, the files they
// read), and a trailer written last says it is complete. A file whose facts differ from the
// current ones, or that is cut short, is rebuilt (a note says why) or, with
// "on_mismatch": "error", refused with the reason.
//
// The file's format is io/writers/cache_file.h's.
#include "pipeline/engine/build_context.h"
#include "pipeline/ops/cache_fingerprint.h"
#include "pipeline/engine/op_registry.h"

#include "io/writers/atomic_file.h"
#include "io/writers/cache_file.h"
#include "util/mutex.h"

#include <array>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace sluice::pipeline {
namespace {

struct CacheState
{
    Mutex mutex;
    std::shared_ptr<const std::vector<Element>> elements GUARDED_BY(mutex); // set once a pass completed
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
    RecordIterator(StageStats *stats, std::unique_ptr<Iterator> input, std::shared_ptr<CacheState> state, std::optional<AtomicFile> file,
                   std::uint64_t headerSize = 0)
        : m_stats(stats), m_input(std::move(input)), m_state(std::move(state)), m_file(std::move(file)), m_headerSize(headerSize)
    {
    }
    ~RecordIterator() override
    {
        // Left before the end of its pass: what it recorded is dropped; said, as tf.data warns.
        if (!m_complete && m_stats)
            m_stats->cacheCutShort.store(true);
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
                ++m_count;
            } else {
                m_recorded.push_back(out);
            }
            return r;
        }
        if (m_file) {
            // The end mark last: a file without it was cut short and is never replayed.
            if (Status s = m_file->write(cacheTrailer(m_count, m_headerSize)); !s.ok())
                return s.error();
            if (Status s = m_file->commit(); !s.ok())
                return s.error();
            m_file.reset();
        } else {
            MutexLock lock(m_state->mutex);
            if (!m_state->elements)
                m_state->elements = std::make_shared<const std::vector<Element>>(std::move(m_recorded));
        }
        m_complete = true;
        return Poll::End;
    }

private:
    StageStats *m_stats;
    std::unique_ptr<Iterator> m_input;
    std::shared_ptr<CacheState> m_state;
    std::optional<AtomicFile> m_file;
    bool m_complete = false;
    std::uint64_t m_headerSize = 0, m_count = 0;
    std::vector<Element> m_recorded;
};

class FileReplayIterator final : public Iterator
{
public:
    FileReplayIterator(std::shared_ptr<const MappedFile> file, std::size_t offset, std::size_t end, const ElementSpec &spec)
        : m_file(std::move(file)), m_offset(offset), m_end(end), m_spec(spec)
    {
        for (const auto &f : spec.features)
            m_features.push_back({f.shape.size(), f.type.isString, f.type.isString ? 1 : itemSize(f.type.dtype)});
    }
    Result<Poll> next(Element &out) override
    {
        if (m_offset == m_end)
            return Poll::End;
        auto record = readCacheRecord(m_file->bytes(), m_offset, m_end, m_features);
        if (!record)
            return Error::corrupt(m_file->path(), "cache file is damaged at byte " + std::to_string(m_offset) + "; delete it");
        out.tensors.clear();
        for (std::size_t i = 0; i < record->size(); ++i) {
            CacheTensorRecord &t = (*record)[i];
            if (m_spec.features[i].type.isString)
                out.tensors.push_back(Tensor::strings(Shape(t.shape.begin(), t.shape.end()), std::move(t.strings)));
            else
                out.tensors.push_back(Tensor::view(m_spec.features[i].type.dtype, Shape(t.shape.begin(), t.shape.end()), SharedBytes{m_file, t.data}));
        }
        return Poll::Ready;
    }

private:
    std::shared_ptr<const MappedFile> m_file;
    std::size_t m_offset, m_end;
    const ElementSpec &m_spec;
    std::vector<CacheFeatureSpec> m_features;
};

class CacheDataset final : public Dataset
{
public:
    CacheDataset(StageStats *stats, DatasetPtr input, std::string path, std::vector<std::string> facts)
        : Dataset(input->spec(), stats), m_input(std::move(input)), m_path(std::move(path)), m_facts(std::move(facts)),
          m_state(std::make_shared<CacheState>())
    {
    }

    // Why the file at the cache's path cannot be replayed now; empty when it can (or is absent).
    static std::string staleness(const std::string &path, const std::vector<std::string> &facts)
    {
        if (!std::filesystem::exists(path))
            return {};
        auto file = MappedFile::open(path);
        if (!file.ok())
            return file.error().reason;
        auto layout = readCacheLayout(path, (*file)->bytes());
        if (!layout.ok())
            return layout.error().reason;
        return fingerprintDifference(layout->facts, facts);
    }
    std::int64_t cardinality() const override { return m_input->cardinality(); }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        if (m_path.empty()) {
            MutexLock lock(m_state->mutex);
            if (m_state->elements)
                return std::make_unique<ReplayIterator>(m_state->elements);
            return std::make_unique<RecordIterator>(stats(), m_input->makeIterator(context), m_state, std::nullopt);
        }
        // A file written from the same facts, complete, is replayed; anything else is written
        // anew (the build said why, or refused it with on_mismatch "error"), replacing it only
        // once the pass is complete.
        if (std::filesystem::exists(m_path)) {
            auto file = MappedFile::open(m_path);
            if (!file.ok())
                return failingIterator(file.error());
            if (auto layout = readCacheLayout(m_path, (*file)->bytes()); layout.ok() && layout->facts == m_facts)
                return std::make_unique<FileReplayIterator>(std::move(file).value(), layout->payloadBegin, layout->payloadEnd, spec());
        }
        const std::string header = cacheHeader(m_facts);
        auto file = AtomicFile::create(m_path);
        if (!file.ok())
            return failingIterator(file.error());
        if (Status s = file->write(header); !s.ok())
            return failingIterator(s.error());
        return std::make_unique<RecordIterator>(stats(), m_input->makeIterator(context), m_state, std::move(file).value(), header.size());
    }

private:
    DatasetPtr m_input;
    std::string m_path;
    std::vector<std::string> m_facts;
    std::shared_ptr<CacheState> m_state;
};

std::shared_ptr<Dataset> buildCache(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::string filename = params.string("filename", "");
    const std::string onMismatch = params.choice("on_mismatch", std::string("rebuild"), {"rebuild", "error"});
    StageStats *stats = context.statsFor(params.node());
    if (filename.empty()) {
        if (params.has("on_mismatch"))
            params.fail("on_mismatch", "applies to a cache file only: set filename (a cache in memory is filled anew by every run)");
        return std::make_shared<CacheDataset>(stats, inputs.at(0), "", std::vector<std::string>{});
    }
    const std::string path = context.project().resolvePath(filename);
    std::vector<std::string> facts = cacheFingerprint(context, params.node().id, inputs.at(0)->spec());
    if (const std::string why = CacheDataset::staleness(path, facts); !why.empty()) {
        if (onMismatch == "error")
            params.fail("filename", filename + " cannot be replayed: " + why + " (delete it, or set on_mismatch to \"rebuild\")");
        const std::string note = "rebuilding " + filename + ": " + why;
        stats->note = note;
        context.addNote("cache '" + params.node().id + "': " + note);
    }
    return std::make_shared<CacheDataset>(stats, inputs.at(0), path, std::move(facts));
}

} // namespace

void registerCacheOp(std::vector<OpInfo> &ops)
{
    ops.push_back({"cache", "performance",
                   "Keeps the first complete pass (in memory, or in filename) and replays it on later passes, as tf.data "
                   "cache. A pass that stops early caches nothing.",
                   {{"filename", "path", "",
                     "a cache file, reused by later runs while everything upstream is unchanged: stages, parameters, seeds and "
                     "the files read (absent or \"\": the cache is in memory)"},
                    {"on_mismatch", "enum:rebuild|error", "rebuild",
                     "a cache file written from something else, or cut short: rebuilt (a note says why) or an error"}},
                   1, 1, buildCache});
}

} // namespace sluice::pipeline
