// Reading, checking and writing the project file; paths relative to its folder.
#include "project/project.h"

#include "io/writers/atomic_file.h"
#include "project/project_detail.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <glob.h>
#include <map>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace sluice {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char *kFormatName = "sluice-project";

std::string inQuotes(const std::string &s) { return '"' + s + '"'; }

// A value as it would appear in the file, for messages; never throws on odd strings.
std::string shown(const json &value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string nodeWhere(std::size_t index, const std::string &id = {})
{
    std::string where = "pipeline.nodes[" + std::to_string(index) + "]";
    return id.empty() ? where : where + " (" + inQuotes(id) + ")";
}

std::string edgeWhere(std::size_t index) { return "pipeline.edges[" + std::to_string(index) + "]"; }

// "line 3, column 7" for the 1-based byte count at which nlohmann's parser stopped. Columns
// count bytes, as editors that show byte offsets do; exact enough to find a missing comma.
std::string textPosition(const std::string &text, std::size_t byte)
{
    const std::size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
    std::size_t line = 1, lineStart = 0;
    for (std::size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(end - lineStart + 1);
}

Status parseText(const std::string &text, const std::string &what, json &document)
{
    try {
        document = json::parse(text);
    } catch (const json::parse_error &e) {
        // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 2: syntax
        // error while parsing ..."; keep only the part after the position, which we state ourselves.
        std::string detail = e.what();
        if (const auto at = detail.find("parse error"); at != std::string::npos) {
            if (const auto colon = detail.find(": ", at); colon != std::string::npos)
                detail = detail.substr(colon + 2);
        }
        return Error::corrupt(what, "invalid JSON at " + textPosition(text, e.byte) + ": " + detail);
    }
    return Status::success();
}

Result<std::string> readText(const std::string &path)
{
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (status.type() == fs::file_type::not_found)
        return Error::notFound(path, "no such file");
    if (status.type() == fs::file_type::directory)
        return Error::invalid(path, "is a directory, not a project file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error::io(path, "cannot open for reading");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad())
        return Error::io(path, "read failed");
    return text.str();
}

// Fills nodes, edges and output of `project` from the "pipeline" object; the keys it does not
// know go to `extra`.
Status readPipeline(const json &pipeline, Project &project, json &extra, const std::string &what)
{
    const auto fail = [&what](const std::string &where, const std::string &why) { return Status(Error::corrupt(what, where + ": " + why)); };
    if (!pipeline.is_object())
        return fail("pipeline", "must be an object");
    for (const auto &item : pipeline.items()) {
        if (item.key() != "nodes" && item.key() != "edges" && item.key() != "output")
            extra[item.key()] = item.value();
    }

    std::unordered_map<std::string, std::size_t> indexOf;
    if (const auto nodes = pipeline.find("nodes"); nodes != pipeline.end()) {
        if (!nodes->is_array())
            return fail("pipeline.nodes", "must be an array");
        for (std::size_t i = 0; i < nodes->size(); ++i) {
            const json &n = (*nodes)[i];
            if (!n.is_object())
                return fail(nodeWhere(i), "must be an object");
            PipelineNode node;
            const auto id = n.find("id");
            if (id == n.end())
                return fail(nodeWhere(i), "missing \"id\"");
            if (!id->is_string())
                return fail(nodeWhere(i) + ".id", "must be a string");
            node.id = id->get<std::string>();
            if (node.id.empty())
                return fail(nodeWhere(i) + ".id", "must not be empty");
            const std::string where = nodeWhere(i, node.id);
            if (const auto [first, inserted] = indexOf.emplace(node.id, i); !inserted)
                return fail(where, "duplicate id " + inQuotes(node.id) + ", already used by " + nodeWhere(first->second));
            const auto op = n.find("op");
            if (op == n.end())
                return fail(where, "missing \"op\"");
            if (!op->is_string() || op->get_ref<const std::string &>().empty())
                return fail(where + ".op", "must be the name of an op (a non-empty string)");
            node.op = op->get<std::string>();
            if (const auto params = n.find("params"); params != n.end()) {
                if (!params->is_object())
                    return fail(where + ".params", "must be an object");
                node.params = *params;
            }
            for (const auto &item : n.items()) {
                if (item.key() != "id" && item.key() != "op" && item.key() != "params")
                    node.extra[item.key()] = item.value();
            }
            project.nodes.push_back(std::move(node));
        }
    }

    if (const auto edges = pipeline.find("edges"); edges != pipeline.end()) {
        if (!edges->is_array())
            return fail("pipeline.edges", "must be an array");
        std::map<std::pair<std::string, std::string>, std::size_t> seen;
        for (std::size_t i = 0; i < edges->size(); ++i) {
            const json &e = (*edges)[i];
            if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_string())
                return fail(edgeWhere(i), "must be [from, to], two node ids; found " + shown(e));
            PipelineEdge edge{e[0].get<std::string>(), e[1].get<std::string>()};
            for (const std::string *end : {&edge.from, &edge.to}) {
                if (!indexOf.contains(*end))
                    return fail(edgeWhere(i), "node " + inQuotes(*end) + " does not exist");
            }
            if (edge.from == edge.to)
                return fail(edgeWhere(i), "node " + inQuotes(edge.from) + " feeds itself (a cycle)");
            if (const auto [first, inserted] = seen.emplace(std::pair(edge.from, edge.to), i); !inserted)
                return fail(edgeWhere(i), "duplicate of " + edgeWhere(first->second) + " (" + inQuotes(edge.from) + " -> " + inQuotes(edge.to) + ")");
            project.edges.push_back(std::move(edge));
        }
    }

    if (const auto output = pipeline.find("output"); output != pipeline.end()) {
        if (!output->is_string())
            return fail("pipeline.output", "must be a node id (a string)");
        if (!indexOf.contains(output->get_ref<const std::string &>()))
            return fail("pipeline.output", "node " + inQuotes(output->get<std::string>()) + " does not exist");
        project.output = output->get<std::string>();
    }

    if (const auto cycle = project_detail::findCycle(project); !cycle.empty()) {
        std::string path;
        for (const auto &id : cycle)
            path += inQuotes(id) + " -> ";
        return fail("pipeline.edges", "the nodes form a cycle: " + path + inQuotes(cycle.front()));
    }
    return Status::success();
}

} // namespace

Result<Project> Project::load(const std::string &path)
{
    auto text = readText(path);
    if (!text)
        return text.error();
    json document;
    if (Status s = parseText(*text, path, document); !s)
        return s.error();
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec).lexically_normal();
    auto project = fromJson(document, absolute.parent_path().string(), path);
    if (!project)
        return project;
    if (!document.contains("name")) {
        const std::string stem = fs::path(path).stem().string();
        project->name = stem.empty() ? "untitled" : stem;
    }
    project->m_path = absolute.string();
    return project;
}

Result<Project> Project::fromText(const std::string &text, const std::string &folder, const std::string &what)
{
    json document;
    if (Status s = parseText(text, what, document); !s)
        return s.error();
    return fromJson(document, folder, what);
}

Result<Project> Project::fromJson(const json &document, const std::string &folder, const std::string &what)
{
    const auto fail = [&what](const std::string &why) { return Error::corrupt(what, why); };
    if (!document.is_object())
        return fail("not a Sluice project: the document is not a JSON object");
    const auto format = document.find("format");
    if (format == document.end())
        return fail("missing \"format\": not a Sluice project");
    if (!format->is_string() || format->get_ref<const std::string &>() != kFormatName)
        return fail("\"format\" is " + shown(*format) + ", not \"" + kFormatName + "\": not a Sluice project");

    int version = 0; // no "version": a file from before the format had versions
    if (const auto v = document.find("version"); v != document.end()) {
        const bool negative = v->is_number_integer() && !v->is_number_unsigned() && v->get<std::int64_t>() < 0;
        if (!v->is_number_integer() || negative)
            return fail("\"version\" is " + shown(*v) + ", must be a non-negative integer");
        const std::uint64_t n = v->is_number_unsigned() ? v->get<std::uint64_t>() : std::uint64_t(v->get<std::int64_t>());
        if (n > std::uint64_t(kFormatVersion))
            return Error::unsupported(what, "written by a newer Sluice (format version " + std::to_string(n) +
                                                "; this Sluice reads up to " + std::to_string(kFormatVersion) + ")");
        version = int(n);
    }
    json migrated;
    const json *doc = &document;
    if (version < kFormatVersion) {
        migrated = document;
        if (Status s = project_detail::migrate(migrated, version, what); !s)
            return s.error();
        doc = &migrated;
    }

    Project project;
    project.m_folder = folder;
    project.name = "untitled";
    for (const auto &item : doc->items()) {
        const std::string &key = item.key();
        const json &value = item.value();
        if (key == "format" || key == "version") {
            continue;
        } else if (key == "name") {
            if (!value.is_string())
                return fail("\"name\" must be a string");
            project.name = value.get<std::string>();
        } else if (key == "pipeline") {
            if (Status s = readPipeline(value, project, project.m_pipelineExtra, what); !s)
                return s.error();
        } else if (key == "model") {
            project.model = value;
        } else if (key == "training") {
            project.training = value;
        } else if (key == "layout") {
            project.layout = value;
        } else {
            project.m_extra[key] = value;
        }
    }
    return project;
}

std::vector<std::string> Project::unknownKeyNotes() const
{
    std::vector<std::string> notes;
    const std::string keptButIgnored = "is not a key this Sluice knows: kept in the file, but it does nothing (a misspelling?)";
    for (const auto &item : m_extra.items())
        if (item.key() != "description")
            notes.push_back("\"" + item.key() + "\" " + keptButIgnored + " (known: name, description, pipeline, model, training, layout)");
    for (const auto &item : m_pipelineExtra.items())
        notes.push_back("pipeline.\"" + item.key() + "\" " + keptButIgnored + " (known: nodes, edges, output)");
    for (const auto &node : nodes)
        for (const auto &item : node.extra.items())
            notes.push_back("node \"" + node.id + "\": \"" + item.key() + "\" " + keptButIgnored + " (known: id, op, params)");
    return notes;
}

json Project::toJson() const
{
    // Unknown keys first, so that a known key of the same name (set by hand) wins.
    json document = m_extra.is_object() ? m_extra : json::object();
    document["format"] = kFormatName;
    document["version"] = kFormatVersion; // migrated projects are written in the current version
    document["name"] = name;

    json pipeline = m_pipelineExtra.is_object() ? m_pipelineExtra : json::object();
    json jsonNodes = json::array();
    for (const PipelineNode &node : nodes) {
        json n = node.extra.is_object() ? node.extra : json::object();
        n["id"] = node.id;
        n["op"] = node.op;
        n["params"] = node.params;
        jsonNodes.push_back(std::move(n));
    }
    pipeline["nodes"] = std::move(jsonNodes);
    json jsonEdges = json::array();
    for (const PipelineEdge &edge : edges)
        jsonEdges.push_back(json::array({edge.from, edge.to}));
    pipeline["edges"] = std::move(jsonEdges);
    if (output)
        pipeline["output"] = *output;
    document["pipeline"] = std::move(pipeline);

    if (!model.is_null())
        document["model"] = model;
    if (!training.is_null())
        document["training"] = training;
    if (!layout.is_null())
        document["layout"] = layout;
    return document;
}

Status Project::save(const std::string &path)
{
    std::string text;
    try {
        text = toJson().dump(2) + "\n";
    } catch (const json::type_error &e) { // a string set by code that is not UTF-8
        return Error::invalid(path, std::string("cannot write the project: ") + e.what());
    }
    auto file = AtomicFile::create(path);
    if (!file)
        return file.error();
    if (Status s = file->write(text); !s)
        return s;
    if (Status s = file->commit(); !s)
        return s;
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec).lexically_normal();
    m_path = absolute.string();
    m_folder = absolute.parent_path().string();
    return Status::success();
}

std::string Project::resolvePath(const std::string &relativeOrAbsolute) const
{
    const fs::path path(relativeOrAbsolute);
    if (path.is_absolute() || m_folder.empty())
        return relativeOrAbsolute;
    return (fs::path(m_folder) / path).lexically_normal().string();
}

Result<std::vector<std::string>> Project::expandFiles(const std::string &pattern) const
{
    const std::string resolved = resolvePath(pattern);
    const std::string lookedAt = resolved == pattern ? std::string() : " (looked for " + resolved + ")";
    if (pattern.find_first_of("*?[") == std::string::npos) {
        std::error_code ec;
        if (!fs::exists(resolved, ec))
            return Error::notFound(pattern, "no such file" + lookedAt);
        return std::vector<std::string>{resolved};
    }
    glob_t matches{};
    const int rc = ::glob(resolved.c_str(), 0, nullptr, &matches);
    std::vector<std::string> files;
    if (rc == 0)
        files.assign(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
    ::globfree(&matches);
    if (rc == GLOB_NOMATCH || (rc == 0 && files.empty()))
        return Error::notFound(pattern, "no file matches the pattern" + lookedAt);
    if (rc != 0)
        return Error::io(pattern, "cannot read a folder while expanding the pattern" + lookedAt);
    // glob(3) sorts by the locale's collation; byte order makes the file order the same everywhere.
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace sluice
