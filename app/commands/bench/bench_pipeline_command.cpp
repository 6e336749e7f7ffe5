// sluice bench pipeline FILE: the figures of BENCHMARKS.md for the pipeline engine.
//   classic:  from_npy → global_shuffle → batch(B) → prefetch(AUTOTUNE) over FILE, samples/s
//   limit:    plain threads copying shuffled rows out of the same mapping, nothing else: the
//             practical ceiling the classic pipeline is stated against.
//   overhead: the cost per element of an identity map stage, on batched elements (FILE →
//             batch(B) → map(identity) × K) and on single elements (range → map × K), each
//             set against the same chain with no map in the same run.
#include "commands/commands.h"
#include "commands/bench/row_gather_limit.h"

#include "cli/cli_support.h"
#include "io/storage/page_cache.h"
#include "pipeline/engine/pipeline.h"
#include "telemetry/cpu_info.h"
#include "telemetry/process_memory.h"

#include <nlohmann/json.hpp>

#include <QFileInfo>

#include <chrono>
#include <cstdio>

namespace sluice::commands {
namespace {

using Clock = std::chrono::steady_clock;

nlohmann::json node(const std::string &id, const std::string &op, nlohmann::json params)
{
    return {{"id", id}, {"op", op}, {"params", std::move(params)}};
}

// A linear pipeline from nodes, as a project.
Result<Project> chain(const std::vector<nlohmann::json> &nodes)
{
    nlohmann::json doc{{"format", "sluice-project"}, {"version", 1}, {"name", "bench"}};
    doc["pipeline"]["nodes"] = nodes;
    doc["pipeline"]["edges"] = nlohmann::json::array();
    for (std::size_t i = 1; i < nodes.size(); ++i)
        doc["pipeline"]["edges"].push_back({nodes[i - 1]["id"], nodes[i]["id"]});
    return Project::fromJson(doc, ".", "bench");
}

struct Timed
{
    std::uint64_t elements = 0, rows = 0, bytes = 0;
    double seconds = 0;
    pipeline::PipelineSnapshot snapshot;
};

// Iterates passes until `seconds` have passed (at least one pass when `wholePasses`).
Result<Timed> timeRun(const Project &project, int threads, double seconds, bool wholePasses, std::uint64_t residentBudget = 0)
{
    pipeline::PipelineOptions options;
    options.threads = threads;
    options.residentBudgetBytes = residentBudget;
    options.seed = 1;
    auto built = pipeline::Pipeline::build(project, options);
    if (!built.ok())
        return built.error();
    auto &pipe = **built;
    Timed t;
    const auto start = Clock::now();
    for (;;) {
        auto r = pipe.next();
        if (!r.ok())
            return r.error();
        const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        if (!*r) {
            if (wholePasses && elapsed >= seconds)
                break;
            pipe.restart();
            continue;
        }
        ++t.elements;
        const auto &first = (**r).tensors.front();
        t.rows += first.shape().empty() ? 1 : std::uint64_t(first.shape()[0]);
        t.bytes += (**r).nbytes();
        if (!wholePasses && elapsed >= seconds)
            break;
    }
    t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    t.snapshot = pipe.snapshot();
    return t;
}

} // namespace

int benchPipeline(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Pipeline figures: the classic from_npy → global_shuffle → batch → prefetch over FILE (samples/s), set against\n"
        "plain threads copying the same shuffled rows (the practical limit),\n"
        "and the per-element cost of an identity map stage, batched and unbatched.\n\n"
        "Examples:\n  sluice bench pipeline data/x.npy --batch 256 --threads 2 --seconds 5 --json\n"
        "  sluice bench pipeline data/x.npy --map-chain 20   # a longer chain of identity maps for the overhead\n"
        "  sluice bench pipeline big/x.npy --cold --batch 1024 --seconds 30 --resident-budget 2G   # larger than RAM: from storage");
    parser.addPositionalArgument("pipeline", "The benchmark name.");
    parser.addPositionalArgument("FILE", "A .npy file of rows.");
    parser.addOption({"batch", "Rows per batch (default 256).", "N", "256"});
    parser.addOption({"threads", "Arena threads (default: all cores).", "N", "0"});
    parser.addOption({"seconds", "Seconds per measurement (default 5).", "S", "5"});
    parser.addOption({"map-chain", "Identity maps in the overhead chain (default 10).", "K", "10"});
    parser.addOption({"cold", "Larger-than-RAM mode: drop FILE from the page cache first, so rows come from storage, and "
                              "measure the classic pipeline only (with its storage figures and peak resident memory)."});
    parser.addOption({"resident-budget", "Resident memory the source may hold, e.g. 2G (default: a quarter of RAM).", "SIZE"});
    parser.addOption({"json", "One JSON object on stdout."});
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 2) {
        cli::printError("bench pipeline", "usage: sluice bench pipeline FILE [options]");
        return cli::BadInput;
    }
    const auto batch = cli::parseCount("batch", parser.value("batch"), 1);
    const auto threads = cli::parseCount("threads", parser.value("threads"));
    const auto seconds = cli::parseSeconds("seconds", parser.value("seconds"));
    const auto k = cli::parseCount("map-chain", parser.value("map-chain"), 1);
    if (!batch || !threads || !seconds || !k)
        return cli::BadInput;
    std::uint64_t residentBudget = 0;
    if (parser.isSet("resident-budget")) {
        auto b = cli::parseByteSize("resident-budget", parser.value("resident-budget"));
        if (!b)
            return cli::BadInput;
        residentBudget = std::max<std::uint64_t>(*b, 1);
    }
    const bool cold = parser.isSet("cold");
    const std::string file = QFileInfo(positional[1]).absoluteFilePath().toStdString();
    const int usedThreads = *threads ? int(*threads) : defaultThreadCount();

    auto fail = [](const Error &e) {
        cli::printError(e);
        return e.kind == Error::Kind::InvalidArgument || e.kind == Error::Kind::NotFound ? int(cli::BadInput) : int(cli::RunFailed);
    };
    const nlohmann::json source = node("src", "from_npy", {{"features", {{"x", file}}}});
    const nlohmann::json batchNode = node("batch", "batch", {{"batch_size", *batch}});

    // 1. The classic pipeline.
    auto classic = chain({source, node("shuffle", "global_shuffle", {{"seed", 1}}), batchNode,
                          node("prefetch", "prefetch", {{"buffer_size", "AUTOTUNE"}})});
    if (!classic.ok())
        return fail(classic.error());
    double cachedAfterEviction = -1;
    if (cold) {
        auto left = evictFromPageCache(file);
        if (!left.ok())
            return fail(left.error());
        cachedAfterEviction = *left;
    }
    resetPeakRss();
    auto c = timeRun(*classic, usedThreads, *seconds, false, residentBudget);
    if (!c.ok())
        return fail(c.error());
    const std::uint64_t peakRss = peakRssBytes();
    const double samplesPerSecond = double(c->rows) / c->seconds;
    if (cold) { // the map-overhead figures mean nothing while rows come from storage
        if (parser.isSet("json")) {
            nlohmann::json j{{"tool", "sluice"},     {"benchmark", "pipeline"}, {"mode", "cold"},
                             {"file", file},         {"batch", *batch},         {"threads", usedThreads},
                             {"seconds", c->seconds}, {"samples", c->rows},     {"samples_per_s", samplesPerSecond},
                             {"bytes_per_s", double(c->bytes) / c->seconds},
                             {"peak_rss_bytes", peakRss},
                             {"cached_after_eviction", cachedAfterEviction},
                             {"bottleneck", c->snapshot.bottleneck},
                             {"bottleneck_reason", c->snapshot.bottleneckReason},
                             {"stats", c->snapshot.toJson()}};
            std::printf("%s\n", j.dump().c_str());
        } else {
            std::printf("bench pipeline %s (cold: %.0f%% left in the page cache): batch %llu, %d threads\n", file.c_str(),
                        100 * cachedAfterEviction, (unsigned long long)*batch, usedThreads);
            std::printf("  from_npy → global_shuffle → batch → prefetch   %.0f samples/s  (%s), peak RSS %s\n", samplesPerSecond,
                        cli::humanRate(double(c->bytes) / c->seconds).c_str(), cli::humanBytes(double(peakRss)).c_str());
            std::printf("  bottleneck: %s (%s)\n", c->snapshot.bottleneck.c_str(), c->snapshot.bottleneckReason.c_str());
        }
        return cli::Success;
    }

    // The practical limit, same file, same threads, same batch, right after the pipeline.
    auto limit = measureRowGatherLimit(file, *batch, usedThreads, *seconds);
    if (!limit.ok())
        return fail(limit.error());
    const double limitSamplesPerSecond = double(limit->rows) / limit->seconds;

    // 2. Map overhead on batches: FILE → batch → map × K, against FILE → batch.
    auto withMaps = [&](std::vector<nlohmann::json> nodes, bool sequential) {
        for (std::uint64_t i = 0; i < *k; ++i) {
            nlohmann::json params{{"function", "identity"}};
            if (!sequential)
                params["num_parallel_calls"] = 1;
            nodes.push_back(node("map" + std::to_string(i), "map", params));
        }
        return chain(nodes);
    };
    const nlohmann::json sequentialBatch = node("batch", "batch", {{"batch_size", *batch}, {"num_parallel_calls", 1}});
    auto batchedBase = chain({source, sequentialBatch});
    auto batchedMaps = withMaps({source, sequentialBatch}, true);
    // 3. The same on single elements: range → map × K, against range.
    const nlohmann::json range = node("src", "range", {{"stop", 1'000'000}});
    auto rangeBase = chain({range});
    auto rangeMaps = withMaps({range}, true);
    for (auto *p : {&batchedBase, &batchedMaps, &rangeBase, &rangeMaps})
        if (!p->ok())
            return fail(p->error());
    auto bb = timeRun(*batchedBase, 1, *seconds / 2, false);
    auto bm = timeRun(*batchedMaps, 1, *seconds / 2, false);
    auto rb = timeRun(*rangeBase, 1, *seconds / 2, false);
    auto rm = timeRun(*rangeMaps, 1, *seconds / 2, false);
    for (auto *t : {&bb, &bm, &rb, &rm})
        if (!t->ok())
            return fail(t->error());
    auto perRowNs = [](const Timed &t) { return t.seconds * 1e9 / double(t.rows); };
    const double batchedOverhead = (perRowNs(*bm) - perRowNs(*bb)) / double(*k);
    const double elementOverhead = (perRowNs(*rm) - perRowNs(*rb)) / double(*k);

    if (parser.isSet("json")) {
        nlohmann::json j{{"tool", "sluice"},
                         {"benchmark", "pipeline"},
                         {"file", file},
                         {"batch", *batch},
                         {"threads", usedThreads},
                         {"seconds", c->seconds},
                         {"samples", c->rows},
                         {"samples_per_s", samplesPerSecond},
                         {"bytes_per_s", double(c->bytes) / c->seconds},
                         {"bottleneck", c->snapshot.bottleneck},
                         {"gather_limit_samples_per_s", limitSamplesPerSecond},
                         {"gather_limit_threads", limit->threads},
                         {"share_of_gather_limit", samplesPerSecond / limitSamplesPerSecond},
                         {"map_chain", *k},
                         {"map_overhead_batched_ns_per_element", batchedOverhead},
                         {"map_overhead_unbatched_ns_per_element", elementOverhead},
                         {"stats", c->snapshot.toJson()}};
        std::printf("%s\n", j.dump().c_str());
        return cli::Success;
    }
    std::printf("bench pipeline %s: batch %llu, %d threads\n", file.c_str(), (unsigned long long)*batch, usedThreads);
    std::printf("  from_npy → global_shuffle → batch → prefetch   %.0f samples/s  (%s)\n", samplesPerSecond,
                cli::humanRate(double(c->bytes) / c->seconds).c_str());
    std::printf("  plain %d-thread row gather (the limit)          %.0f samples/s  (pipeline at %.0f%% of it)\n", limit->threads,
                limitSamplesPerSecond, 100 * samplesPerSecond / limitSamplesPerSecond);
    std::printf("  identity map, per element, batched by %llu      %.3f ns\n", (unsigned long long)*batch, batchedOverhead);
    std::printf("  identity map, per element, unbatched           %.1f ns\n", elementOverhead);
    return cli::Success;
}

} // namespace sluice::commands
