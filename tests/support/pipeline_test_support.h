#pragma once
// Helpers for the pipeline tests: projects from short JSON literals, building their pipeline,
// collecting the elements of one pass as plain values, and writing small .npy inputs.

#include "io/dtype.h"
#include "pipeline/engine/pipeline.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include <QString>
#include <QStringList>
#include <span>
#include <string>
#include <vector>

namespace sluice::test {

// A whole project document around a pipeline given as {"nodes": [...], "edges": [...]}.
std::string projectText(const std::string &pipelineJson);
// The pipeline object of a linear chain: nodes (JSON objects with an "id") joined in order.
std::string chain(const std::vector<std::string> &nodes);
// One node as JSON: {"id": id, "op": op, "params": params}.
std::string node(const std::string &id, const std::string &op, const std::string &params = "{}");
std::string op(const std::string &id, const std::string &name, const nlohmann::json &params = nlohmann::json::object());

// Builds the pipeline of `pipelineJson` (relative paths resolve under `folder`); null when it
// fails, with the error in `error` (if given) and printed otherwise.
std::unique_ptr<pipeline::Pipeline> buildPipeline(const std::string &pipelineJson, const std::string &folder = "/",
                                                  pipeline::PipelineOptions options = {}, std::string *error = nullptr);
// The message building `pipelineJson` fails with, or "" when it builds.
std::string buildError(const std::string &pipelineJson, const std::string &folder = "/");

// The elements of one pass, as values of one feature.
struct Pass
{
    std::vector<std::vector<double>> values;  // per element: the feature's values, flat, in C order
    std::vector<pipeline::Shape> shapes;      // per element: the feature's shape
    std::vector<std::string> bytes;           // per element: the feature's raw bytes (numeric features)
    std::vector<pipeline::Element> elements;  // the elements themselves
    std::string error;                        // the error next() returned ("" when the pass ended)

    bool ok() const { return error.empty(); }
    std::size_t size() const { return values.size(); }
    std::vector<double> flat() const;                  // every element's values, one after another
    std::vector<std::int64_t> firstValues() const;     // each element's first value (scalars, as integers)
    std::vector<std::int64_t> batchSizes() const;      // each element's leading dimension
};

// Reads elements until the end of the pass (or an error, or `limit` elements).
Pass collect(pipeline::Pipeline &pipeline, const std::string &feature = "value",
             std::size_t limit = std::numeric_limits<std::size_t>::max());
// Builds `pipelineJson` and collects its first pass; a build error lands in Pass::error.
Pass runPass(const std::string &pipelineJson, const std::string &feature = "value", const std::string &folder = "/",
             pipeline::PipelineOptions options = {});

// Integer sequences for comparisons: {begin, begin + 1, …} below end.
std::vector<std::int64_t> iota(std::int64_t begin, std::int64_t end);
std::vector<std::int64_t> sorted(std::vector<std::int64_t> values);
// Equal lengths and values within `tolerance` (NaN equals NaN).
bool sameValues(const std::vector<double> &a, const std::vector<double> &b, double tolerance = 0);
// The values of a fixtures.json entry, as doubles.
std::vector<double> manifestValues(const nlohmann::json &entry);

// Writes a C-order .npy of native byte order; `rowShape` is the shape without the row count.
void writeNpy(const std::string &path, DType dtype, const std::vector<std::uint64_t> &rowShape, std::span<const std::byte> data);
template <typename T>
void writeNpy(const std::string &path, const std::vector<T> &values, const std::vector<std::uint64_t> &rowShape = {})
{
    writeNpy(path, DTypeOf<T>::value, rowShape, std::as_bytes(std::span<const T>(values)));
}

// The built `sluice` executable, for scripts a test runs (they take it as $SLUICE).
std::string sluiceBinary();

// The JSON objects of a `--json` output, one a line (lines that are not objects are skipped; a
// line that does not parse becomes a discarded value, which no key check accepts).
std::vector<nlohmann::json> jsonLines(const QString &out);

// Options for a pipeline whose causes a test sets by hand: `threads`, and no AUTOTUNE to undo them.
pipeline::PipelineOptions untunedOptions(int threads);

// A small copy of example data and projects, as a new user gets them: runs
// scripts/generate-example-data.sh KINDS... into ROOT/data (with the given environment settings,
// e.g. SLUICE_EXAMPLE_ROWS or SLUICE_EXAMPLE_SIZE) and copies each projects/NAME.sluice into ROOT,
// where its relative data paths resolve. Returns an error text, or nothing on success.
std::optional<std::string> writeExampleCopy(const QString &root, const QStringList &kinds, const QStringList &projects,
                                            const std::map<QString, QString> &settings);

// `contains` for messages, with the message in the failure text.
bool contains(const std::string &text, const std::string &part);

} // namespace sluice::test
