// sluice bench read FILE: gather batches of rows from the mapping, as the pipeline does, and
// report samples/s and bytes/s next to this machine's memcpy bandwidth from the same run.
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "io/formats/npy_file.h"
#include "io/formats/npz_file.h"
#include "io/storage/page_cache.h"
#include "io/storage/read_pass.h"
#include "telemetry/memcpy_bandwidth.h"

#include <nlohmann/json.hpp>

#include "telemetry/cpu_info.h"

#include <cstdio>

namespace sluice::commands {
namespace {

Result<NdArray> openArray(const std::string &path, const std::string &member)
{
    if (member.empty())
        return openNpy(path);
    auto npz = NpzFile::open(path);
    if (!npz)
        return npz.error();
    return npz->load(member);
}

int benchRead(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Gathers batches of rows from a memory-mapped .npy into a batch buffer, in file order or a fresh\n"
        "random order per pass, and reports samples/s and bytes/s against single-thread memcpy bandwidth\n"
        "measured in the same run. The other benchmarks: 'sluice bench pipeline --help', 'sluice bench train --help',\n"
        "'sluice bench storage --help'.\n\n"
        "Examples:\n"
        "  sluice bench read data/x.npy --order shuffled --batch 256 --threads 2 --seconds 10 --json\n"
        "  sluice bench read data/x.npy --order shuffled --passes 1 --seed 3 --verify\n"
        "  sluice bench read big/x.npy --order shuffled --batch 1024 --cold   # from storage, not the page cache\n"
        "  sluice bench read data/train.npz --member x --order sequential");
    const QCommandLineOption order("order", "sequential or shuffled.", "ORDER", "sequential");
    const QCommandLineOption batch("batch", "Rows per batch.", "N", "256");
    const QCommandLineOption threads("threads", "Threads (default: all cores).", "N", "0");
    const QCommandLineOption seconds("seconds", "Run for this long.", "S", "5");
    const QCommandLineOption passes("passes", "Run exactly N full passes instead of --seconds.", "N");
    const QCommandLineOption seed("seed", "Seed of the shuffled order.", "S", "0");
    const QCommandLineOption member("member", "Array inside a .npz to read.", "NAME");
    const QCommandLineOption verify("verify", "Checksum every gathered row (slower; for correctness checks).");
    const QCommandLineOption cold("cold", "Larger-than-RAM mode: drop FILE from the page cache first, so the rows come "
                                          "from storage (a file larger than RAM never stays cached anyway).");
    const QCommandLineOption json("json", "Print one JSON object.");
    parser.addOptions({order, batch, threads, seconds, passes, seed, member, verify, cold, json});
    parser.addPositionalArgument("read", "The benchmark: read.");
    parser.addPositionalArgument("FILE", "A .npy file (or .npz with --member).");
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 2 || positional[0] != "read") {
        cli::printError("bench", "usage: sluice bench read FILE [options] (try 'sluice bench --help')");
        return cli::BadInput;
    }

    ReadPassOptions options;
    if (parser.value(order) == "shuffled")
        options.order = ReadPassOptions::Order::Shuffled;
    else if (parser.value(order) != "sequential") {
        cli::printError("--order", "'" + parser.value(order).toStdString() + "' is not sequential or shuffled");
        return cli::BadInput;
    }
    const auto batchRows = cli::parseCount("batch", parser.value(batch), 1);
    const auto threadCount = cli::parseCount("threads", parser.value(threads));
    const auto secondsValue = cli::parseSeconds("seconds", parser.value(seconds));
    const auto seedValue = cli::parseCount("seed", parser.value(seed));
    if (!batchRows || !threadCount || !secondsValue || !seedValue)
        return cli::BadInput;
    if (parser.isSet(passes) && parser.isSet(seconds)) {
        cli::printError("--passes", "runs exactly N passes: give --passes or --seconds, not both");
        return cli::BadInput;
    }
    if (parser.isSet(seed) && options.order == ReadPassOptions::Order::Sequential) {
        cli::printError("--seed", "seeds the shuffled order: it applies to --order shuffled");
        return cli::BadInput;
    }
    if (parser.isSet(passes)) {
        const auto n = cli::parseCount("passes", parser.value(passes), 1);
        if (!n)
            return cli::BadInput;
        options.passes = *n;
    }
    options.batchRows = *batchRows;
    options.threads = int(*threadCount);
    options.seconds = *secondsValue;
    options.seed = *seedValue;
    options.verify = parser.isSet(verify);

    const std::string path = positional[1].toStdString();
    auto array = openArray(path, parser.value(member).toStdString());
    if (!array) {
        cli::printError(array.error());
        return cli::BadInput;
    }
    if (parser.isSet(cold)) {
        if (auto left = evictFromPageCache(path); !left.ok()) {
            cli::printError(left.error());
            return cli::RunFailed;
        }
    }
    auto result = runReadPass(*array, options);
    if (!result) {
        cli::printError(result.error());
        return cli::BadInput;
    }
    const double memcpyRate = measureMemcpyBandwidth();
    const ReadPassResult &r = *result;
    const int usedThreads = options.threads > 0 ? options.threads : defaultThreadCount();
    const char *orderName = options.order == ReadPassOptions::Order::Shuffled ? "shuffled" : "sequential";

    if (parser.isSet(json)) {
        nlohmann::json j{{"file", path},
                         {"order", orderName},
                         {"batch", options.batchRows},
                         {"threads", usedThreads},
                         {"row_bytes", array->rowBytes()},
                         {"seconds", r.seconds},
                         {"passes", r.passes},
                         {"samples", r.samples},
                         {"samples_per_s", r.samplesPerSecond()},
                         {"bytes_per_s", r.bytesPerSecond()},
                         {"memcpy_bytes_per_s", memcpyRate},
                         {"fraction_of_memcpy", r.bytesPerSecond() / memcpyRate},
                         {"peak_rss_bytes", r.peakRssBytes}};
        if (options.verify)
            j["checksum"] = r.checksum;
        std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return cli::Success;
    }
    std::printf("bench read %s: %s, batch %llu, %d threads, %.2f s, %.2f passes\n", path.c_str(), orderName,
                static_cast<unsigned long long>(options.batchRows), usedThreads, r.seconds, r.passes);
    std::printf("  samples/s        %.0f\n", r.samplesPerSecond());
    std::printf("  bytes/s          %s  (%.0f%% of single-thread memcpy)\n", cli::humanRate(r.bytesPerSecond()).c_str(),
                100 * r.bytesPerSecond() / memcpyRate);
    std::printf("  memcpy           %s  (one thread, measured in this run)\n", cli::humanRate(memcpyRate).c_str());
    std::printf("  peak resident    %s\n", cli::humanBytes(double(r.peakRssBytes)).c_str());
    if (options.verify)
        std::printf("  checksum         %016llx\n", static_cast<unsigned long long>(r.checksum));
    return cli::Success;
}

} // namespace

int bench(const QStringList &arguments)
{
    for (const QString &a : arguments.mid(1)) {
        if (a.startsWith('-'))
            continue;
        if (a == "pipeline")
            return benchPipeline(arguments);
        if (a == "train")
            return benchTrain(arguments);
        if (a == "storage")
            return benchStorage(arguments);
        break;
    }
    return benchRead(arguments);
}

} // namespace sluice::commands
