#include "train/model/spec_reader.h"

namespace sluice::train {
namespace {

using nlohmann::json;

// 0.001 rather than 0.001000 (std::to_string), 1 rather than 1.000000.
std::string numberText(double x)
{
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.')
        s.pop_back();
    return s;
}

// 3, and 3.0 as Python's json may write it; floats only while they are exact.
std::optional<std::int64_t> wholeNumber(const json &v)
{
    if (v.is_number_unsigned())
        return v.get<std::uint64_t>() <= std::uint64_t(INT64_MAX) ? std::optional<std::int64_t>(v.get<std::int64_t>()) : std::nullopt;
    if (v.is_number_integer())
        return v.get<std::int64_t>();
    if (v.is_number_float()) {
        const double x = v.get<double>();
        if (std::isfinite(x) && x == std::trunc(x) && std::abs(x) <= 9.0e15)
            return std::int64_t(x);
    }
    return std::nullopt;
}

std::string withRange(std::string what, const std::string &range) { return range.empty() ? what : what + " " + range; }

Interval integerInterval(std::int64_t minimum, std::int64_t maximum)
{
    return {minimum == INT64_MIN ? -INFINITY : double(minimum), maximum == INT64_MAX ? INFINITY : double(maximum), false, false};
}

} // namespace

bool Interval::contains(double x) const
{
    return std::isfinite(x) && (loOpen ? x > lo : x >= lo) && (hiOpen ? x < hi : x <= hi);
}

std::string Interval::text() const
{
    const bool hasLo = std::isfinite(lo), hasHi = std::isfinite(hi);
    if (hasLo && hasHi)
        return std::string("in ") + (loOpen ? "(" : "[") + numberText(lo) + ", " + numberText(hi) + (hiOpen ? ")" : "]");
    if (hasLo)
        return (loOpen ? "greater than " : "at least ") + numberText(lo);
    if (hasHi)
        return (hiOpen ? "less than " : "at most ") + numberText(hi);
    return {};
}

std::string shortJson(const json &value)
{
    std::string s = value.dump();
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string joinNames(const std::vector<std::string> &names)
{
    std::string s;
    for (const auto &n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

SpecReader::SpecReader(const json &spec, std::string path) : m_spec(spec), m_path(std::move(path)) {}

const json *SpecReader::lookup(const std::string &key, bool required, const std::string &expected)
{
    m_used.insert(key);
    if (m_failure)
        return nullptr;
    const json *v = find(key);
    if (!v && required)
        fail(key, "missing (" + expected + ")");
    return v;
}

const json *SpecReader::find(const std::string &key)
{
    m_used.insert(key);
    if (!m_spec.is_object())
        return nullptr;
    const auto it = m_spec.find(key);
    return it == m_spec.end() || it->is_null() ? nullptr : &*it;
}

double SpecReader::number(const std::string &key, std::optional<double> fallback, Interval range)
{
    const std::string expected = withRange("a number", range.text());
    const json *v = lookup(key, !fallback, expected);
    if (!v)
        return fallback.value_or(0);
    const double x = v->is_number() ? v->get<double>() : NAN;
    if (!range.contains(x)) {
        fail(key, "expected " + expected + ", got " + shortJson(*v));
        return fallback.value_or(0);
    }
    return x;
}

std::optional<double> SpecReader::optionalNumber(const std::string &key, Interval range)
{
    if (!find(key))
        return std::nullopt;
    return number(key, std::nullopt, range);
}

std::int64_t SpecReader::integer(const std::string &key, std::optional<std::int64_t> fallback, std::int64_t minimum, std::int64_t maximum)
{
    const std::string expected = withRange("a whole number", integerInterval(minimum, maximum).text());
    const json *v = lookup(key, !fallback, expected);
    if (!v)
        return fallback.value_or(0);
    const auto n = wholeNumber(*v);
    if (!n || *n < minimum || *n > maximum) {
        fail(key, "expected " + expected + ", got " + shortJson(*v));
        return fallback.value_or(0);
    }
    return *n;
}

std::optional<std::int64_t> SpecReader::optionalInteger(const std::string &key, std::int64_t minimum)
{
    if (!find(key))
        return std::nullopt;
    return integer(key, std::nullopt, minimum);
}

bool SpecReader::boolean(const std::string &key, std::optional<bool> fallback)
{
    const json *v = lookup(key, !fallback, "true or false");
    if (!v)
        return fallback.value_or(false);
    if (!v->is_boolean()) {
        fail(key, "expected true or false, got " + shortJson(*v));
        return fallback.value_or(false);
    }
    return v->get<bool>();
}

std::string SpecReader::string(const std::string &key, std::optional<std::string> fallback)
{
    const json *v = lookup(key, !fallback, "a string");
    if (!v || !v->is_string()) {
        if (v)
            fail(key, "expected a string, got " + shortJson(*v));
        return fallback.value_or(std::string());
    }
    return v->get<std::string>();
}

std::vector<std::int64_t> SpecReader::integers(const std::string &key)
{
    const json *v = lookup(key, true, "a list of whole numbers");
    std::vector<std::int64_t> out;
    if (!v)
        return out;
    if (v->is_array())
        for (const auto &item : *v)
            if (const auto n = wholeNumber(item))
                out.push_back(*n);
    if (!v->is_array() || out.size() != v->size()) {
        fail(key, "expected a list of whole numbers, got " + shortJson(*v));
        out.clear();
    }
    return out;
}

void SpecReader::rejectUnknown(const std::string &owner)
{
    if (m_failure || !m_spec.is_object())
        return;
    for (const auto &[key, value] : m_spec.items())
        if (!m_used.count(key)) {
            const std::vector<std::string> known(m_used.begin(), m_used.end());
            fail(key, "unknown key for " + owner + "; known keys: " + (known.empty() ? std::string("none") : joinNames(known)));
            return;
        }
}

void SpecReader::fail(const std::string &key, std::string reason)
{
    if (!m_failure)
        m_failure = Failure{key, std::move(reason)};
}

std::optional<Error> SpecReader::error() const
{
    if (!m_failure)
        return std::nullopt;
    return Error::invalid(m_path + "." + m_failure->key, m_failure->reason);
}

} // namespace sluice::train
