// lookup: keras.layers.StringLookup for string features and IntegerLookup for integer ones,
// output_mode "int", as keras/src/layers/preprocessing/index_lookup.py computes it. Indices:
// 0 for mask_token (when set), then num_oov_indices for values out of the vocabulary, then
// the vocabulary's tokens in order. The vocabulary is a list (which may start with the special
// tokens, as get_vocabulary() lists them), a file read as tf.lookup.TextFileInitializer reads
// it, or adapted from the input in a pass at build time.
#include "pipeline/functions/categorical_functions.h"

#include "pipeline/engine/dtype_dispatch.h"
#include "pipeline/functions/string_hash.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

namespace sluice::pipeline {
namespace {

// What Keras's vocabulary_dtype is, per kind of feature: "string" or "int64".
template <typename Key> struct Keys;

template <> struct Keys<std::string>
{
    static constexpr const char *what = "a string";
    static std::string defaultOov() { return "[UNK]"; }
    static std::optional<std::string> fromJson(const nlohmann::json &v) { return jsonText(v); }
    static std::optional<std::string> fromLine(std::string_view line) { return std::string(line); }
    static std::string text(const std::string &key) { return "\"" + key + "\""; }
    template <typename F> static void each(const Tensor &t, F &&take)
    {
        const auto &values = t.stringValues();
        for (std::size_t i = 0; i < values.size(); ++i)
            take(i, values[i]);
    }
};

template <> struct Keys<std::int64_t>
{
    static constexpr const char *what = "an integer";
    static std::int64_t defaultOov() { return -1; }
    static std::optional<std::int64_t> fromJson(const nlohmann::json &v) { return jsonInteger(v); }
    static std::optional<std::int64_t> fromLine(std::string_view line) { return parseInteger(line); }
    static std::string text(std::int64_t key) { return std::to_string(key); }
    // IntegerLookup takes any integer tensor as int64 (ensure_tensor(inputs, "int64")).
    template <typename F> static void each(const Tensor &t, F &&take)
    {
        visitDType(t.dtype(), [&](auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_integral_v<T>) {
                const T *src = t.as<T>();
                for (std::uint64_t i = 0; i < t.count(); ++i)
                    take(i, static_cast<std::int64_t>(src[i]));
            }
        });
    }
};

template <typename Key>
struct Table
{
    std::unordered_map<Key, std::int64_t> index; // token → its index
    std::optional<Key> mask;
    Key oov{};
    std::int64_t numOov = 1;

    std::int64_t oovStart() const { return mask ? 1 : 0; }
    std::int64_t tokenStart() const { return oovStart() + numOov; }
};

// Python's (and TensorFlow's floormod's) modulo: the sign of the divisor.
std::int64_t floorMod(std::int64_t x, std::int64_t n)
{
    const std::int64_t r = x % n;
    return r != 0 && (r < 0) != (n < 0) ? r + n : r;
}

template <typename Key>
class LookupFunction final : public MapFunction
{
public:
    LookupFunction(Table<Key> table, std::vector<std::size_t> features, bool hashIntegers,
                   std::optional<std::array<std::uint64_t, 2>> salt, const ElementSpec &input)
        : m_table(std::move(table)), m_features(std::move(features)), m_hashIntegers(hashIntegers), m_salt(salt)
    {
        m_output = input;
        for (std::size_t f : m_features)
            m_output.features[f].type = {DType::Int64, false};
    }

    Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t) const override
    {
        for (std::size_t f : m_features) {
            const Tensor &in = element.tensors[f];
            Tensor out = Tensor::allocate(DType::Int64, in.shape());
            std::int64_t *dst = out.mutableAs<std::int64_t>();
            std::optional<Key> unknown;
            Keys<Key>::each(in, [&](std::uint64_t i, const Key &key) {
                if (m_table.mask && key == *m_table.mask) {
                    dst[i] = 0;
                } else if (const auto it = m_table.index.find(key); it != m_table.index.end()) {
                    dst[i] = it->second;
                } else if (m_table.numOov == 0) {
                    dst[i] = -1;
                    if (!unknown)
                        unknown = key;
                } else {
                    dst[i] = m_table.oovStart() + (m_table.numOov == 1 ? 0 : oovBucket(key));
                }
            });
            if (unknown)
                return Error::invalid("lookup", "feature \"" + m_output.features[f].name + "\": " + Keys<Key>::text(*unknown) +
                                                    " is not in the vocabulary and num_oov_indices is 0 (as Keras, an error; "
                                                    "set num_oov_indices to map such values)");
            element.tensors[f] = std::move(out);
        }
        return std::move(element);
    }

private:
    // Which of the OOV indices a value gets when there are several (index_lookup.py's
    // _lookup_dense): strings hashed, integers by floor modulo unless oov_method is "farmhash"
    // (then their decimal text hashed); SipHash with the salt instead of FarmHash.
    std::int64_t oovBucket(const Key &key) const
    {
        const auto buckets = std::uint64_t(m_table.numOov);
        if constexpr (std::is_same_v<Key, std::string>) {
            return m_salt ? hashBucketStrong(key, buckets, (*m_salt)[0], (*m_salt)[1]) : hashBucketFast(key, buckets);
        } else {
            if (!m_hashIntegers)
                return floorMod(key, m_table.numOov);
            const std::string text = std::to_string(key);
            return m_salt ? hashBucketStrong(text, buckets, (*m_salt)[0], (*m_salt)[1]) : hashBucketFast(text, buckets);
        }
    }

    Table<Key> m_table;
    std::vector<std::size_t> m_features;
    bool m_hashIntegers;
    std::optional<std::array<std::uint64_t, 2>> m_salt;
};

// set_vocabulary() with a list.
template <typename Key>
void setVocabulary(Params &params, Table<Key> &table, const std::vector<Key> &vocabulary, std::optional<std::int64_t> maxTokens)
{
    using K = Keys<Key>;
    if (vocabulary.empty())
        params.fail("vocabulary", "is empty");
    // A vocabulary that starts with the special tokens exactly as get_vocabulary() lists them
    // (mask, then one OOV token per OOV index) has them taken off.
    std::vector<Key> special;
    if (table.mask)
        special.push_back(*table.mask);
    special.insert(special.end(), std::size_t(table.numOov), table.oov);
    auto first = vocabulary.begin();
    if (vocabulary.size() >= special.size() && std::equal(special.begin(), special.end(), vocabulary.begin()))
        first += std::ptrdiff_t(special.size());
    std::unordered_set<Key> seen;
    std::string repeated;
    for (auto it = first; it != vocabulary.end(); ++it)
        if (!seen.insert(*it).second && repeated.size() < 200)
            repeated += (repeated.empty() ? "" : ", ") + K::text(*it);
    if (!repeated.empty())
        params.fail("vocabulary", "repeats tokens (each may appear once): " + repeated);
    if (table.mask && seen.count(*table.mask))
        params.fail("vocabulary", "holds the mask_token " + K::text(*table.mask) +
                                      " among its tokens: leave the mask and OOV tokens out, or give them first (mask, then one "
                                      "oov_token per OOV index)");
    const auto size = table.tokenStart() + std::int64_t(vocabulary.end() - first);
    if (maxTokens && size > *maxTokens)
        params.fail("max_tokens", "is " + std::to_string(*maxTokens) + " but the vocabulary has " + std::to_string(size) +
                                      " indices with the mask and OOV ones");
    std::int64_t index = table.tokenStart();
    for (auto it = first; it != vocabulary.end(); ++it)
        table.index.emplace(*it, index++);
}

// A vocabulary file as tf.lookup.TextFileInitializer(WHOLE_LINE → LINE_NUMBER) reads it: one
// token per line, '\n' or "\r\n" line ends, a last line without its end kept; an empty line, a
// token twice or (integers) a line that is not an int64 is an error, as in TensorFlow. No
// special-token handling, as Keras gives files none.
template <typename Key>
void readVocabularyFile(BuildContext &context, Params &params, const std::string &param, Table<Key> &table)
{
    const std::string given = params.string(param, std::nullopt);
    const std::string path = context.project().resolvePath(given);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        params.fail(param, "no such file: " + path);
    std::ifstream in(path, std::ios::binary);
    if (!in.is_open())
        params.fail(param, "cannot open " + path);
    const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof())
        params.fail(param, "cannot read " + path);
    if (content.empty())
        params.fail(param, path + " is empty");
    std::int64_t index = table.tokenStart();
    std::size_t line = 1;
    for (std::size_t pos = 0; pos < content.size(); ++line) {
        const std::size_t end = std::min(content.find('\n', pos), content.size());
        std::string_view text(content.data() + pos, end - pos);
        pos = end + 1;
        if (!text.empty() && text.back() == '\r')
            text.remove_suffix(1);
        const std::string where = path + ": line " + std::to_string(line);
        if (text.empty())
            params.fail(param, where + " is empty (TensorFlow refuses empty lines in a vocabulary file)");
        const auto key = Keys<Key>::fromLine(text);
        if (!key)
            params.fail(param, where + ": \"" + std::string(text) + "\" is not an integer");
        if (!table.index.emplace(*key, index++).second)
            params.fail(param, where + " repeats " + Keys<Key>::text(*key));
    }
}

// adapt(): counts over one pass, the mask and OOV tokens left out, most frequent first and ties
// in descending token order (np.lexsort((tokens, counts))[::-1]), at most max_tokens indices.
template <typename Key>
void adaptVocabulary(BuildContext &context, Params &params, const Dataset &input, std::size_t feature, Table<Key> &table,
                     std::optional<std::int64_t> maxTokens)
{
    if (maxTokens && *maxTokens <= table.tokenStart())
        params.fail("max_tokens", "is " + std::to_string(*maxTokens) + ": it leaves no index for tokens after the mask and OOV indices");
    std::unordered_map<Key, std::int64_t> counts;
    std::uint64_t values = 0;
    adaptPass(context, params, input, feature, "vocabulary", [&](const Tensor &t) -> std::optional<std::string> {
        Keys<Key>::each(t, [&](std::uint64_t, const Key &key) { ++counts[key]; });
        values += t.count();
        return std::nullopt;
    });
    if (values == 0)
        params.fail("vocabulary", "cannot adapt: feature \"" + input.spec().features[feature].name + "\" has no values in the input");
    if (table.mask)
        counts.erase(*table.mask);
    counts.erase(table.oov);
    std::vector<std::pair<Key, std::int64_t>> sorted(counts.begin(), counts.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) { return a.second != b.second ? a.second > b.second : a.first > b.first; });
    if (maxTokens)
        sorted.resize(std::min(sorted.size(), std::size_t(*maxTokens - table.tokenStart())));
    std::int64_t index = table.tokenStart();
    for (const auto &[key, count] : sorted)
        table.index.emplace(key, index++);
}

template <typename Key>
std::unique_ptr<MapFunction> buildLookup(BuildContext &context, Params &params, const Dataset &input, std::vector<std::size_t> features)
{
    using K = Keys<Key>;
    Table<Key> table;
    table.numOov = params.integer("num_oov_indices", 1, 0, 1 << 20);
    const auto token = [&](const std::string &name) -> std::optional<Key> {
        const nlohmann::json *v = params.raw(name);
        if (!v)
            return std::nullopt;
        auto key = K::fromJson(*v);
        if (!key)
            params.fail(name, std::string("must be ") + K::what + " (as the feature holds), got " + v->dump());
        return key;
    };
    table.mask = token("mask_token");
    table.oov = token("oov_token").value_or(K::defaultOov());
    std::optional<std::int64_t> maxTokens;
    if (params.has("max_tokens"))
        maxTokens = params.integer("max_tokens", std::nullopt, 2);
    const bool farmhash = params.choice("oov_method", "floormod", {"floormod", "farmhash"}) == "farmhash";
    const auto salt = saltParam(params);
    if (std::is_same_v<Key, std::int64_t> && salt && !farmhash)
        params.fail("salt", "for integer features it needs oov_method \"farmhash\" (as Keras: floor modulo takes no salt)");

    const nlohmann::json *list = params.raw("vocabulary");
    const bool fromFile = params.has("vocabulary_file") || (list && list->is_string());
    if (list && params.has("vocabulary_file"))
        params.fail("vocabulary_file", "give vocabulary or vocabulary_file, not both");
    if ((list || fromFile) && params.has("adapt_elements"))
        params.fail("adapt_elements", "applies only when the vocabulary is adapted (no vocabulary given)");
    if (fromFile) {
        readVocabularyFile(context, params, params.has("vocabulary_file") ? "vocabulary_file" : "vocabulary", table);
    } else if (list) {
        if (!list->is_array())
            params.fail("vocabulary", "must be a list of tokens or a file's path, got " + list->dump());
        std::vector<Key> vocabulary;
        for (const auto &item : *list) {
            auto key = K::fromJson(item);
            if (!key)
                params.fail("vocabulary", "holds " + item.dump() + ", which is not " + K::what + " (as the feature holds)");
            vocabulary.push_back(std::move(*key));
        }
        setVocabulary(params, table, vocabulary, maxTokens);
    } else {
        if (features.size() != 1)
            params.fail("features", "adapting a vocabulary works on one feature at a time (use one lookup per feature)");
        adaptVocabulary(context, params, input, features[0], table, maxTokens);
    }
    return std::make_unique<LookupFunction<Key>>(std::move(table), std::move(features), farmhash, salt, input.spec());
}

} // namespace

std::unique_ptr<MapFunction> makeLookupFunction(BuildContext &context, Params &params, const Dataset &input)
{
    const ElementSpec &spec = input.spec();
    auto features = featureIndices(params, "features", spec, false, false);
    const FeatureSpec &first = spec.features[features[0]];
    for (std::size_t f : features) {
        const FeatureSpec &s = spec.features[f];
        if (!s.type.isString && isFloating(s.type.dtype))
            params.fail("features", "\"" + s.name + "\" is " + s.type.name() + "; lookup takes strings or integers (cast or discretize first)");
        if (s.type.isString != first.type.isString)
            params.fail("features", "\"" + s.name + "\" and \"" + first.name + "\" differ: one vocabulary holds strings or integers, not both");
    }
    if (first.type.isString)
        return buildLookup<std::string>(context, params, input, std::move(features));
    return buildLookup<std::int64_t>(context, params, input, std::move(features));
}

} // namespace sluice::pipeline
