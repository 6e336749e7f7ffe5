#pragma once
// A one-line progress bar on stderr, redrawn at most ~10 times a second, and only when
// stderr is a terminal (logs and CI output stay clean).
//
// Threading: one thread at a time.

#include <chrono>
#include <cstdint>
#include <string>

namespace sluice::cli {

class ProgressBar
{
public:
    ProgressBar(std::string label, std::uint64_t total, std::string unit = "B");
    ~ProgressBar();
    void update(std::uint64_t done);
    void finish();
    bool enabled() const { return m_enabled; }

private:
    void draw(std::uint64_t done);
    std::string m_label;
    std::uint64_t m_total;
    std::string m_unit;
    bool m_enabled;
    bool m_finished = false;
    std::chrono::steady_clock::time_point m_start, m_lastDraw;
};

} // namespace sluice::cli
