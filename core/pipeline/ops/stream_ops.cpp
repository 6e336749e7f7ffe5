// Ops that select, repeat and combine elements: take, skip, shard, repeat, filter, unbatch,
// zip. take / skip / shard over a random-access input stay random-access (index arithmetic),
// so a later batch still gathers straight from the mapping.
#include "pipeline/engine/build_context.h"
#include "pipeline/ops/host_ops.h"
#include "pipeline/engine/op_registry.h"
#include "pipeline/engine/random_access.h"
#include "pipeline/engine/runtime.h"

#include <algorithm>
#include <cstring>

namespace sluice::pipeline {
namespace {

// A window of positions of the inner pass: begin, begin + stride, … (count of them).
class StridedMap final : public IndexMap
{
public:
    StridedMap(std::shared_ptr<const IndexMap> inner, std::uint64_t begin, std::uint64_t stride, std::uint64_t count)
        : m_inner(std::move(inner)), m_begin(begin), m_stride(stride), m_count(count)
    {
    }
    std::uint64_t size() const override { return m_count; }
    std::uint64_t row(std::uint64_t p) const override { return m_inner->row(m_begin + p * m_stride); }
    bool inOrder() const override { return m_inner->inOrder(); }

private:
    std::shared_ptr<const IndexMap> m_inner;
    std::uint64_t m_begin, m_stride, m_count;
};

// A synchronous one-input dataset whose iterator is made by a function.
class StreamDataset final : public Dataset
{
public:
    using Make = std::function<std::unique_ptr<Iterator>(const IteratorContext &)>;
    StreamDataset(ElementSpec spec, StageStats *stats, Make make, std::int64_t cardinality = kUnknown)
        : Dataset(std::move(spec), stats), m_make(std::move(make)), m_cardinality(cardinality)
    {
    }
    std::int64_t cardinality() const override { return m_cardinality; }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override { return m_make(context); }

private:
    Make m_make;
    std::int64_t m_cardinality;
};

// Keeps the elements whose position passes `keep` (position counted from 0), ending early when
// `done` says no later position can pass.
class SelectIterator final : public Iterator
{
public:
    SelectIterator(const IteratorContext &context, std::unique_ptr<Iterator> input, std::function<bool(std::uint64_t)> keep,
                   std::function<bool(std::uint64_t)> done)
        : m_runtime(context.runtime), m_input(std::move(input)), m_keep(std::move(keep)), m_done(std::move(done))
    {
    }
    Result<Poll> next(Element &out) override
    {
        for (std::uint64_t dropped = 0;; ++dropped) {
            if (m_done(m_position))
                return Poll::End;
            if ((dropped & 1023) == 1023 && m_runtime->cancelled())
                return cancelledError();
            auto r = m_input->next(out);
            if (!r.ok() || *r != Poll::Ready)
                return r;
            if (m_keep(m_position++))
                return Poll::Ready;
        }
    }

private:
    Runtime *m_runtime;
    std::unique_ptr<Iterator> m_input;
    std::function<bool(std::uint64_t)> m_keep, m_done;
    std::uint64_t m_position = 0;
};

std::shared_ptr<Dataset> buildTake(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::int64_t count = params.integer("count", std::nullopt, -1);
    DatasetPtr input = inputs.at(0);
    StageStats *stats = context.statsFor(params.node());
    if (input->randomAccess())
        return std::make_shared<DerivedAccessDataset>(input, stats, [count](std::shared_ptr<const IndexMap> inner, bool) {
            const std::uint64_t n = count < 0 ? inner->size() : std::min<std::uint64_t>(inner->size(), std::uint64_t(count));
            return std::make_shared<StridedMap>(std::move(inner), 0, 1, n);
        });
    const std::int64_t in = input->cardinality();
    const std::int64_t card = count < 0 ? in : (in == kInfinite ? count : in == kUnknown ? kUnknown : std::min(in, count));
    return std::make_shared<StreamDataset>(
        input->spec(), stats,
        [input, count](const IteratorContext &c) {
            return std::make_unique<SelectIterator>(
                c, input->makeIterator(c), [](std::uint64_t) { return true; },
                [count](std::uint64_t p) { return count >= 0 && p >= std::uint64_t(count); });
        },
        card);
}

std::shared_ptr<Dataset> buildSkip(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::int64_t count = params.integer("count", std::nullopt, -1);
    DatasetPtr input = inputs.at(0);
    StageStats *stats = context.statsFor(params.node());
    if (input->randomAccess())
        return std::make_shared<DerivedAccessDataset>(input, stats, [count](std::shared_ptr<const IndexMap> inner, bool) {
            const std::uint64_t n = inner->size();
            const std::uint64_t skipped = count < 0 ? n : std::min<std::uint64_t>(n, std::uint64_t(count));
            return std::make_shared<StridedMap>(std::move(inner), skipped, 1, n - skipped);
        });
    // skip(-1) skips everything, as in tf.data.
    return std::make_shared<StreamDataset>(input->spec(), stats, [input, count](const IteratorContext &c) {
        return std::make_unique<SelectIterator>(
            c, input->makeIterator(c), [count](std::uint64_t p) { return count >= 0 && p >= std::uint64_t(count); },
            [](std::uint64_t) { return false; });
    });
}

std::shared_ptr<Dataset> buildShard(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::int64_t shards = params.integer("num_shards", std::nullopt, 1);
    const std::int64_t index = params.integer("index", std::nullopt, 0);
    if (index >= shards)
        params.fail("index", "must be below num_shards (" + std::to_string(shards) + "), got " + std::to_string(index));
    DatasetPtr input = inputs.at(0);
    StageStats *stats = context.statsFor(params.node());
    if (input->randomAccess())
        return std::make_shared<DerivedAccessDataset>(input, stats, [shards, index](std::shared_ptr<const IndexMap> inner, bool) {
            const std::uint64_t n = inner->size(), s = std::uint64_t(shards), i = std::uint64_t(index);
            const std::uint64_t count = n > i ? (n - i + s - 1) / s : 0;
            return std::make_shared<StridedMap>(std::move(inner), i, s, count);
        });
    return std::make_shared<StreamDataset>(input->spec(), stats, [input, shards, index](const IteratorContext &c) {
        return std::make_unique<SelectIterator>(
            c, input->makeIterator(c), [shards, index](std::uint64_t p) { return p % std::uint64_t(shards) == std::uint64_t(index); },
            [](std::uint64_t) { return false; });
    });
}

class RepeatIterator final : public Iterator
{
public:
    RepeatIterator(DatasetPtr input, IteratorContext context, std::int64_t count)
        : m_input(std::move(input)), m_context(std::move(context)), m_count(count)
    {
    }
    Result<Poll> next(Element &out) override
    {
        for (;;) {
            if (m_count >= 0 && m_epoch >= m_count)
                return Poll::End;
            if (!m_current) {
                m_current = m_input->makeIterator(m_context);
                m_producedThisEpoch = false;
            }
            auto r = m_current->next(out);
            if (!r.ok() || *r == Poll::Pending)
                return r;
            if (*r == Poll::Ready) {
                m_producedThisEpoch = true;
                return r;
            }
            m_current.reset();
            ++m_epoch;
            if (!m_producedThisEpoch)
                return Poll::End; // an empty input repeated forever is still empty
        }
    }

private:
    DatasetPtr m_input;
    IteratorContext m_context;
    std::int64_t m_count;
    std::int64_t m_epoch = 0;
    bool m_producedThisEpoch = false;
    std::unique_ptr<Iterator> m_current;
};

std::shared_ptr<Dataset> buildRepeat(BuildContext &context, Params &params, const Inputs &inputs)
{
    const std::int64_t count = params.integer("count", -1, -1);
    DatasetPtr input = inputs.at(0);
    const std::int64_t in = input->cardinality();
    const std::int64_t card = count < 0 ? (in == 0 ? 0 : kInfinite) : (in < 0 ? in : in * count);
    return std::make_shared<StreamDataset>(
        input->spec(), context.statsFor(params.node()),
        [input, count](const IteratorContext &c) { return std::make_unique<RepeatIterator>(input, c, count); }, card);
}

std::shared_ptr<Dataset> buildFilter(BuildContext &context, Params &params, const Inputs &inputs)
{
    DatasetPtr input = inputs.at(0);
    if (params.has("predicate"))
        return buildHostFilter(context, params, input);
    const std::string feature = params.string("feature", std::nullopt);
    const std::string op = params.choice("op", "==", {"==", "!=", "<", "<=", ">", ">="});
    const double value = params.number("value", std::nullopt);
    const auto index = input->spec().find(feature);
    if (!index)
        params.fail("feature", "\"" + feature + "\" is not a feature of the input (it has: " + input->spec().names() + ")");
    const FeatureSpec &f = input->spec().features[*index];
    if (f.type.isString || !f.shape.empty())
        params.fail("feature", "\"" + feature + "\" is " + f.type.name() + " " + shapeText(f.shape) +
                                   "; filter compares a numeric scalar feature (filter before batch)");
    const std::size_t i = *index;
    std::function<bool(double)> test;
    if (op == "==") test = [value](double x) { return x == value; };
    else if (op == "!=") test = [value](double x) { return x != value; };
    else if (op == "<") test = [value](double x) { return x < value; };
    else if (op == "<=") test = [value](double x) { return x <= value; };
    else if (op == ">") test = [value](double x) { return x > value; };
    else test = [value](double x) { return x >= value; };

    class FilterIterator final : public Iterator
    {
    public:
        FilterIterator(const IteratorContext &context, std::unique_ptr<Iterator> input, std::size_t feature, std::function<bool(double)> test)
            : m_runtime(context.runtime), m_input(std::move(input)), m_feature(feature), m_test(std::move(test))
        {
        }
        Result<Poll> next(Element &out) override
        {
            // A predicate that rejects everything must not keep a cancelled pipeline busy forever.
            for (std::uint64_t rejected = 0;; ++rejected) {
                if ((rejected & 1023) == 1023 && m_runtime->cancelled())
                    return cancelledError();
                auto r = m_input->next(out);
                if (!r.ok() || *r != Poll::Ready || m_test(out.tensors[m_feature].valueAsDouble(0)))
                    return r;
            }
        }

    private:
        Runtime *m_runtime;
        std::unique_ptr<Iterator> m_input;
        std::size_t m_feature;
        std::function<bool(double)> m_test;
    };
    return std::make_shared<StreamDataset>(input->spec(), context.statsFor(params.node()), [input, i, test](const IteratorContext &c) {
        return std::make_unique<FilterIterator>(c, input->makeIterator(c), i, test);
    });
}

// Row `row` of a batched tensor, copied (rows are small; the batch buffer can then be freed).
Tensor sliceRow(const Tensor &batch, std::int64_t row)
{
    Shape rowShape(batch.shape().begin() + 1, batch.shape().end());
    if (batch.isString()) {
        const std::uint64_t n = elementCount(rowShape);
        const auto &all = batch.stringValues();
        return Tensor::strings(rowShape, std::vector<std::string>(all.begin() + std::ptrdiff_t(row * n), all.begin() + std::ptrdiff_t((row + 1) * n)));
    }
    const std::size_t rowBytes = std::size_t(elementCount(rowShape) * itemSize(batch.dtype()));
    Tensor t = Tensor::allocate(batch.dtype(), rowShape);
    std::memcpy(t.mutableData(), batch.data() + std::size_t(row) * rowBytes, rowBytes);
    return t;
}

std::shared_ptr<Dataset> buildUnbatch(BuildContext &context, Params &params, const Inputs &inputs)
{
    DatasetPtr input = inputs.at(0);
    ElementSpec spec = input->spec();
    for (auto &f : spec.features) {
        if (f.shape.empty())
            params.fail("", "feature \"" + f.name + "\" is a scalar; unbatch needs every feature to have a batch dimension");
        f.shape.erase(f.shape.begin());
    }
    class UnbatchIterator final : public Iterator
    {
    public:
        explicit UnbatchIterator(std::unique_ptr<Iterator> input) : m_input(std::move(input)) {}
        Result<Poll> next(Element &out) override
        {
            while (m_row >= m_rows) {
                auto r = m_input->next(m_batch);
                if (!r.ok() || *r != Poll::Ready)
                    return r;
                m_row = 0;
                m_rows = m_batch.tensors.empty() ? 0 : m_batch.tensors[0].shape()[0];
                for (const auto &t : m_batch.tensors)
                    if (t.shape()[0] != m_rows)
                        return Error::invalid("unbatch", "features of one element have different batch sizes (" +
                                                             std::to_string(m_rows) + " and " + std::to_string(t.shape()[0]) + ")");
            }
            out.tensors.clear();
            for (const auto &t : m_batch.tensors)
                out.tensors.push_back(sliceRow(t, m_row));
            ++m_row;
            return Poll::Ready;
        }

    private:
        std::unique_ptr<Iterator> m_input;
        Element m_batch;
        std::int64_t m_row = 0, m_rows = 0;
    };
    return std::make_shared<StreamDataset>(std::move(spec), context.statsFor(params.node()), [input](const IteratorContext &c) {
        return std::make_unique<UnbatchIterator>(input->makeIterator(c));
    });
}

std::shared_ptr<Dataset> buildZip(BuildContext &context, Params &params, const Inputs &inputs)
{
    std::vector<DatasetPtr> parts;
    ElementSpec spec;
    std::int64_t card = kInfinite;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        parts.push_back(inputs.at(i));
        for (const auto &f : parts.back()->spec().features) {
            if (spec.find(f.name))
                params.fail("", "feature \"" + f.name + "\" comes from two inputs (\"" + inputs.id(i) +
                                    "\" and an earlier one); rename one with map(function=\"concat\") or select features");
            spec.features.push_back(f);
        }
        const std::int64_t c = parts.back()->cardinality();
        card = c == kUnknown || card == kUnknown ? kUnknown : card == kInfinite ? c : c == kInfinite ? card : std::min(card, c);
    }
    class ZipIterator final : public Iterator
    {
    public:
        explicit ZipIterator(std::vector<std::unique_ptr<Iterator>> inputs) : m_inputs(std::move(inputs)), m_parts(m_inputs.size()) {}
        Result<Poll> next(Element &out) override
        {
            // Parts already received are kept across Pending, so no input is read twice.
            for (std::size_t i = 0; i < m_inputs.size(); ++i) {
                if (m_parts[i])
                    continue;
                Element e;
                auto r = m_inputs[i]->next(e);
                if (!r.ok() || *r != Poll::Ready)
                    return r;
                m_parts[i] = std::move(e);
            }
            out.tensors.clear();
            for (auto &p : m_parts) {
                for (auto &t : p->tensors)
                    out.tensors.push_back(std::move(t));
                p.reset();
            }
            return Poll::Ready;
        }

    private:
        std::vector<std::unique_ptr<Iterator>> m_inputs;
        std::vector<std::optional<Element>> m_parts;
    };
    return std::make_shared<StreamDataset>(
        std::move(spec), context.statsFor(params.node()),
        [parts](const IteratorContext &c) {
            std::vector<std::unique_ptr<Iterator>> its;
            for (const auto &p : parts)
                its.push_back(p->makeIterator(c));
            return std::make_unique<ZipIterator>(std::move(its));
        },
        card);
}

} // namespace

void registerStreamOps(std::vector<OpInfo> &ops)
{
    ops.push_back({"take", "transformations", "The first count elements (all with -1), as tf.data take.",
                   {{"count", "int", "", "elements to keep; -1 keeps all", true}}, 1, 1, buildTake});
    ops.push_back({"skip", "transformations", "All but the first count elements (-1 skips all), as tf.data skip.",
                   {{"count", "int", "", "elements to drop", true}}, 1, 1, buildSkip});
    ops.push_back({"shard", "transformations", "Every num_shards-th element starting at index, as tf.data shard.",
                   {{"num_shards", "int", "", "number of shards", true}, {"index", "int", "", "this shard, 0 ≤ index < num_shards", true}}, 1, 1,
                   buildShard});
    ops.push_back({"repeat", "transformations", "The input count times (forever with -1 or no count), as tf.data repeat.",
                   {{"count", "int", "-1", "passes; -1 repeats forever"}}, 1, 1, buildRepeat});
    ops.push_back({"filter", "transformations",
                   "Keeps elements whose scalar feature compares true with value, or for which a Python predicate returns true "
                   "(tf.data filter).",
                   {{"feature", "feature", "", "a numeric scalar feature (needed without predicate)"},
                    {"op", "enum:==|!=|<|<=|>|>=", "==", "comparison"},
                    {"value", "number", "", "what the feature is compared with (needed without predicate)"},
                    {"predicate", "callable", "",
                     "\"module:function\" called with a dict of numpy arrays, returning true to keep the element (absent: the comparison)"}},
                   1, 1, buildFilter});
    ops.push_back({"unbatch", "transformations", "Splits each element along its first dimension, as tf.data unbatch.", {}, 1, 1,
                   buildUnbatch});
    ops.push_back({"zip", "transformations",
                   "One element from each input, their features merged (names must differ), as tf.data.Dataset.zip; ends with "
                   "the shortest input. Inputs are taken in edge order.",
                   {}, 2, -1, buildZip});
}

} // namespace sluice::pipeline
