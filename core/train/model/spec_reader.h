#pragma once
// Reading the keys of one JSON object of settings: an optimizer, a learning-rate schedule, a
// layer's parameters. Typed getters with defaults and ranges; absent keys and JSON null take the
// default, and a missing required key is an error. Every key asked for is remembered, so that
// rejectUnknown() can name a key nobody asked for and list the known ones.
//
// The first problem is kept (later getters return their default) as a Failure: the key and the
// reason, such as "expected a number in [0, 1), got 1.5". error() names it "<path>.<key>"
// ("optimizer.beta_1", "learning_rate.after.decay_steps"); readers that name things otherwise
// (a layer: train/layers/layer_config.h) build their Error from failure().
//
// Threading: one reader per spec, used by one thread.

#include "io/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sluice::train {

// The numbers a setting accepts; the default accepts every finite number.
struct Interval
{
    double lo = -INFINITY, hi = INFINITY;
    bool loOpen = false, hiOpen = false;

    static Interval atLeast(double lo) { return {lo, INFINITY, false, false}; }
    static Interval greaterThan(double lo) { return {lo, INFINITY, true, false}; }
    static Interval closed(double lo, double hi) { return {lo, hi, false, false}; }
    static Interval closedOpen(double lo, double hi) { return {lo, hi, false, true}; } // [lo, hi)

    bool contains(double x) const;
    // "in [0, 1)", "at least 0", "greater than 0", "at most 3"; empty when unbounded.
    std::string text() const;
};

class SpecReader
{
public:
    struct Failure
    {
        std::string key;
        std::string reason;
    };

    // `spec` must outlive the reader. `path` names the object in errors ("optimizer").
    SpecReader(const nlohmann::json &spec, std::string path);

    // A finite number in `range`, or `fallback` when absent or null; required without a fallback.
    double number(const std::string &key, std::optional<double> fallback, Interval range = {});
    // Absent or null: nullopt.
    std::optional<double> optionalNumber(const std::string &key, Interval range = {});
    // A whole number (3 or 3.0) in [minimum, maximum].
    std::int64_t integer(const std::string &key, std::optional<std::int64_t> fallback, std::int64_t minimum = INT64_MIN,
                         std::int64_t maximum = INT64_MAX);
    std::optional<std::int64_t> optionalInteger(const std::string &key, std::int64_t minimum = INT64_MIN);
    bool boolean(const std::string &key, std::optional<bool> fallback);
    std::string string(const std::string &key, std::optional<std::string> fallback);
    // A required list of whole numbers.
    std::vector<std::int64_t> integers(const std::string &key);
    // The value, or null when absent or JSON null; the key counts as known.
    const nlohmann::json *find(const std::string &key);

    // Marks a key as known without reading it (read by someone else, or checked by hand).
    void accept(const std::string &key) { m_used.insert(key); }
    // Fails on the first key that no getter asked for (nor accept()):
    // "unknown key for <owner>; known keys: a, b, c".
    void rejectUnknown(const std::string &owner);

    // Keeps the first failure only.
    void fail(const std::string &key, std::string reason);
    const std::optional<Failure> &failure() const { return m_failure; }
    // The failure as Error::invalid("<path>.<key>", reason).
    std::optional<Error> error() const;

private:
    // The value, or null when absent or null; records a "missing" failure when `required`.
    const nlohmann::json *lookup(const std::string &key, bool required, const std::string &expected);

    const nlohmann::json &m_spec;
    std::string m_path;
    std::set<std::string> m_used;
    std::optional<Failure> m_failure;
};

// The value as JSON text for a message, cut after 60 characters.
std::string shortJson(const nlohmann::json &value);
// "a, b, c".
std::string joinNames(const std::vector<std::string> &names);

} // namespace sluice::train
