#pragma once
// Errors as values (blueprint decision 9): every function that reads something from
// outside returns a Result<T> whose error names the thing (file, member) and the reason.

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace sluice {

struct Error
{
    enum class Kind {
        NotFound,        // the path does not exist or cannot be opened
        IoError,         // the operating system refused a read, write or mapping
        Corrupt,         // the bytes are not what the format says they must be
        Unsupported,     // valid for its format, but not something Sluice reads (object dtype…)
        InvalidArgument, // a caller passed something out of range
    };

    Kind kind = Kind::InvalidArgument;
    std::string what;   // the file, member or parameter concerned
    std::string reason; // why it failed, in words a user can act on

    // "what: reason", the form the CLI prints after "sluice: ".
    std::string message() const { return what.empty() ? reason : what + ": " + reason; }

    static Error notFound(std::string what, std::string reason) { return {Kind::NotFound, std::move(what), std::move(reason)}; }
    static Error io(std::string what, std::string reason) { return {Kind::IoError, std::move(what), std::move(reason)}; }
    static Error corrupt(std::string what, std::string reason) { return {Kind::Corrupt, std::move(what), std::move(reason)}; }
    static Error unsupported(std::string what, std::string reason) { return {Kind::Unsupported, std::move(what), std::move(reason)}; }
    static Error invalid(std::string what, std::string reason) { return {Kind::InvalidArgument, std::move(what), std::move(reason)}; }
};

// A value or an Error, in the spirit of std::expected (C++23, not in our compilers yet).
template <typename T>
class [[nodiscard]] Result
{
public:
    Result(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : m_state(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_state.index() == 0; }
    explicit operator bool() const { return ok(); }

    T &value() & { assert(ok()); return std::get<0>(m_state); }
    const T &value() const & { assert(ok()); return std::get<0>(m_state); }
    T &&value() && { assert(ok()); return std::get<0>(std::move(m_state)); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }

    const Error &error() const { assert(!ok()); return std::get<1>(m_state); }

private:
    std::variant<T, Error> m_state;
};

// For operations that return nothing but can fail.
class [[nodiscard]] Status
{
public:
    Status() = default;
    Status(Error error) : m_error(std::move(error)) {}
    static Status success() { return {}; }

    bool ok() const { return !m_error; }
    explicit operator bool() const { return ok(); }
    const Error &error() const { assert(!ok()); return *m_error; }

private:
    std::optional<Error> m_error;
};

} // namespace sluice
