// sluice bench storage FILE: the random 4 KiB read rate of the device under FILE, read around
// the page cache at a queue depth, remembered per device so that profiles of storage-bound
// pipelines can say how close they run to it (io/storage/storage_probe.h).
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "io/storage/storage_probe.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace sluice::commands {

int benchStorage(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Measures the random read rate of the storage under FILE: 4 KiB reads at random offsets, --queue-depth\n"
        "of them in flight (kernel AIO, as fio's libaio engine), around the page cache (O_DIRECT), for --seconds.\n"
        "The default depth, 64, is where a typical SSD or virtual disk stops gaining; the pipeline's read-ahead\n"
        "keeps more than that in flight, so measure deep enough to see the device's limit. The result\n"
        "is remembered for the device (see --records), and the profile of a pipeline that waits for storage on\n"
        "that device then shows how much of this rate it uses. Use a file larger than any cache in front of\n"
        "the device, such as the data itself.\n\n"
        "Examples:\n"
        "  sluice bench storage big/x.npy\n"
        "  sluice bench storage big/x.npy --seconds 20 --queue-depth 128 --json\n"
        "  sluice bench storage big/x.npy --queue-depth 1 --no-save   # latency-bound: one read at a time\n"
        "  sluice bench storage --records   # where the measurements are kept");
    parser.addPositionalArgument("storage", "The benchmark: storage.");
    parser.addPositionalArgument("FILE", "A file on the device to measure.");
    parser.addOption({"seconds", "How long to read (default 10).", "S", "10"});
    parser.addOption({"queue-depth", "Reads in flight (default 64).", "N", "64"});
    parser.addOption({"no-save", "Do not remember the result for the device."});
    parser.addOption({"records", "Print where the measurements are kept, and exit."});
    parser.addOption({"json", "Print one JSON object."});
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    if (parser.isSet("records")) {
        std::printf("%s\n", storageRecordsPath().c_str());
        return cli::Success;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 2 || positional[0] != "storage") {
        cli::printError("bench storage", "usage: sluice bench storage FILE [options] (try 'sluice bench storage --help')");
        return cli::BadInput;
    }
    const auto seconds = cli::parseSeconds("seconds", parser.value("seconds"));
    const auto depth = cli::parseCount("queue-depth", parser.value("queue-depth"), 1);
    if (!seconds || !depth)
        return cli::BadInput;
    if (*depth > 1024) {
        cli::printError("--queue-depth", "at most 1024 reads in flight");
        return cli::BadInput;
    }
    const std::string path = positional[1].toStdString();
    auto m = measureRandomReads(path, *seconds, int(*depth));
    if (!m) {
        cli::printError(m.error());
        return m.error().kind == Error::Kind::IoError ? int(cli::RunFailed) : int(cli::BadInput);
    }
    bool saved = false;
    if (!parser.isSet("no-save")) {
        if (auto s = rememberStorage(*m); !s.ok()) { // the figure is still printed
            cli::printError("bench storage", "cannot remember the result: " + s.error().message());
        } else {
            saved = true;
        }
    }
    if (parser.isSet("json")) {
        nlohmann::json j{{"tool", "sluice"},
                         {"benchmark", "storage"},
                         {"file", m->file},
                         {"device", m->device.name},
                         {"device_id", m->device.id},
                         {"queue_depth", m->queueDepth},
                         {"block_bytes", m->blockBytes},
                         {"seconds", m->seconds},
                         {"random_read_iops", m->randomReadIops},
                         {"bytes_per_s", m->randomReadIops * m->blockBytes},
                         {"saved_to", saved ? storageRecordsPath() : std::string()}};
        std::printf("%s\n", j.dump().c_str());
        return cli::Success;
    }
    std::printf("bench storage %s: device %s (%s), 4 KiB random reads, queue depth %d, %.1f s\n", m->file.c_str(),
                m->device.name.c_str(), m->device.id.c_str(), m->queueDepth, m->seconds);
    std::printf("  %.0f reads/s (%.1f MB/s)\n", m->randomReadIops, m->randomReadIops * m->blockBytes / 1e6);
    if (saved)
        std::printf("  remembered for %s in %s\n", m->device.name.c_str(), storageRecordsPath().c_str());
    return cli::Success;
}

} // namespace sluice::commands
