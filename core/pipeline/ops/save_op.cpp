// save: tf.data's Dataset.save as a stage. The elements pass through unchanged; the first pass
// that reaches its end is written to a folder of shards with a manifest (io/writers/shard_writer.h),
// which `load` (source_load.cpp) and `sluice convert` read, and TensorFlow reads with
// TFRecordDataset + parse_example (tfrecord) or numpy with np.load (npy). Later passes (epochs)
// only pass through, as `cache` replays: the dataset is written once per run.
//
// A pass is written into a staging folder inside the destination and published when it
// completed (dataset_publish.h): a pass that stops early (take after save, a preview, Ctrl-C,
// an error) writes nothing, and a dataset saved by an earlier run stays as it was. Batches
// (the input has a batch nearer upstream than any unbatch) are saved row by row, so that a
// batched and an unbatched pipeline over the same rows save the same dataset. How rows are
// dealt to shards and written in parallel: save_pass.h.
#include "pipeline/engine/build_context.h"
#include "pipeline/engine/op_registry.h"
#include "pipeline/ops/save_pass.h"
#include "util/mutex.h"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <set>

namespace sluice::pipeline {
namespace {

struct SaveState
{
    Mutex mutex;
    bool saved GUARDED_BY(mutex) = false;   // a pass completed and was published
    bool writing GUARDED_BY(mutex) = false; // a pass is being written (another one at once only passes through)
};

class SaveIterator final : public Iterator
{
public:
    SaveIterator(std::unique_ptr<Iterator> input, std::shared_ptr<SavePass> pass, std::shared_ptr<SaveState> state)
        : m_input(std::move(input)), m_pass(std::move(pass)), m_state(std::move(state))
    {
    }
    ~SaveIterator() override
    {
        // Left before its end (or failed): the pass's tasks stop and what it wrote goes with them.
        if (!m_done)
            m_pass->stop();
        MutexLock lock(m_state->mutex);
        m_state->writing = false;
    }

    Result<Poll> next(Element &out) override
    {
        if (m_done)
            return Poll::End;
        if (!m_inputEnded) {
            auto wait = m_pass->mustWait();
            if (!wait.ok())
                return wait.error();
            if (*wait)
                return Poll::Pending; // the shard writers are behind; woken when they caught up
            auto r = m_input->next(out);
            if (!r.ok() || *r == Poll::Pending)
                return r;
            if (*r == Poll::Ready) {
                if (Status s = m_pass->add(out); !s)
                    return s.error();
                return Poll::Ready;
            }
            m_pass->finishInput();
            m_inputEnded = true;
        }
        auto r = m_pass->complete();
        if (!r.ok() || *r == Poll::Pending)
            return r;
        m_done = true;
        MutexLock lock(m_state->mutex);
        m_state->saved = true;
        return Poll::End;
    }

private:
    std::unique_ptr<Iterator> m_input;
    std::shared_ptr<SavePass> m_pass;
    std::shared_ptr<SaveState> m_state;
    bool m_inputEnded = false;
    bool m_done = false; // committed and published
};

class SaveDataset final : public Dataset
{
public:
    SaveDataset(StageStats *stats, DatasetPtr input, std::shared_ptr<const SaveConfig> config)
        : Dataset(input->spec(), stats), m_input(std::move(input)), m_config(std::move(config)), m_state(std::make_shared<SaveState>())
    {
    }
    // Neither randomAccess() nor chunkedRows(): a batch after save must take its elements from
    // save, not read the source behind it.
    std::int64_t cardinality() const override { return m_input->cardinality(); }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        {
            MutexLock lock(m_state->mutex);
            if (m_state->saved || m_state->writing)
                return m_input->makeIterator(context);
            m_state->writing = true;
        }
        auto pass = SavePass::start(m_config, context);
        if (!pass) {
            {
                MutexLock lock(m_state->mutex);
                m_state->writing = false;
            }
            return failingIterator(pass.error());
        }
        return std::make_unique<SaveIterator>(m_input->makeIterator(context), std::move(*pass), m_state);
    }

private:
    DatasetPtr m_input;
    std::shared_ptr<const SaveConfig> m_config;
    std::shared_ptr<SaveState> m_state;
};

// Whether the elements reaching node `id` are batches: a batch is nearer upstream (along first
// inputs: zip's first, interleave's sub-pipeline) than any unbatch or source.
bool isBatched(const Project &project, std::string id)
{
    std::set<std::string> seen;
    while (seen.insert(id).second) {
        const PipelineNode *node = project.findNode(id);
        if (!node || node->op == "unbatch")
            return false;
        if (node->op == "batch")
            return true;
        const auto inputs = project.inputsOf(id);
        if (inputs.empty())
            return false;
        id = inputs.front();
    }
    return false;
}

// The features to save, in the order `features` lists them (absent: all, in element order).
std::vector<std::size_t> savedIndices(Params &params, const ElementSpec &spec)
{
    std::vector<std::size_t> indices;
    if (!params.has("features")) {
        for (std::size_t i = 0; i < spec.features.size(); ++i)
            indices.push_back(i);
        return indices;
    }
    std::set<std::size_t> seen;
    for (const auto &name : params.strings("features", std::nullopt)) {
        const auto i = spec.find(name);
        if (!i)
            params.fail("features", "\"" + name + "\" is not a feature of the input (it has: " + spec.names() + ")");
        if (!seen.insert(*i).second)
            params.fail("features", "\"" + name + "\" is named twice");
        indices.push_back(*i);
    }
    if (indices.empty())
        params.fail("features", "names no feature (absent: all are saved)");
    return indices;
}

// The file-name pattern's mistakes, said at build time rather than when the pass starts writing.
void checkPattern(Params &params, const std::string &pattern, std::int64_t shards, DatasetFormat format, std::size_t features)
{
    if (pattern.empty())
        return;
    std::set<std::string> keys;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '}')
            params.fail("shard_pattern", "'" + pattern + "' has a '}' without its '{'");
        if (pattern[i] != '{')
            continue;
        const std::size_t end = pattern.find('}', i);
        if (end == std::string::npos)
            params.fail("shard_pattern", "'" + pattern + "' has a '{' without its '}'");
        const std::string key = pattern.substr(i + 1, end - i - 1);
        if (key != "index" && key != "count" && key != "feature")
            params.fail("shard_pattern", "'" + pattern + "': unknown {" + key + "} (known: {index}, {count}, {feature})");
        keys.insert(key);
        i = end;
    }
    if (pattern.find('/') != std::string::npos || pattern == kDatasetManifestName)
        params.fail("shard_pattern", "'" + pattern + "' must name files in the folder itself (no '/')");
    if (shards > 1 && !keys.count("index"))
        params.fail("shard_pattern", "'" + pattern + "' needs {index}: " + std::to_string(shards) + " shards need names of their own");
    if (format == DatasetFormat::Npy && features > 1 && !keys.count("feature"))
        params.fail("shard_pattern", "'" + pattern + "' needs {feature}: npy shards hold a file per feature");
}

std::shared_ptr<Dataset> buildSave(BuildContext &context, Params &params, const Inputs &inputs)
{
    // One writer per node: an interleave's per-file copies would all write the same folder.
    if (context.fileFilter())
        params.fail("", "save cannot run inside an interleave's per-file sub-pipeline: place it after the interleave");
    const std::string path = params.string("path", std::nullopt);
    if (path.empty())
        params.fail("path", "must name the folder to save into");
    const DatasetFormat format = params.choice("format", std::string("tfrecord"), {"tfrecord", "npy"}) == "npy" ? DatasetFormat::Npy
                                                                                                           : DatasetFormat::TfRecord;
    const std::int64_t shards = params.integer("num_shards", 1, 1, 100000);
    const std::string compression = params.choice("compression", std::string(""), {"", "GZIP"});
    if (format == DatasetFormat::Npy && !compression.empty())
        params.fail("compression", "applies to tfrecord shards; npy shards are not compressed");
    const std::string pattern = params.string("shard_pattern", "");
    const bool overwrite = params.boolean("overwrite", true);

    DatasetPtr input = inputs.at(0);
    const ElementSpec &spec = input->spec();
    auto config = std::make_shared<SaveConfig>();
    config->nodeId = params.node().id;
    config->batched = isBatched(context.project(), inputs.id(0));
    config->indices = savedIndices(params, spec);
    for (std::size_t i : config->indices) {
        const FeatureSpec &f = spec.features[i];
        Shape rowShape = f.shape;
        if (config->batched) {
            if (rowShape.empty())
                params.fail("", "feature \"" + f.name + "\" is a scalar, but the input is batched: its elements have no rows to save");
            rowShape.erase(rowShape.begin());
        }
        DatasetFeature feature;
        feature.name = f.name;
        feature.isString = f.type.isString;
        feature.dtype = f.type.isString ? DType::UInt8 : f.type.dtype;
        feature.variableLength = std::any_of(rowShape.begin(), rowShape.end(), [](std::int64_t d) { return d < 0; });
        if (!feature.variableLength)
            feature.rowShape.assign(rowShape.begin(), rowShape.end());
        if (format == DatasetFormat::Npy) {
            if (feature.isString)
                params.fail("format", "feature \"" + f.name + "\" is a string; npy shards hold numbers only: save as tfrecord, or leave it out with "
                                      "features");
            if (feature.variableLength)
                params.fail("format", "feature \"" + f.name + "\" has rows of shape " + shapeText(rowShape) +
                                          ", not known before running; npy shards need a fixed row shape: save as tfrecord");
            if (feature.rowElements() == 0)
                params.fail("format", "feature \"" + f.name + "\" has rows of zero elements, which npy shards cannot hold: save as tfrecord");
        }
        config->features.push_back(std::move(feature));
    }
    checkPattern(params, pattern, shards, format, config->features.size());

    config->folder = context.project().resolvePath(path);
    config->overwrite = overwrite;
    std::error_code ec;
    if (!overwrite && std::filesystem::exists(std::filesystem::path(config->folder) / kDatasetManifestName, ec))
        params.fail("overwrite", path + " already holds a saved dataset: set overwrite to true to replace it (once the new pass completes), "
                                        "or choose another path");
    config->options.format = format;
    config->options.shards = int(shards);
    config->options.compression = compression == "GZIP" ? TfRecordWriter::Compression::Gzip : TfRecordWriter::Compression::None;
    config->options.pattern = pattern;
    return std::make_shared<SaveDataset>(context.statsFor(params.node()), input, std::move(config));
}

} // namespace

void registerSaveOp(std::vector<OpInfo> &ops)
{
    ops.push_back({"save", "transformations",
                   "Writes the first complete pass to a folder of shards with a manifest.json, as tf.data Dataset.save, and passes "
                   "the elements on unchanged (later passes only pass through). Batches are saved row by row; rows go to the shards "
                   "in turn (row r to shard r mod num_shards). A pass that stops early writes nothing. Read it back with load.",
                   {{"path", "path", "", "the folder to save into (created if missing; relative to the project)", true},
                    {"format", "enum:tfrecord|npy", "tfrecord",
                     "tfrecord: one file of tf.train.Example per shard (any features); npy: one .npy per feature per shard (numbers of "
                     "fixed shape)"},
                    {"num_shards", "int", "1", "files (per feature, for npy) the rows are dealt to, written in parallel"},
                    {"compression", "enum:|GZIP", "", "\"\" (none) or \"GZIP\" (tfrecord only)"},
                    {"shard_pattern", "string", "",
                     "shard file names, with {index}, {count} (5 digits) and {feature} (npy) (absent: data-{index}-of-{count}.tfrecord, "
                     "{feature}-{index}-of-{count}.npy)"},
                    {"overwrite", "bool", "true",
                     "replace a dataset already saved at path once the new pass completes, as tf.data's save does (false: a path that "
                     "holds one is a build error)"},
                    {"features", "feature|list", "", "the features to save (absent: all)"}},
                   1, 1, buildSave});
}

} // namespace sluice::pipeline
