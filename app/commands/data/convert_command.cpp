// sluice convert IN... --to tfrecord|npy --out DIR: datasets from one format into a folder of
// shards with a manifest, the format of the pipeline's `save` and `load`. It is a pipeline:
// the inputs' source (convert_inputs.h) → batch → save, run once to its end, so the shards are
// written in parallel, atomically and exactly as a project's save would write them.
//
// Under mpirun each process converts its share (by file where there are at least as many files
// as processes, else by row, as the training's worker sharding does) into DIR/rank-K (K = its
// rank, 5 digits), a complete dataset of its own; `load` with path "DIR/rank-*" reads them all,
// one after another.
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "cli/progress_bar.h"
#include "commands/data/convert_inputs.h"
#include "io/writers/shard_writer.h"
#include "pipeline/engine/pipeline.h"
#include "train/distribute/mpi_reducer.h"

#include <QDir>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>

namespace sluice::commands {
namespace {

// Rows per element between the source and save: few elements to hand over, big blocks to copy.
constexpr std::int64_t kBatchRows = 1024;

std::atomic<pipeline::Pipeline *> g_converting{nullptr};
extern "C" void onConvertInterrupt(int)
{
    // An atomic store only (Runtime::cancel): safe in a signal handler. The pass then stops
    // and its shards are removed; no manifest is written.
    if (auto *p = g_converting.load())
        p->cancel();
}

std::string padded(int value)
{
    std::string s = std::to_string(value);
    return std::string(s.size() < 5 ? 5 - s.size() : 0, '0') + s;
}

// The option a build error of the generated pipeline is about, with the reason alone: the user
// wrote options, not nodes.
void printBuildError(const Error &e)
{
    static const std::map<std::string, std::string> options{{"features", "--features"}, {"format", "--to"},
                                                            {"compression", "--compression"}, {"num_shards", "--shards"},
                                                            {"path", "--out"}, {"overwrite", "--overwrite"}};
    std::string reason = e.reason;
    // Params::fail's text: `node "save" (save): format: <reason>`.
    if (const std::size_t at = reason.find("): "); at != std::string::npos && reason.starts_with("node \""))
        reason = reason.substr(at + 3);
    if (!e.param.empty() && reason.starts_with(e.param))
        if (const std::size_t colon = reason.find(": "); colon != std::string::npos)
            reason = reason.substr(colon + 2);
    const auto option = options.find(e.param);
    if (e.node == "save" && option != options.end())
        cli::printError(option->second, reason);
    else if (e.node == "source")
        cli::printError("IN", reason);
    else
        cli::printError(e);
}

// Under mpirun: this process's rank and the process count, or nothing after printing why.
struct Ranks
{
    int count = 1, index = 0;
    std::unique_ptr<train::GradientReducer> reducer; // for the closing sum of rows
};

std::optional<Ranks> ranks()
{
    Ranks r;
    if (!train::launchedByMpi())
        return r;
    auto reducer = train::makeMpiReducer();
    if (!reducer) {
        cli::printError(reducer.error());
        return std::nullopt;
    }
    r.count = (*reducer)->processCount();
    r.index = (*reducer)->processIndex();
    r.reducer = std::move(*reducer);
    return r;
}

// Ends a convert with `code`; with several processes, a failed one ends every rank (the others
// would wait forever in the closing sum).
int endWith(int code, const Ranks &r)
{
    if (code != cli::Success && r.count > 1)
        train::abortAllRanks(code);
    train::finalizeMpi();
    return code;
}

// This process's share of the source: its files, or every count-th row after a shard node.
// Returns the rows it will convert, where known.
std::optional<std::uint64_t> takeShare(ConvertSource &source, nlohmann::json &nodes, const Ranks &r)
{
    if (r.count == 1)
        return source.rows;
    if (!source.files.empty() && source.files.size() >= std::size_t(r.count)) {
        nlohmann::json mine = nlohmann::json::array();
        std::uint64_t rows = 0;
        for (std::size_t i = std::size_t(r.index); i < source.files.size(); i += std::size_t(r.count)) {
            mine.push_back(source.files[i]);
            rows += source.fileRows[i];
        }
        source.node.params[source.fileParam] = mine;
        return rows;
    }
    nodes.push_back({{"id", "rank_shard"}, {"op", "shard"}, {"params", {{"num_shards", r.count}, {"index", r.index}}}});
    if (!source.rows)
        return std::nullopt;
    const auto total = *source.rows, count = std::uint64_t(r.count), index = std::uint64_t(r.index);
    return total > index ? (total - index + count - 1) / count : 0;
}

} // namespace

int convert(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Converts CSV, TFRecord, .npy or Parquet files, or an image folder, into a folder of shards with a manifest.json:\n"
        "the format the pipeline's save op writes and its load op reads (tf.data's Dataset.save / load).\n\n"
        "Examples:\n"
        "  sluice convert data/train.csv --to tfrecord --out data/train-records\n"
        "  sluice convert data/part-*.csv --to tfrecord --shards 8 --compression GZIP --out data/records --threads 8\n"
        "  sluice convert data/x.npy data/y.npy --to npy --shards 4 --out data/xy-shards\n"
        "  sluice convert data/train-*.tfrecord --to npy --features image,label --out data/arrays --overwrite\n"
        "  sluice convert data/pictures --to tfrecord --shards 16 --out data/picture-records\n"
        "  sluice convert data/events-*.parquet --to npy --features user,item,label --shards 4 --out data/events\n"
        "  mpirun -np 4 sluice convert data/part-*.csv --to tfrecord --out data/records   # DIR/rank-00000 … rank-00003\n\n"
        "Inputs: CSV (.csv, .tsv): a feature per column, typed as `sluice inspect` infers it (whole numbers\n"
        "int64, other numbers float32, else string; an empty field is NaN, or \"\" in a string column).\n"
        "TFRecord: tf.train.Example features with the same number of values in every record.\n"
        ".npy: each file a feature named after it (all with the same number of rows).\n"
        "Parquet (.parquet, .pq): a feature per column from_parquet reads (numbers, booleans, strings, lists\n"
        "of numbers of one length; others are left out, and naming one in --features is an error); a null is\n"
        "NaN in a floating-point column, \"\" in a string one, and stops the run in others.\n"
        "An image folder: the pictures' encoded bytes as the string feature 'image' (no decoding) and,\n"
        "with a sub-folder per class, 'label'; its 'path' only if --features names it. npy holds numbers only.\n"
        "Rows go to the shards in turn (row r to shard r mod N); load reads them back in the input's order.\n"
        "CSV and TFRecord inputs are read twice: once to infer their types, once to convert. A run that\n"
        "fails or is interrupted (Ctrl-C) leaves no manifest: a folder without one is not a dataset.");
    const QCommandLineOption to("to", "The shards' format: tfrecord (tf.train.Example, any features) or npy (numbers).", "FORMAT");
    const QCommandLineOption out({"o", "out"}, "The folder to write (created if missing).", "DIR");
    const QCommandLineOption shards("shards", "Shard files (per feature, for npy), written in parallel (default 1).", "N", "1");
    const QCommandLineOption features("features", "The features to convert, comma-separated (default: all).", "A,B,...");
    const QCommandLineOption compression("compression", "GZIP: compress the TFRecord shards (default: none).", "GZIP");
    const QCommandLineOption overwrite("overwrite", "Replace a dataset already in DIR (once the new one is complete).");
    const QCommandLineOption threads("threads", "Threads (default: all cores).", "N", "0");
    parser.addOptions({to, out, shards, features, compression, overwrite, threads});
    parser.addPositionalArgument("IN", "CSV, TFRecord, .npy or Parquet files, or one image folder.", "IN...");
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;

    std::vector<std::string> inputs;
    for (const QString &in : parser.positionalArguments())
        inputs.push_back(in.toStdString());
    if (inputs.empty()) {
        cli::printError("convert", "no IN given (try 'sluice convert --help')");
        return cli::BadInput;
    }
    if (!parser.isSet(to)) {
        cli::printError("--to", "is required: tfrecord or npy");
        return cli::BadInput;
    }
    const std::string format = parser.value(to).toStdString();
    if (format != "tfrecord" && format != "npy") {
        cli::printError("--to", "'" + format + "' is not tfrecord or npy");
        return cli::BadInput;
    }
    if (!parser.isSet(out) || parser.value(out).isEmpty()) {
        cli::printError("--out", "is required: the folder to write");
        return cli::BadInput;
    }
    const auto shardCount = cli::parseCount("shards", parser.value(shards), 1);
    if (!shardCount)
        return cli::BadInput;
    if (*shardCount > 100000) {
        cli::printError("--shards", std::to_string(*shardCount) + " is more than 100000");
        return cli::BadInput;
    }
    const std::string gzip = parser.value(compression).toStdString();
    if (parser.isSet(compression) && gzip != "GZIP") {
        cli::printError("--compression", "'" + gzip + "' is not GZIP (leave the option out for none)");
        return cli::BadInput;
    }
    if (parser.isSet(compression) && format == "npy") {
        cli::printError("--compression", "applies to --to tfrecord; npy shards are not compressed");
        return cli::BadInput;
    }
    const auto threadCount = cli::parseCount("threads", parser.value(threads));
    if (!threadCount)
        return cli::BadInput;
    std::vector<std::string> selected;
    if (parser.isSet(features)) {
        for (const QString &name : parser.value(features).split(',')) {
            if (name.trimmed().isEmpty()) {
                cli::printError("--features", "'" + parser.value(features).toStdString() + "' has an empty name");
                return cli::BadInput;
            }
            selected.push_back(name.trimmed().toStdString());
        }
    }

    auto r = ranks();
    if (!r)
        return cli::BadInput;
    auto source = convertSource(inputs, selected);
    if (!source) {
        cli::printError(source.error());
        return endWith(cli::BadInput, *r);
    }
    std::string folder = QDir::cleanPath(parser.value(out)).toStdString();
    if (r->count > 1)
        folder = (std::filesystem::path(folder) / ("rank-" + padded(r->index))).string();
    std::error_code ec;
    if (!parser.isSet(overwrite) && std::filesystem::exists(std::filesystem::path(folder) / kDatasetManifestName, ec)) {
        cli::printError("--out", folder + " already holds a dataset (manifest.json); add --overwrite to replace it, or choose another folder");
        return endWith(cli::BadInput, *r);
    }

    nlohmann::json nodes = nlohmann::json::array();
    nodes.push_back({{"id", source->node.id}, {"op", source->node.op}, {"params", source->node.params}});
    const auto rows = takeShare(*source, nodes, *r);
    nodes.front()["params"] = source->node.params; // takeShare may have changed the file list
    nodes.push_back({{"id", "batch"}, {"op", "batch"}, {"params", {{"batch_size", kBatchRows}}}});
    nlohmann::json save{{"path", folder}, {"format", format}, {"num_shards", *shardCount}, {"features", source->features},
                        {"overwrite", parser.isSet(overwrite)}};
    if (!gzip.empty())
        save["compression"] = gzip;
    nodes.push_back({{"id", "save"}, {"op", "save"}, {"params", save}});
    nlohmann::json edges = nlohmann::json::array();
    for (std::size_t i = 1; i < nodes.size(); ++i)
        edges.push_back({nodes[i - 1]["id"], nodes[i]["id"]});
    const nlohmann::json document{{"format", "sluice-project"}, {"version", 1}, {"name", "convert"},
                                  {"pipeline", {{"nodes", nodes}, {"edges", edges}}}};
    auto project = Project::fromJson(document, QDir::currentPath().toStdString(), "convert");
    if (!project) {
        cli::printError(project.error());
        return endWith(cli::BadInput, *r);
    }
    pipeline::PipelineOptions options;
    options.threads = int(std::min<std::uint64_t>(*threadCount, 1024));
    options.autotune = false; // one pass, no stage to tune
    auto built = pipeline::Pipeline::build(*project, options);
    if (!built) {
        printBuildError(built.error());
        return endWith(cli::BadInput, *r);
    }
    pipeline::Pipeline &pipe = **built;

    // The rows to expect, for the progress bar: known from the inputs, or the source's count.
    std::uint64_t expected = rows.value_or(0);
    if (!rows) {
        pipeline::PipelineOptions sourceOnly = options;
        sourceOnly.outputNode = nodes[nodes.size() - 3]["id"].get<std::string>();
        if (auto count = pipeline::Pipeline::build(*project, sourceOnly); count && (*count)->cardinality() >= 0)
            expected = std::uint64_t((*count)->cardinality());
    }
    std::optional<cli::ProgressBar> bar;
    if (r->index == 0)
        bar.emplace("convert " + folder, expected, "rows");
    g_converting = &pipe;
    auto previous = std::signal(SIGINT, onConvertInterrupt);
    std::uint64_t done = 0;
    std::optional<Error> failure;
    for (;;) {
        auto next = pipe.next();
        if (!next.ok()) {
            failure = next.error();
            break;
        }
        if (!*next)
            break; // save committed the manifest before ending the pass
        const auto &tensors = (*next)->tensors;
        done += tensors.empty() || tensors.front().shape().empty() ? 1 : std::uint64_t(tensors.front().shape().front());
        if (bar)
            bar->update(done);
    }
    std::signal(SIGINT, previous);
    g_converting = nullptr;
    if (bar)
        bar->finish();
    if (failure) {
        const std::string prefix = r->count > 1 ? "rank " + std::to_string(r->index) + ": " : "";
        if (failure->isCancelled())
            cli::printError("convert", prefix + "cancelled; " + folder + " holds no new dataset");
        else
            cli::printError(prefix + failure->what, failure->reason);
        return endWith(cli::RunFailed, *r);
    }
    const std::string what = std::to_string(*shardCount) + " " + format + " shard" + (*shardCount == 1 ? "" : "s");
    if (r->count == 1) {
        std::printf("%s: %llu rows in %s\n", folder.c_str(), (unsigned long long)done, what.c_str());
        return endWith(cli::Success, *r);
    }
    double total[1] = {double(done)};
    if (Status s = r->reducer->sumAcrossProcesses(total); !s) {
        cli::printError(s.error());
        return endWith(cli::RunFailed, *r);
    }
    if (r->index == 0)
        std::printf("%s: %.0f rows in %d datasets of %s each (rank-*)\n", QDir::cleanPath(parser.value(out)).toStdString().c_str(), total[0],
                    r->count, what.c_str());
    return endWith(cli::Success, *r);
}

} // namespace sluice::commands
