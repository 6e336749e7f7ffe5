#pragma once
// Errors as values (docs/architecture.md, decision 9): every function that reads something from
// outside returns a Result<T> whose error names the thing (file, member) and the reason.
// Besides the text, an error says what kind it is (bad input, I/O, cancelled, out of memory,
// a failed run) and which pipeline node and parameter it concerns, so that callers place it
// (the workbench on the stage and its parameter) and tell cancellation from failure by fields,
// never by reading the text.

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
        Cancelled,       // stopped on request (Stop, Ctrl-C): not a failure
        OutOfMemory,     // an allocation failed
        Failed,          // a run failed for a reason of its own (a Python function raised…)
    };

    Kind kind = Kind::InvalidArgument;
    std::string what;   // the file, member or parameter concerned
    std::string reason; // why it failed, in words a user can act on
    std::string node;   // the pipeline node concerned, when one is
    std::string param;  // that node's parameter (its top-level name), when one is
    // In a model or its training settings: the layer (or model input or output) by name, or by
    // its place ("layers[2]") when it has no name yet, and the key within it ("units",
    // "loss_weight"); for training settings layer is "training" and key the dotted path
    // ("optimizer.learning_rate.decay_steps").
    std::string layer;
    std::string key;

    // "what: reason", the form the CLI prints after "sluice: ".
    std::string message() const { return what.empty() ? reason : what + ": " + reason; }

    static Error make(Kind kind, std::string what, std::string reason)
    {
        Error e;
        e.kind = kind;
        e.what = std::move(what);
        e.reason = std::move(reason);
        return e;
    }
    static Error notFound(std::string what, std::string reason) { return make(Kind::NotFound, std::move(what), std::move(reason)); }
    static Error io(std::string what, std::string reason) { return make(Kind::IoError, std::move(what), std::move(reason)); }
    static Error corrupt(std::string what, std::string reason) { return make(Kind::Corrupt, std::move(what), std::move(reason)); }
    static Error unsupported(std::string what, std::string reason) { return make(Kind::Unsupported, std::move(what), std::move(reason)); }
    static Error invalid(std::string what, std::string reason) { return make(Kind::InvalidArgument, std::move(what), std::move(reason)); }
    static Error cancelled(std::string what) { return make(Kind::Cancelled, std::move(what), "cancelled"); }
    static Error outOfMemory(std::string what, std::string reason) { return make(Kind::OutOfMemory, std::move(what), std::move(reason)); }
    static Error failed(std::string what, std::string reason) { return make(Kind::Failed, std::move(what), std::move(reason)); }

    bool isCancelled() const { return kind == Kind::Cancelled; }
    // The same error, said to concern `nodeId` (and `parameter`) unless it already names a node.
    Error at(const std::string &nodeId, const std::string &parameter = {}) const
    {
        Error e = *this;
        if (e.node.empty()) {
            e.node = nodeId;
            e.param = parameter;
        }
        return e;
    }
    // The same error, said to concern `layerName` and its `keyName`, where it names none yet
    // (each field on its own: an inner call may know the key and an outer one the layer).
    Error inLayer(const std::string &layerName, const std::string &keyName = {}) const
    {
        Error e = *this;
        if (e.layer.empty())
            e.layer = layerName;
        if (e.key.empty())
            e.key = keyName;
        return e;
    }
};

// The kind's name as events and the Python package give it: "not_found", "io", "corrupt",
// "unsupported", "invalid", "cancelled", "out_of_memory", "failed".
inline const char *kindName(Error::Kind kind)
{
    switch (kind) {
    case Error::Kind::NotFound: return "not_found";
    case Error::Kind::IoError: return "io";
    case Error::Kind::Corrupt: return "corrupt";
    case Error::Kind::Unsupported: return "unsupported";
    case Error::Kind::InvalidArgument: return "invalid";
    case Error::Kind::Cancelled: return "cancelled";
    case Error::Kind::OutOfMemory: return "out_of_memory";
    case Error::Kind::Failed: return "failed";
    }
    return "invalid";
}

// The inverse of kindName(); an unknown name is Failed.
inline Error::Kind kindFromName(const std::string &name)
{
    for (Error::Kind k : {Error::Kind::NotFound, Error::Kind::IoError, Error::Kind::Corrupt, Error::Kind::Unsupported, Error::Kind::InvalidArgument,
                          Error::Kind::Cancelled, Error::Kind::OutOfMemory, Error::Kind::Failed})
        if (name == kindName(k))
            return k;
    return Error::Kind::Failed;
}

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
