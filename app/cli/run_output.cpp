#include "cli/run_output.h"

#include "io/writers/atomic_file.h"
#include "io/formats/csv_text.h"
#include "events/run_folder.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sluice::cli {

namespace {

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
    const std::string events = runfolder::path(m_options.outDir, runfolder::kEvents);
    m_events = std::fopen(events.c_str(), m_options.resume ? "a" : "w");
    if (!m_events)
        return events + ": cannot write";
    if (m_options.resume) {
        // Keep the epochs the interrupted run finished.
        if (std::filesystem::exists(runfolder::path(m_options.outDir, runfolder::kMetrics))) {
            auto table = readCsvTable(runfolder::path(m_options.outDir, runfolder::kMetrics));
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
std::string gpuSummary(const events::GpuSample &sample)
{
    std::string text;
    for (const auto &d : sample.devices) {
        char part[96];
        const auto figure = [](const auto &v) { return v ? double(*v) : -1.0; };
        std::snprintf(part, sizeof part, "%sGPU%d %.0f%% %.1f/%.1f GiB", text.empty() ? "" : "  ", d.index, figure(d.utilizationPercent),
                      figure(d.memoryUsedBytes) / double(1ull << 30), figure(d.memoryTotalBytes) / double(1ull << 30));
        text += part;
    }
    return text;
}

std::string csvNumber(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}

bool isValidation(const std::string &name) { return name.rfind("val_", 0) == 0; }

} // namespace

void RunOutput::onEvent(const events::Event &event)
{
    std::lock_guard lock(m_mutex);
    if (const auto *gpu = events::as<events::GpuSample>(event))
        m_gpuSummary = gpuSummary(*gpu);
    const bool wantJson = m_events || (m_options.json && !m_options.quiet);
    const std::string line = wantJson ? events::toJson(event).dump() + "\n" : std::string();
    if (m_events) {
        std::fputs(line.c_str(), m_events);
        std::fflush(m_events);
    }
    if (const auto *epoch = events::as<events::EpochEnd>(event))
        addMetricsRow(*epoch);
    if (m_options.quiet)
        return;
    if (m_options.json) {
        std::fputs(line.c_str(), stdout);
        std::fflush(stdout);
        return;
    }
    if (const auto *step = events::as<events::Step>(event); step && m_terminal) {
        drawProgress(*step);
    } else if (const auto *epoch = events::as<events::EpochEnd>(event)) {
        printEpochLine(*epoch);
    } else if (const auto *start = events::as<events::RunStart>(event)) {
        std::printf("%s", start->model.c_str());
        const char *replicas = start->replicas == 1 ? "" : "s", *processes = start->processes == 1 ? "" : "es";
        if (start->device == "cpu")
            std::printf("Training on %d CPU replica%s x %d process%s (%s all-reduce, %s)\n", start->replicas, replicas, start->processes, processes,
                        start->reducer.c_str(), start->optimizer.c_str());
        else
            std::printf("Training on %s: %d replica%s x %d process%s (%s all-reduce, %s)\n", start->device.c_str(), start->replicas, replicas,
                        start->processes, processes, start->reducer.c_str(), start->optimizer.c_str());
        std::fflush(stdout);
    } else if (const auto *notice = events::as<events::Notice>(event)) {
        clearProgress();
        std::fprintf(stderr, "sluice: note: %s\n", notice->message.c_str());
    } else if (const auto *resumed = events::as<events::Resumed>(event)) {
        std::printf("Resumed from %s at step %lld\n", resumed->path.c_str(), static_cast<long long>(resumed->step));
        std::fflush(stdout);
    }
}

void RunOutput::addMetricsRow(const events::EpochEnd &event)
{
    if (m_columns.empty()) {
        // The losses first, then metrics, validation and timings, as Keras's CSVLogger reads.
        m_columns = {"epoch", "step", "loss"};
        for (const bool validation : {false, true})
            for (const auto &[name, value] : event.values)
                if (name != "loss" && isValidation(name) == validation)
                    m_columns.push_back(name);
        for (const char *k : {"learning_rate", "seconds", "samples_per_s"})
            m_columns.push_back(k);
    }
    std::vector<std::string> row;
    for (const auto &column : m_columns) {
        if (column == "epoch")
            row.push_back(std::to_string(event.epoch));
        else if (column == "step")
            row.push_back(std::to_string(event.step));
        else if (column == "learning_rate")
            row.push_back(csvNumber(event.learningRate));
        else if (column == "seconds")
            row.push_back(csvNumber(event.seconds));
        else if (column == "samples_per_s")
            row.push_back(csvNumber(event.samplesPerSecond));
        else if (const auto v = event.value(column))
            row.push_back(csvNumber(*v));
        else
            row.emplace_back(); // a metric this epoch did not report
    }
    // A resumed run may finish an epoch the interrupted run had not: replace, never duplicate.
    const std::string epoch = std::to_string(event.epoch);
    std::erase_if(m_rows, [&](const std::vector<std::string> &r) { return !r.empty() && r[0] == epoch; });
    m_rows.push_back(std::move(row));
    writeMetricsCsv();
}

void RunOutput::drawProgress(const events::Step &event)
{
    // A bar over the epoch when the pipeline knows how many batches a pass has.
    std::string bar;
    if (event.cardinality > 0) {
        constexpr int width = 24;
        const int filled = int(std::min<std::int64_t>(width, event.batch * width / event.cardinality));
        bar = "[" + std::string(std::size_t(filled), '#') + std::string(std::size_t(width - filled), '.') + "] " + std::to_string(event.batch) + "/" +
              std::to_string(event.cardinality) + "  ";
    }
    char line[640];
    std::snprintf(line, sizeof line, "epoch %d/%d  %sstep %lld  loss %.5g  %s samples/s%s%s", event.epoch, m_options.epochs, bar.c_str(),
                  static_cast<long long>(event.step), event.loss, humanCount(event.samplesPerSecond).c_str(), m_gpuSummary.empty() ? "" : "  ",
                  m_gpuSummary.c_str());
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

void RunOutput::printEpochLine(const events::EpochEnd &event)
{
    clearProgress();
    std::string line = "Epoch " + std::to_string(event.epoch) + "/" + std::to_string(m_options.epochs) + ":";
    // As Keras prints it: the loss, the training metrics, then the validation ones.
    std::vector<std::pair<std::string, double>> shown;
    if (const auto loss = event.value("loss"))
        shown.emplace_back("loss", *loss);
    for (const bool validation : {false, true})
        for (const auto &[name, value] : event.values)
            if (name != "loss" && isValidation(name) == validation)
                shown.emplace_back(name, value);
    for (const auto &[name, value] : shown) {
        char text[48];
        std::snprintf(text, sizeof text, "%.5g", value);
        line += " " + name + " " + text + " -";
    }
    if (line.back() == '-')
        line.pop_back();
    char tail[96];
    std::snprintf(tail, sizeof tail, "(%.1f s, %s samples/s)", event.seconds, humanCount(event.samplesPerSecond).c_str());
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
    auto file = AtomicFile::create(runfolder::path(m_options.outDir, runfolder::kMetrics));
    if (!file)
        return;
    if (file->write(std::as_bytes(std::span(text.data(), text.size()))).ok())
        (void)file->commit();
}

} // namespace sluice::cli
