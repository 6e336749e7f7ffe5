#include "cli/run_output.h"

#include "io/atomic_file.h"
#include "io/csv_text.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sluice::cli {

namespace {

std::string csvValue(const nlohmann::json &v)
{
    if (v.is_number_float()) {
        char text[32];
        std::snprintf(text, sizeof text, "%.9g", v.get<double>());
        return text;
    }
    if (v.is_string())
        return v.get<std::string>();
    return v.is_null() ? std::string() : v.dump();
}

std::string humanCount(double v)
{
    char text[32];
    if (v >= 1e6)
        std::snprintf(text, sizeof text, "%.2fM", v / 1e6);
    else if (v >= 1e3)
        std::snprintf(text, sizeof text, "%.1fk", v / 1e3);
    else
        std::snprintf(text, sizeof text, "%.0f", v);
    return text;
}

} // namespace

RunOutput::RunOutput(Options options) : m_options(std::move(options))
{
    m_terminal = !m_options.quiet && !m_options.json && isatty(STDERR_FILENO);
}

RunOutput::~RunOutput()
{
    clearProgress();
    if (m_events)
        std::fclose(m_events);
}

std::optional<std::string> RunOutput::open()
{
    if (m_options.outDir.empty())
        return std::nullopt;
    std::error_code ec;
    std::filesystem::create_directories(m_options.outDir, ec);
    if (ec)
        return m_options.outDir + ": cannot create the folder: " + ec.message();
    const std::string events = m_options.outDir + "/events.jsonl";
    m_events = std::fopen(events.c_str(), m_options.resume ? "a" : "w");
    if (!m_events)
        return events + ": cannot write";
    if (m_options.resume) {
        // Keep the epochs the interrupted run finished.
        if (std::filesystem::exists(m_options.outDir + "/metrics.csv")) {
            auto table = readCsvTable(m_options.outDir + "/metrics.csv");
            if (!table)
                return table.error().message();
            m_columns = std::move(table->columns);
            m_rows = std::move(table->rows);
        }
    }
    return std::nullopt;
}

namespace {

// "GPU0 87% 12.3/80.0 GiB  GPU1 …" for the terminal's progress line.
std::string gpuSummary(const nlohmann::json &event)
{
    std::string text;
    for (const auto &d : event.value("devices", nlohmann::json::array())) {
        char part[96];
        const auto number = [&](const char *key) { return d.contains(key) && d[key].is_number() ? d[key].get<double>() : -1.0; };
        std::snprintf(part, sizeof part, "%sGPU%d %.0f%% %.1f/%.1f GiB", text.empty() ? "" : "  ", d.value("index", 0), number("utilization_percent"),
                      number("memory_used_bytes") / double(1ull << 30), number("memory_total_bytes") / double(1ull << 30));
        text += part;
    }
    return text;
}

} // namespace

void RunOutput::onEvent(const nlohmann::json &event)
{
    std::lock_guard lock(m_mutex);
    const std::string type = event.value("event", "");
    if (type == "gpu")
        m_gpuSummary = gpuSummary(event);
    if (m_events) {
        std::fputs((event.dump() + "\n").c_str(), m_events);
        std::fflush(m_events);
    }
    if (type == "epoch_end") {
        if (m_columns.empty()) {
            // The losses first, then metrics, validation and timings, as Keras's CSVLogger reads.
            m_columns = {"epoch", "step", "loss"};
            for (const char *prefix : {"", "val_"})
                for (auto it = event.begin(); it != event.end(); ++it) {
                    const std::string &k = it.key();
                    const bool timing = k == "seconds" || k == "samples_per_s" || k == "learning_rate";
                    if (k == "event" || k == "epoch" || k == "step" || k == "loss" || timing || (k.rfind("val_", 0) == 0) != (*prefix != 0))
                        continue;
                    m_columns.push_back(k);
                }
            for (const char *k : {"learning_rate", "seconds", "samples_per_s"})
                m_columns.push_back(k);
        }
        std::vector<std::string> row;
        for (const auto &column : m_columns)
            row.push_back(event.contains(column) ? csvValue(event[column]) : std::string());
        // A resumed run may finish an epoch the interrupted run had not: replace, never duplicate.
        const std::string epoch = csvValue(event["epoch"]);
        std::erase_if(m_rows, [&](const std::vector<std::string> &r) { return !r.empty() && r[0] == epoch; });
        m_rows.push_back(std::move(row));
        writeMetricsCsv();
    }
    if (m_options.quiet)
        return;
    if (m_options.json) {
        std::fputs((event.dump() + "\n").c_str(), stdout);
        std::fflush(stdout);
        return;
    }
    if (type == "step" && m_terminal)
        drawProgress(event);
    else if (type == "epoch_end")
        printEpochLine(event);
    else if (type == "run_start") {
        std::printf("%s", event.value("model", "").c_str());
        const std::string device = event.value("device", "cpu");
        if (device == "cpu")
            std::printf("Training on %d CPU replica%s x %d process%s (%s all-reduce, %s)\n", event.value("replicas", 1), event.value("replicas", 1) == 1 ? "" : "s",
                        event.value("processes", 1), event.value("processes", 1) == 1 ? "" : "es", event.value("reducer", "").c_str(),
                        event.value("optimizer", "").c_str());
        else
            std::printf("Training on %s: %d replica%s x %d process%s (%s all-reduce, %s)\n", device.c_str(), event.value("replicas", 1),
                        event.value("replicas", 1) == 1 ? "" : "s", event.value("processes", 1), event.value("processes", 1) == 1 ? "" : "es",
                        event.value("reducer", "").c_str(), event.value("optimizer", "").c_str());
        std::fflush(stdout);
    } else if (type == "notice") {
        clearProgress();
        std::fprintf(stderr, "sluice: note: %s\n", event.value("message", "").c_str());
    } else if (type == "resumed") {
        std::printf("Resumed from %s at step %lld\n", event.value("path", "").c_str(), static_cast<long long>(event.value("step", 0)));
        std::fflush(stdout);
    }
}

void RunOutput::drawProgress(const nlohmann::json &event)
{
    // A bar over the epoch when the pipeline knows how many batches a pass has.
    std::string bar;
    const std::int64_t batches = event.value("cardinality", std::int64_t(-1)), batch = event.value("batch", std::int64_t(0));
    if (batches > 0) {
        constexpr int width = 24;
        const int filled = int(std::min<std::int64_t>(width, batch * width / batches));
        bar = "[" + std::string(std::size_t(filled), '#') + std::string(std::size_t(width - filled), '.') + "] " + std::to_string(batch) + "/" +
              std::to_string(batches) + "  ";
    }
    char line[640];
    std::snprintf(line, sizeof line, "epoch %d/%d  %sstep %lld  loss %.5g  %s samples/s%s%s", event.value("epoch", 0), m_options.epochs, bar.c_str(),
                  static_cast<long long>(event.value("step", 0)), event.value("loss", 0.0), humanCount(event.value("samples_per_s", 0.0)).c_str(),
                  m_gpuSummary.empty() ? "" : "  ", m_gpuSummary.c_str());
    std::fprintf(stderr, "\r\033[K%s", line);
    m_progressShown = true;
}

void RunOutput::clearProgress()
{
    if (m_progressShown) {
        std::fputs("\r\033[K", stderr);
        m_progressShown = false;
    }
}

void RunOutput::printEpochLine(const nlohmann::json &event)
{
    clearProgress();
    std::string line = "Epoch " + std::to_string(event.value("epoch", 0)) + "/" + std::to_string(m_options.epochs) + ":";
    // As Keras prints it: the loss, the training metrics, then the validation ones.
    std::vector<std::string> keys{"loss"};
    for (const bool validation : {false, true})
        for (auto it = event.begin(); it != event.end(); ++it) {
            const std::string &k = it.key();
            if (k == "event" || k == "epoch" || k == "step" || k == "seconds" || k == "samples_per_s" || k == "learning_rate" || k == "loss" ||
                (k.rfind("val_", 0) == 0) != validation)
                continue;
            keys.push_back(k);
        }
    for (const auto &k : keys) {
        if (!event.contains(k))
            continue;
        char value[48];
        std::snprintf(value, sizeof value, "%.5g", event[k].is_number() ? event[k].get<double>() : 0.0);
        line += " " + k + " " + value + " -";
    }
    if (line.back() == '-')
        line.pop_back();
    char tail[96];
    std::snprintf(tail, sizeof tail, "(%.1f s, %s samples/s)", event.value("seconds", 0.0), humanCount(event.value("samples_per_s", 0.0)).c_str());
    std::printf("%s%s\n", line.c_str(), tail);
    std::fflush(stdout);
}

void RunOutput::writeMetricsCsv()
{
    if (m_options.outDir.empty())
        return;
    std::string text = csvLine(m_columns);
    for (const auto &r : m_rows)
        text += csvLine(r);
    auto file = AtomicFile::create(m_options.outDir + "/metrics.csv");
    if (!file)
        return;
    if (file->write(std::as_bytes(std::span(text.data(), text.size()))).ok())
        (void)file->commit();
}

} // namespace sluice::cli
