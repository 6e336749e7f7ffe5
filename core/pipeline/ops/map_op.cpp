// map: a built-in function applied to every element, sequentially in the consumer's task or on
// num_parallel_calls tasks at once (AUTOTUNE: tuned while running), in input order unless
// deterministic is false, as tf.data map.
#include "pipeline/engine/async_stage.h"
#include "pipeline/functions/map_functions.h"
#include "pipeline/engine/op_registry.h"

#include <atomic>
#include <set>

namespace sluice::pipeline {
namespace {

class MapDataset final : public Dataset
{
public:
    MapDataset(StageStats *stats, DatasetPtr input, std::shared_ptr<const MapFunction> function, std::int64_t parallel, bool deterministic,
               int threads, std::shared_ptr<std::atomic<std::uint64_t>> passes)
        : Dataset(function->outputSpec(), stats), m_input(std::move(input)), m_function(std::move(function)),
          m_parallel(parallel), m_deterministic(deterministic), m_threads(threads), m_passes(std::move(passes))
    {
    }
    std::int64_t cardinality() const override { return m_function->mayDrop() ? kUnknown : m_input->cardinality(); }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override
    {
        auto it = makeMappingIterator(context);
        return m_function->mayDrop() ? std::make_unique<DropSkipped>(std::move(it)) : std::move(it);
    }

private:
    // Leaves out the elements the function dropped (it counted them in the stage's stats).
    class DropSkipped final : public Iterator
    {
    public:
        explicit DropSkipped(std::unique_ptr<Iterator> input) : m_input(std::move(input)) {}
        Result<Poll> next(Element &out) override
        {
            for (;;) {
                auto r = m_input->next(out);
                if (!r.ok() || *r != Poll::Ready || !MapFunction::isDropped(out))
                    return r;
            }
        }

    private:
        std::unique_ptr<Iterator> m_input;
    };

    std::unique_ptr<Iterator> makeMappingIterator(const IteratorContext &context) const
    {
        const std::uint64_t pass = m_passes->fetch_add(1);
        auto fn = m_function;
        if (m_parallel == 0) {
            class SequentialMap final : public Iterator
            {
            public:
                SequentialMap(std::unique_ptr<Iterator> input, std::shared_ptr<const MapFunction> fn, std::uint64_t pass)
                    : m_input(std::move(input)), m_fn(std::move(fn)), m_pass(pass)
                {
                }
                Result<Poll> next(Element &out) override
                {
                    Element in;
                    auto r = m_input->next(in);
                    if (!r.ok() || *r != Poll::Ready)
                        return r;
                    auto mapped = m_fn->apply(std::move(in), m_pass, m_sequence++);
                    if (!mapped.ok())
                        return mapped.error();
                    out = std::move(mapped).value();
                    return Poll::Ready;
                }

            private:
                std::unique_ptr<Iterator> m_input;
                std::shared_ptr<const MapFunction> m_fn;
                std::uint64_t m_pass, m_sequence = 0;
            };
            return std::make_unique<SequentialMap>(m_input->makeIterator(context), fn, pass);
        }
        const int p = m_parallel == kAutotune ? m_threads : int(m_parallel);
        DatasetPtr input = m_input;
        return AsyncStage::start(
            context, [input](const IteratorContext &c) { return input->makeIterator(c); },
            [fn, pass](Element &&e, std::uint64_t sequence) { return fn->apply(std::move(e), pass, sequence); },
            AsyncOptions{p, p, m_deterministic}, stats());
    }

    DatasetPtr m_input;
    std::shared_ptr<const MapFunction> m_function;
    std::int64_t m_parallel; // 0: sequential
    bool m_deterministic;
    int m_threads;
    std::shared_ptr<std::atomic<std::uint64_t>> m_passes;
};

std::shared_ptr<Dataset> buildMap(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::string function = params.string("function", std::nullopt);
    const std::int64_t parallel = params.has("num_parallel_calls") ? params.autotunable("num_parallel_calls", std::nullopt) : 0;
    const bool deterministic = params.boolean("deterministic", true);
    // Parameters of other functions are mistakes here (a typo'd function name, a stray key).
    for (const auto &f : mapFunctions()) {
        if (f.name != function)
            continue;
        std::set<std::string> allowed(f.params.begin(), f.params.end());
        allowed.insert({"function", "num_parallel_calls", "deterministic"});
        for (const auto &[key, value] : params.node().params.items())
            if (!allowed.count(key))
                params.fail(key, "is not a parameter of function \"" + function + "\"");
    }
    DatasetPtr input = inputs.at(0);
    std::shared_ptr<const MapFunction> fn = makeMapFunction(function, context, params, *input);
    if (params.has("deterministic") && parallel == 0)
        context.addNote("map '" + params.node().id + "': deterministic has no effect without num_parallel_calls (as in tf.data)");
    StageStats *stats = context.statsFor(params.node());
    stats->async = parallel != 0;
    stats->tunesParallelism = parallel == kAutotune;
    return std::make_shared<MapDataset>(stats, input, std::move(fn), parallel, deterministic, context.threads(), context.newPassCounter());
}

} // namespace

void registerMapOps(std::vector<OpInfo> &ops)
{
    std::vector<ParamInfo> params{
        {"function", "enum:identity|cast|normalize|scale|clip|one_hot|reshape|gaussian_noise|concat|decode_image|resize|random_flip|random_crop|random_brightness|random_contrast|hashing|lookup|bucketize|discretize|python", "", "the built-in function, or python", true},
        {"num_parallel_calls", "int|AUTOTUNE", "", "elements mapped at once (absent: one at a time, in order)"},
        {"deterministic", "bool", "true", "keep input order when mapping in parallel"},
        {"features", "feature|list", "", "the feature(s) the function applies to (absent: cast converts every numeric feature; the other functions need it)"},
        {"dtype", "dtype", "", "output dtype (needed by cast; one_hot without it: float32; decode_image: uint8 (default), uint16 or float32)"},
        {"mean", "number|list|adapt", "0", "normalize: mean, per last-axis position, or \"adapt\""},
        {"std", "number|list|adapt", "1", "normalize: standard deviation, or \"adapt\""},
        {"adapt_elements", "int", "-1", "normalize, lookup, discretize: elements to adapt over (-1: all)"},
        {"scale", "number", "", "scale: factor (needed by scale)"},
        {"offset", "number", "0", "scale: added after scaling"},
        {"clip_value_min", "number", "", "clip: lower bound (needed by clip)"},
        {"clip_value_max", "number", "", "clip: upper bound (needed by clip)"},
        {"depth", "int", "", "one_hot: number of classes (needed by one_hot)"},
        {"shape", "list", "", "reshape: new shape (needed by reshape)"},
        {"stddev", "number", "", "gaussian_noise: standard deviation (needed by gaussian_noise)"},
        {"seed", "int", "", "gaussian_noise and random_*: random seed (absent: from the pipeline seed, else random)"},
        {"channels", "int", "0", "decode_image: 0 (as in the file), 1 gray, 3 RGB, 4 RGBA"},
        {"dct_method", "enum:INTEGER_FAST|INTEGER_ACCURATE", "INTEGER_FAST", "decode_image: libjpeg's IDCT (TensorFlow's default: INTEGER_FAST)"},
        {"on_error", "enum:error|skip", "error", "decode_image: stop at a bad image, naming its file, or leave it out and count it"},
        {"size", "list", "", "resize, random_crop: [height, width] (needed by both)"},
        {"method", "enum:bilinear|nearest", "bilinear", "resize: interpolation (bilinear gives float32)"},
        {"mode", "enum:horizontal|vertical|horizontal_and_vertical", "horizontal_and_vertical", "random_flip: which flips"},
        {"max_delta", "number", "", "random_brightness: largest change (needed by random_brightness)"},
        {"lower", "number", "", "random_contrast: smallest factor (needed by random_contrast)"},
        {"upper", "number", "", "random_contrast: largest factor (needed by random_contrast)"},
        {"name", "string", "", "concat: the new feature's name (needed by concat)"},
        {"keep_inputs", "bool", "true", "concat: keep the concatenated features too"},
        {"num_bins", "int", "", "hashing, discretize: number of bins (needed by hashing; discretize: adapted from the input, without bin_boundaries)"},
        {"mask_value", "string", "", "hashing: the value that maps to 0, the others hashing into 1…num_bins-1 (absent: no mask)"},
        {"salt", "list", "", "hashing, lookup: SipHash-2-4 key, one integer (used twice) or two (absent: FarmHash Fingerprint64)"},
        {"vocabulary", "list", "", "lookup: the tokens, strings or integers as the feature holds (absent: vocabulary_file, else adapted from the input)"},
        {"vocabulary_file", "path", "", "lookup: a text file of one token per line (absent: vocabulary)"},
        {"num_oov_indices", "int", "1", "lookup: indices for values out of the vocabulary (several: hashed among them; 0: such a value is an error)"},
        {"mask_token", "string", "", "lookup: the token that maps to 0 (absent: no mask)"},
        {"oov_token", "string", "", "lookup: the out-of-vocabulary token, left out of an adapted vocabulary (absent: \"[UNK]\" for strings, -1 for integers)"},
        {"max_tokens", "int", "", "lookup: most indices, mask and OOV ones included, an adapted vocabulary may have (absent: no limit)"},
        {"oov_method", "enum:floormod|farmhash", "floormod", "lookup: how integers out of the vocabulary pick one of several OOV indices (strings are always hashed)"},
        {"boundaries", "list", "", "bucketize: sorted bucket edges (needed by bucketize)"},
        {"bin_boundaries", "list", "", "discretize: sorted bin edges (absent: num_bins adapted from the input)"},
        {"epsilon", "number", "0.01", "discretize: error tolerance of the quantile summary that adapts num_bins"},
        {"callable", "callable", "", "python: \"module:function\", found next to the project or on its python_path (needed by python)"},
        {"output_signature", "object", "",
         "python: each returned feature's {\"dtype\", \"shape\"} (absent: learned by calling the function once on zeros)"},
    };
    ops.push_back({"map", "transformations",
                   "Applies a built-in function to every element (tf.data map with a function such as tf.cast or a Keras "
                   "preprocessing layer), or a Python function where Sluice is used from Python (tf.py_function).",
                   std::move(params), 1, 1, buildMap});
}

} // namespace sluice::pipeline
