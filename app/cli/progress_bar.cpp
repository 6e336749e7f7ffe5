#include "cli/progress_bar.h"

#include "cli/cli_support.h"

#include <cstdio>
#include <unistd.h>

namespace sluice::cli {

ProgressBar::ProgressBar(std::string label, std::uint64_t total, std::string unit)
    : m_label(std::move(label)), m_total(total), m_unit(std::move(unit)), m_enabled(::isatty(STDERR_FILENO) == 1),
      m_start(std::chrono::steady_clock::now())
{
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(std::uint64_t done)
{
    if (!m_enabled)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (done < m_total && now - m_lastDraw < std::chrono::milliseconds(100))
        return;
    m_lastDraw = now;
    draw(done);
}

void ProgressBar::draw(std::uint64_t done)
{
    constexpr int kWidth = 30;
    const double fraction = m_total ? double(done) / double(m_total) : 1.0;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    const double rate = seconds > 0 ? double(done) / seconds : 0;
    const int filled = int(fraction * kWidth);
    std::string bar(std::size_t(filled), '#');
    bar.resize(kWidth, '.');
    char eta[32] = "";
    if (rate > 0 && done < m_total)
        std::snprintf(eta, sizeof eta, "  ETA %.0fs", double(m_total - done) / rate);
    const std::string rateText = m_unit == "B" ? humanRate(rate) : std::to_string(std::uint64_t(rate)) + " " + m_unit + "/s";
    std::fprintf(stderr, "\r%s [%s] %3.0f%%  %s%s\x1b[K", m_label.c_str(), bar.c_str(), fraction * 100, rateText.c_str(), eta);
    std::fflush(stderr);
}

void ProgressBar::finish()
{
    if (!m_enabled || m_finished)
        return;
    m_finished = true;
    std::fputs("\n", stderr);
}

} // namespace sluice::cli
