#pragma once
// Reading a JSON object's fields into typed values, strictly: a field of the wrong type is an
// error naming the object and the key ("event \"step\": \"loss\" must be a number"); an absent
// or null field leaves the value as it was (its default). Keys it is not asked about are
// ignored, so a reader accepts what a newer writer added. Used by the decoders of what Sluice
// writes as JSON (run events, pipeline snapshots).
//
// Threading: a plain value over a json it does not own; any thread.

#include "io/error.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <type_traits>

namespace sluice {

class JsonFields
{
public:
    JsonFields(const nlohmann::json &object, std::string what) : m_j(object), m_what(std::move(what)) {}

    template <typename T>
    void get(const char *key, T &out)
    {
        const auto it = m_j.find(key);
        if (it == m_j.end() || it->is_null())
            return;
        if (!fits<T>(*it)) {
            fail(key, kindOf<T>());
            return;
        }
        out = it->template get<T>();
    }
    template <typename T>
    void get(const char *key, std::optional<T> &out)
    {
        if (!has(key))
            return;
        T value{};
        get(key, value);
        if (!m_error)
            out = value;
    }
    // A field whose type get() above cannot tell by itself (a list, an object, a count that must
    // not be negative): `valid` says whether the value reads as T, `expected` words what it must be.
    template <typename T, typename Valid>
    void get(const char *key, T &out, Valid valid, const std::string &expected)
    {
        const auto it = m_j.find(key);
        if (it == m_j.end() || it->is_null())
            return;
        if (!valid(*it)) {
            fail(key, expected);
            return;
        }
        out = it->template get<T>();
    }
    // A key that must be there (and not null).
    void require(const char *key)
    {
        if (!has(key))
            fail(key, "there");
    }
    bool has(const char *key) const { return m_j.contains(key) && !m_j[key].is_null(); }
    // Records the first problem only: the one a user fixes first.
    void fail(const std::string &key, const std::string &expected)
    {
        if (!m_error)
            m_error = Error::corrupt(m_what, "\"" + key + "\" must be " + expected);
    }
    void fail(const Error &error)
    {
        if (!m_error)
            m_error = error;
    }
    const std::optional<Error> &error() const { return m_error; }

private:
    template <typename T>
    static bool fits(const nlohmann::json &v)
    {
        if constexpr (std::is_same_v<T, bool>)
            return v.is_boolean();
        else if constexpr (std::is_same_v<T, std::string>)
            return v.is_string();
        else if constexpr (std::is_integral_v<T>)
            return v.is_number_integer() && (std::is_signed_v<T> || v.is_number_unsigned() || v.template get<std::int64_t>() >= 0);
        else if constexpr (std::is_floating_point_v<T>)
            return v.is_number();
        else
            return true;
    }
    template <typename T>
    static const char *kindOf()
    {
        if constexpr (std::is_same_v<T, bool>)
            return "true or false";
        else if constexpr (std::is_same_v<T, std::string>)
            return "a string";
        else if constexpr (std::is_integral_v<T>)
            return "a whole number";
        else
            return "a number";
    }

    const nlohmann::json &m_j;
    std::string m_what;
    std::optional<Error> m_error;
};

} // namespace sluice
