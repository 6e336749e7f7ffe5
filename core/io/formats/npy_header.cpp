#include "io/formats/npy_header.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

namespace sluice {
namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kPrefixV1 = 10; // magic, 2 version bytes, uint16 header length
constexpr std::size_t kPrefixV2 = 12; // … uint32 header length

std::uint32_t readLe(const std::byte *p, int n)
{
    std::uint32_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = (v << 8) | std::to_integer<std::uint32_t>(p[i]);
    return v;
}

// A value of the header dict. numpy writes only strings, booleans, tuples of ints
// and (for structured dtypes, which we refuse) lists.
struct PyValue
{
    enum class Kind { String, Bool, Tuple, List, Other } kind = Kind::Other;
    std::string text;
    bool flag = false;
    std::vector<std::uint64_t> ints;
    bool intsValid = true; // false when a tuple held something that is not a non-negative int
    std::string problem;   // why the tuple was not valid
};

// A tiny recursive-descent parser for the subset of Python literals the header uses.
class DictParser
{
public:
    explicit DictParser(std::string_view s) : m_s(s) {}

    // Parses the whole dict; returns false with `error` set on malformed input.
    bool parse(std::vector<std::pair<std::string, PyValue>> &out, std::string &error)
    {
        skipSpace();
        if (!eat('{'))
            return fail(error, "header is not a Python dict literal (no '{')");
        for (;;) {
            skipSpace();
            if (eat('}'))
                break;
            std::string key;
            if (!parseString(key))
                return fail(error, "header dict key is not a quoted string");
            skipSpace();
            if (!eat(':'))
                return fail(error, "header dict has no ':' after key '" + key + "'");
            skipSpace();
            PyValue value;
            if (!parseValue(value, 0))
                return fail(error, "header dict value for '" + key + "' cannot be parsed");
            out.emplace_back(std::move(key), std::move(value));
            skipSpace();
            if (eat(','))
                continue;
            skipSpace();
            if (eat('}'))
                break;
            return fail(error, "header dict is not closed by '}'");
        }
        skipSpace();
        if (m_pos != m_s.size())
            return fail(error, "unexpected text after the header dict");
        return true;
    }

private:
    static bool fail(std::string &error, std::string message)
    {
        error = std::move(message);
        return false;
    }
    void skipSpace()
    {
        while (m_pos < m_s.size() && (m_s[m_pos] == ' ' || m_s[m_pos] == '\t' || m_s[m_pos] == '\n' || m_s[m_pos] == '\r'))
            ++m_pos;
    }
    bool eat(char c)
    {
        if (m_pos < m_s.size() && m_s[m_pos] == c) {
            ++m_pos;
            return true;
        }
        return false;
    }
    bool eatWord(std::string_view w)
    {
        if (m_s.substr(m_pos, w.size()) == w) {
            m_pos += w.size();
            return true;
        }
        return false;
    }
    bool parseString(std::string &out)
    {
        if (m_pos >= m_s.size() || (m_s[m_pos] != '\'' && m_s[m_pos] != '"'))
            return false;
        const char quote = m_s[m_pos++];
        while (m_pos < m_s.size() && m_s[m_pos] != quote) {
            if (m_s[m_pos] == '\\') {
                if (++m_pos >= m_s.size())
                    return false;
            }
            out.push_back(m_s[m_pos++]);
        }
        return eat(quote);
    }
    // Non-negative integer, optionally with Python 2's 'L' suffix. Overflow is reported
    // through the value rather than as a parse error, so the message can say "overflow".
    bool parseInt(PyValue &tuple)
    {
        bool negative = eat('-');
        const std::size_t start = m_pos;
        std::uint64_t v = 0;
        bool overflow = false;
        while (m_pos < m_s.size() && m_s[m_pos] >= '0' && m_s[m_pos] <= '9') {
            const unsigned digit = unsigned(m_s[m_pos++] - '0');
            if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
                overflow = true;
            else
                v = v * 10 + digit;
        }
        if (m_pos == start)
            return false;
        eat('L');
        if (negative && v != 0) {
            tuple.intsValid = false;
            tuple.problem = "negative dimension in shape";
        } else if (overflow) {
            tuple.intsValid = false;
            tuple.problem = "shape dimension overflows 64 bits";
        }
        tuple.ints.push_back(v);
        return true;
    }
    bool parseSequence(PyValue &v, char close, int depth)
    {
        for (;;) {
            skipSpace();
            if (eat(close))
                return true;
            if (m_pos < m_s.size() && (m_s[m_pos] == '-' || (m_s[m_pos] >= '0' && m_s[m_pos] <= '9'))) {
                if (!parseInt(v))
                    return false;
            } else {
                PyValue inner;
                if (!parseValue(inner, depth + 1))
                    return false;
                v.intsValid = false;
                if (v.problem.empty())
                    v.problem = "shape holds something other than integers";
            }
            skipSpace();
            if (eat(','))
                continue;
            skipSpace();
            return eat(close);
        }
    }
    bool parseValue(PyValue &v, int depth)
    {
        if (depth > 32) // nested lists of structured dtypes; bounded so the fuzzer cannot blow the stack
            return false;
        if (m_pos >= m_s.size())
            return false;
        const char c = m_s[m_pos];
        if (c == '\'' || c == '"') {
            v.kind = PyValue::Kind::String;
            return parseString(v.text);
        }
        if (eatWord("True")) {
            v.kind = PyValue::Kind::Bool;
            v.flag = true;
            return true;
        }
        if (eatWord("False")) {
            v.kind = PyValue::Kind::Bool;
            return true;
        }
        if (eat('(')) {
            v.kind = PyValue::Kind::Tuple;
            return parseSequence(v, ')', depth);
        }
        if (eat('[')) {
            v.kind = PyValue::Kind::List;
            return parseSequence(v, ']', depth);
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            v.kind = PyValue::Kind::Other;
            return parseInt(v);
        }
        return false;
    }

    std::string_view m_s;
    std::size_t m_pos = 0;
};

// Explains why a descr numpy can write is not one Sluice reads.
std::string unsupportedDescrReason(const PyValue &descr)
{
    if (descr.kind == PyValue::Kind::List)
        return "structured dtype (record arrays) is not supported; save each field as its own array";
    const std::string &d = descr.text;
    const char kind = d.empty() ? '?' : (std::string_view("<>|=").find(d[0]) != std::string_view::npos && d.size() > 1 ? d[1] : d[0]);
    switch (kind) {
    case 'O': return "object dtype '" + d + "' is not supported (it holds pickled Python objects)";
    case 'U': case 'S': case 'a': return "string dtype '" + d + "' is not supported";
    case 'c': return "complex dtype '" + d + "' is not supported";
    case 'M': case 'm': return "datetime dtype '" + d + "' is not supported";
    case 'V': return "void/structured dtype '" + d + "' is not supported";
    default: return "dtype '" + d + "' is not supported";
    }
}

} // namespace

std::uint64_t npyHeaderLength(std::span<const std::byte> prefix)
{
    if (prefix.size() < kPrefixV1 || std::memcmp(prefix.data(), kMagic, sizeof kMagic) != 0)
        return 0;
    const int major = std::to_integer<int>(prefix[6]);
    if (major == 1)
        return kPrefixV1 + readLe(prefix.data() + 8, 2);
    if (prefix.size() < kPrefixV2)
        return 0;
    return kPrefixV2 + std::uint64_t(readLe(prefix.data() + 8, 4));
}

Result<NpyHeader> parseNpyHeader(std::span<const std::byte> bytes, const std::string &name)
{
    if (bytes.empty())
        return Error::corrupt(name, "file is empty");
    if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        return Error::corrupt(name, "not a .npy file (wrong magic; expected \\x93NUMPY)");
    if (bytes.size() < 8)
        return Error::corrupt(name, "truncated header (file ends inside the version bytes)");

    NpyHeader h;
    h.versionMajor = std::to_integer<int>(bytes[6]);
    h.versionMinor = std::to_integer<int>(bytes[7]);
    if (h.versionMinor != 0 || h.versionMajor < 1 || h.versionMajor > 3)
        return Error::unsupported(name, "unknown .npy format version " + h.versionString() + " (Sluice reads 1.0, 2.0 and 3.0)");

    const std::size_t prefix = h.versionMajor == 1 ? kPrefixV1 : kPrefixV2;
    if (bytes.size() < prefix)
        return Error::corrupt(name, "truncated header (file ends inside the header length)");
    const std::uint64_t dictLength = readLe(bytes.data() + 8, h.versionMajor == 1 ? 2 : 4);
    h.dataOffset = prefix + dictLength;
    if (h.dataOffset > bytes.size())
        return Error::corrupt(name, "header length " + std::to_string(dictLength) + " runs past the end of the file (" +
                                        std::to_string(bytes.size()) + " bytes)");

    // Version 1 and 2 headers are latin-1, version 3 UTF-8; the keys and values we read are ASCII either way.
    const std::string_view dict(reinterpret_cast<const char *>(bytes.data() + prefix), dictLength);
    std::vector<std::pair<std::string, PyValue>> entries;
    std::string parseError;
    if (!DictParser(dict).parse(entries, parseError))
        return Error::corrupt(name, "unparseable header: " + parseError);

    auto find = [&](std::string_view key) -> const PyValue * {
        for (const auto &[k, v] : entries)
            if (k == key)
                return &v;
        return nullptr;
    };
    const PyValue *descr = find("descr");
    const PyValue *fortran = find("fortran_order");
    const PyValue *shape = find("shape");
    if (!descr || !fortran || !shape) {
        std::string missing;
        for (auto [key, v] : {std::pair{"descr", descr}, {"fortran_order", fortran}, {"shape", shape}})
            if (!v)
                missing += std::string(missing.empty() ? "" : ", ") + "'" + key + "'";
        return Error::corrupt(name, "incomplete header: missing " + missing);
    }
    if (descr->kind != PyValue::Kind::String)
        return Error::unsupported(name, unsupportedDescrReason(*descr));
    const auto parsed = parseDescr(descr->text);
    if (!parsed)
        return Error::unsupported(name, unsupportedDescrReason(*descr));
    h.descr = *parsed;
    if (fortran->kind != PyValue::Kind::Bool)
        return Error::corrupt(name, "header 'fortran_order' is not True or False");
    h.fortranOrder = fortran->flag;
    if (shape->kind != PyValue::Kind::Tuple)
        return Error::corrupt(name, "header 'shape' is not a tuple");
    if (!shape->intsValid)
        return Error::corrupt(name, "invalid shape: " + shape->problem);
    if (shape->ints.size() > 64)
        return Error::unsupported(name, "shape has " + std::to_string(shape->ints.size()) + " dimensions (at most 64)");
    h.shape = shape->ints;

    const std::uint64_t item = itemSize(h.descr.type);
    h.count = 1;
    for (std::uint64_t dim : h.shape) {
        if (dim != 0 && h.count > std::numeric_limits<std::uint64_t>::max() / dim)
            return Error::corrupt(name, "shape overflows: the element count does not fit in 64 bits");
        h.count *= dim;
    }
    if (h.count > std::numeric_limits<std::uint64_t>::max() / item)
        return Error::corrupt(name, "shape overflows: the byte size does not fit in 64 bits");
    h.nbytes = h.count * item;
    const std::uint64_t available = bytes.size() - h.dataOffset;
    if (h.nbytes > available)
        return Error::corrupt(name, "data is shorter than the shape needs: " + std::to_string(h.nbytes) +
                                        " bytes expected, " + std::to_string(available) + " present");
    return h;
}

std::string formatNpyHeader(TypeDescr descr, bool fortranOrder, std::span<const std::uint64_t> shape, bool reserveRows)
{
    return formatNpyHeaderText(descr.str(), fortranOrder, shape, reserveRows);
}

std::string formatNpyHeaderText(const std::string &descr, bool fortranOrder, std::span<const std::uint64_t> shape, bool reserveRows)
{
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortranOrder ? "True" : "False") + ", 'shape': (";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        dict += std::to_string(shape[i]);
        if (shape.size() == 1 || i + 1 < shape.size())
            dict += shape.size() == 1 ? "," : ", ";
    }
    dict += "), }";
    // Room for the first dimension to grow to 20 digits when rewritten later.
    std::size_t minimumDict = dict.size();
    if (reserveRows && !shape.empty())
        minimumDict += 20 - std::to_string(shape[0]).size();

    auto assemble = [&](int major) {
        const std::size_t prefix = major == 1 ? kPrefixV1 : kPrefixV2;
        std::size_t total = prefix + minimumDict + 1; // + '\n'
        total = (total + 63) / 64 * 64;
        const std::size_t dictLength = total - prefix;
        std::string out(reinterpret_cast<const char *>(kMagic), sizeof kMagic);
        out.push_back(char(major));
        out.push_back('\0');
        for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
            out.push_back(char((dictLength >> (8 * i)) & 0xff));
        out += dict;
        out.append(total - out.size() - 1, ' ');
        out.push_back('\n');
        return out;
    };
    if (kPrefixV1 + minimumDict + 1 + 63 <= 0xffff + kPrefixV1)
        return assemble(1);
    return assemble(2);
}

} // namespace sluice
