// The project file: loading, unknown keys kept on save, newer versions refused, version 0
// migrated, structural errors that name the node or key, paths and globs relative to the
// project's folder, graph order and the output node, and atomic saving.
#include "project/project.h"
#include "support/test_support.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <string>
#include <vector>

using namespace sluice;
using nlohmann::json;

namespace {

using Ids = std::vector<std::string>;

const char *kValid = R"({
  "format": "sluice-project", "version": 1, "name": "mnist",
  "pipeline": {
    "nodes": [
      {"id": "src", "op": "TFRecordDataset", "params": {"filenames": "data/part-*.tfrecord"}},
      {"id": "shuf", "op": "shuffle", "params": {"buffer_size": 1024, "seed": 7}},
      {"id": "batch", "op": "batch", "params": {"batch_size": 32}}
    ],
    "edges": [["src", "shuf"], ["shuf", "batch"]],
    "output": "batch"
  },
  "model": {"layers": [784, 10]},
  "layout": {"positions": {"src": [0, 0]}}
})";

// A project parsed from text whose relative paths resolve under /proj.
Result<Project> parse(const std::string &text) { return Project::fromText(text, "/proj", "t.sluice"); }

// A pipeline-only project from its nodes and edges, as JSON fragments.
Project graph(const std::string &nodes, const std::string &edges, const std::string &more = {})
{
    auto p = parse(R"({"format": "sluice-project", "version": 1, "pipeline": {"nodes": )" + nodes + R"(, "edges": )" + edges + more + "}}");
    if (!p)
        qFatal("fixture does not load: %s", p.error().message().c_str());
    return std::move(p).value();
}

std::string node(const std::string &id) { return R"({"id": ")" + id + R"(", "op": "map"})"; }

struct Dir
{
    QTemporaryDir dir;
    std::string path(const std::string &name) const { return dir.filePath(QString::fromStdString(name)).toStdString(); }
    std::string write(const std::string &name, const std::string &text) const
    {
        test::writeFile(path(name), text);
        return path(name);
    }
    QStringList entries() const { return QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::System); }
};

} // namespace

class TestProjectFile : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void loadsAValidProject()
    {
        Dir d;
        const std::string file = d.write("mnist.sluice", kValid);
        auto p = Project::load(file);
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().message().c_str());
        QCOMPARE(p->name, std::string("mnist"));
        QCOMPARE(p->path(), file);
        QCOMPARE(p->folder(), QDir(d.dir.path()).absolutePath().toStdString());
        QCOMPARE(p->nodes.size(), std::size_t(3));
        QCOMPARE(p->nodes[1].id, std::string("shuf"));
        QCOMPARE(p->nodes[1].op, std::string("shuffle"));
        QCOMPARE(p->nodes[1].params.at("buffer_size").get<int>(), 1024);
        QVERIFY(p->nodes[1].extra.empty());
        QCOMPARE(p->edges.size(), std::size_t(2));
        QCOMPARE(p->edges[1].from, std::string("shuf"));
        QCOMPARE(p->edges[1].to, std::string("batch"));
        QCOMPARE(p->output, std::optional<std::string>("batch"));
        QCOMPARE(p->model.at("layers"), json({784, 10}));
        QVERIFY(p->training.is_null());
        QCOMPARE(p->layout.at("positions").at("src"), json({0, 0}));
        QCOMPARE(p->findNode("batch")->op, std::string("batch"));
        QVERIFY(p->findNode("nope") == nullptr);
    }

    void defaultsWhenKeysAreAbsent()
    {
        Dir d;
        auto p = Project::load(d.write("speech.sluice", R"({"format": "sluice-project", "version": 1,
            "pipeline": {"nodes": [{"id": "a", "op": "range"}]}})"));
        QVERIFY(p.ok());
        QCOMPARE(p->name, std::string("speech")); // the file's stem
        QCOMPARE(p->nodes[0].params, json::object());
        QVERIFY(p->edges.empty());
        QVERIFY(!p->output);
        auto bare = parse(R"({"format": "sluice-project", "version": 1})");
        QVERIFY(bare.ok());
        QCOMPARE(bare->name, std::string("untitled"));
        QVERIFY(bare->nodes.empty());
    }

    void unknownKeysSurviveSaveAndLoad()
    {
        Dir d;
        const std::string file = d.write("a.sluice", R"({"format": "sluice-project", "version": 1, "name": "x",
            "future": {"answer": 42},
            "pipeline": {"nodes": [{"id": "a", "op": "range", "params": {"n": 3}, "comment": "keep me"},
                                   {"id": "b", "op": "batch"}],
                         "edges": [["a", "b"]], "ports": ["p1"]},
            "training": {"epochs": 2}})");
        auto p = Project::load(file);
        QVERIFY(p.ok());
        QCOMPARE(p->nodes[0].extra, json({{"comment", "keep me"}}));

        const std::string copy = d.path("b.sluice");
        QVERIFY(p->save(copy).ok());
        auto again = Project::load(copy);
        QVERIFY(again.ok());
        const json saved = again->toJson();
        QCOMPARE(saved.at("future"), json({{"answer", 42}}));
        QCOMPARE(saved.at("pipeline").at("ports"), json({"p1"}));
        QCOMPARE(saved.at("pipeline").at("nodes").at(0).at("comment"), json("keep me"));
        QCOMPARE(saved.at("pipeline").at("nodes").at(0).at("params"), json({{"n", 3}}));
        QCOMPARE(saved.at("training"), json({{"epochs", 2}}));
        QVERIFY(!saved.contains("model")); // absent stays absent
        // Nothing else changed: the saved document is the file with the defaults filled in.
        json expected = json::parse(test::readFile(file));
        expected["pipeline"]["nodes"][1]["params"] = json::object();
        QCOMPARE(saved, expected);

        // load → toJson → fromJson → toJson is a fixed point.
        auto reparsed = Project::fromJson(p->toJson(), p->folder());
        QVERIFY(reparsed.ok());
        QCOMPARE(reparsed->toJson(), p->toJson());
    }

    void newerVersionIsRefused()
    {
        Dir d;
        const std::string text = R"({"format": "sluice-project", "version": 7, "pipeline": {"nodes": "whatever"}})";
        const std::string file = d.write("new.sluice", text);
        auto p = Project::load(file);
        QVERIFY(!p.ok());
        QCOMPARE(p.error().kind, Error::Kind::Unsupported);
        QCOMPARE(p.error().what, file);
        QCOMPARE(p.error().reason, std::string("written by a newer Sluice (format version 7; this Sluice reads up to 1)"));
        QCOMPARE(test::readFile(file), text);
        QCOMPARE(d.entries(), QStringList{"new.sluice"});
    }

    void version0IsMigrated()
    {
        auto p = parse(R"({"format": "sluice-project", "name": "old", "extra": true,
            "pipeline": {"stages": [{"id": "a", "type": "range", "params": {"n": 4}, "note": 1},
                                    {"id": "b", "type": "batch"}],
                         "edges": [{"from": "a", "to": "b"}]}})");
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().message().c_str());
        QCOMPARE(p->nodes.size(), std::size_t(2));
        QCOMPARE(p->nodes[0].op, std::string("range"));
        QCOMPARE(p->nodes[0].params, json({{"n", 4}}));
        QCOMPARE(p->nodes[0].extra, json({{"note", 1}})); // "type" became "op", not an extra
        QCOMPARE(p->nodes[1].op, std::string("batch"));
        QCOMPARE(p->edges.size(), std::size_t(1));
        QCOMPARE(p->edges[0].from, std::string("a"));
        QCOMPARE(p->edges[0].to, std::string("b"));
        const json saved = p->toJson();
        QCOMPARE(saved.at("version"), json(1));
        QVERIFY(!saved.at("pipeline").contains("stages"));
        QCOMPARE(saved.at("pipeline").at("edges"), json::parse(R"([["a", "b"]])"));
        QCOMPARE(saved.at("extra"), json(true));

        auto bad = parse(R"({"format": "sluice-project", "pipeline": {"stages": [], "edges": [{"from": "a"}]}})");
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().reason, std::string(R"(pipeline.edges[0]: a version-0 edge must be {"from": id, "to": id})"));
    }

    void structuralErrorsNameTheKey_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("reason");
        const QString head = R"({"format": "sluice-project", "version": 1, )";
        QTest::newRow("not an object") << "[1, 2]" << "not a Sluice project: the document is not a JSON object";
        QTest::newRow("format missing") << R"({"version": 1})" << R"(missing "format")";
        QTest::newRow("format other") << R"({"format": "keras", "version": 1})" << R"("format" is "keras", not "sluice-project")";
        QTest::newRow("version float") << R"({"format": "sluice-project", "version": 1.5})" << R"("version" is 1.5, must be a non-negative integer)";
        QTest::newRow("version negative") << R"({"format": "sluice-project", "version": -1})" << R"("version" is -1, must be a non-negative integer)";
        QTest::newRow("version string") << R"({"format": "sluice-project", "version": "1"})" << R"("version" is "1", must be a non-negative integer)";
        QTest::newRow("name") << head + R"("name": 3})" << R"("name" must be a string)";
        QTest::newRow("pipeline") << head + R"("pipeline": []})" << "pipeline: must be an object";
        QTest::newRow("nodes") << head + R"("pipeline": {"nodes": {}}})" << "pipeline.nodes: must be an array";
        QTest::newRow("node not object") << head + R"("pipeline": {"nodes": [3]}})" << "pipeline.nodes[0]: must be an object";
        QTest::newRow("missing id") << head + R"("pipeline": {"nodes": [{"op": "map"}]}})" << R"(pipeline.nodes[0]: missing "id")";
        QTest::newRow("empty id") << head + R"("pipeline": {"nodes": [{"id": "", "op": "map"}]}})" << "pipeline.nodes[0].id: must not be empty";
        QTest::newRow("missing op") << head + R"("pipeline": {"nodes": [{"id": "a", "op": "x"}, {"id": "b", "op": "x"},
                                                   {"id": "shuf", "params": {}}]}})"
                                    << R"(pipeline.nodes[2] ("shuf"): missing "op")";
        QTest::newRow("op not string") << head + R"("pipeline": {"nodes": [{"id": "a", "op": 1}]}})" << R"(pipeline.nodes[0] ("a").op: must be the name)";
        QTest::newRow("duplicate id") << head + R"("pipeline": {"nodes": [{"id": "a", "op": "x"}, {"id": "a", "op": "y"}]}})"
                                      << R"(pipeline.nodes[1] ("a"): duplicate id "a", already used by pipeline.nodes[0])";
        QTest::newRow("params not object") << head + R"("pipeline": {"nodes": [{"id": "a", "op": "x"}, {"id": "b", "op": "x", "params": [1]}]}})"
                                           << R"(pipeline.nodes[1] ("b").params: must be an object)";
        QTest::newRow("edges") << head + R"("pipeline": {"edges": 1}})" << "pipeline.edges: must be an array";
        QTest::newRow("edge shape") << head + R"("pipeline": {"nodes": [{"id": "a", "op": "x"}], "edges": [["a"]]}})"
                                    << R"(pipeline.edges[0]: must be [from, to], two node ids; found ["a"])";
        QTest::newRow("dangling edge") << head + R"("pipeline": {"nodes": [{"id": "a", "op": "x"}, {"id": "b", "op": "x"}],
                                               "edges": [["a", "b"], ["b", "a2"]]}})"
                                       << R"(pipeline.edges[1]: node "a2" does not exist)";
        QTest::newRow("self edge") << head + R"("pipeline": {"nodes": [{"id": "a", "op": "x"}], "edges": [["a", "a"]]}})"
                                   << R"(pipeline.edges[0]: node "a" feeds itself (a cycle))";
        QTest::newRow("duplicate edge") << head + R"("pipeline": {"nodes": [{"id": "a", "op": "x"}, {"id": "b", "op": "x"}],
                                                "edges": [["a", "b"], ["a", "b"]]}})"
                                        << R"(pipeline.edges[1]: duplicate of pipeline.edges[0] ("a" -> "b"))";
        QTest::newRow("cycle") << head + R"("pipeline": {"nodes": [{"id": "src", "op": "x"}, {"id": "c", "op": "x"}, {"id": "a", "op": "x"}, {"id": "b", "op": "x"}],
                                       "edges": [["src", "a"], ["a", "b"], ["b", "c"], ["c", "a"]]}})"
                               << R"(pipeline.edges: the nodes form a cycle: "c" -> "a" -> "b" -> "c")";
        QTest::newRow("output unknown") << head + R"("pipeline": {"nodes": [{"id": "a", "op": "x"}], "output": "z"}})"
                                        << R"(pipeline.output: node "z" does not exist)";
        QTest::newRow("json syntax") << "{\"format\": \"sluice-project\",\n  \"version\": 1,\n  \"name\" \"x\"}"
                                     << "invalid JSON at line 3, column 12: syntax error"; // the end of the token "x"
    }
    void structuralErrorsNameTheKey()
    {
        QFETCH(QString, text);
        QFETCH(QString, reason);
        auto p = parse(text.toStdString());
        QVERIFY(!p.ok());
        QCOMPARE(p.error().kind, Error::Kind::Corrupt);
        QCOMPARE(p.error().what, std::string("t.sluice"));
        const QString message = QString::fromStdString(p.error().message());
        QVERIFY2(message.startsWith("t.sluice: " + reason), qPrintable(message));
    }

    void loadErrorsNameTheFile()
    {
        Dir d;
        const std::string missing = d.path("missing.sluice");
        auto p = Project::load(missing);
        QVERIFY(!p.ok());
        QCOMPARE(p.error().kind, Error::Kind::NotFound);
        QCOMPARE(p.error().message(), missing + ": no such file");

        const std::string broken = d.write("broken.sluice", "{\"format\": \"sluice-project\",\n\"version\": 1,,\n}");
        p = Project::load(broken);
        QVERIFY(!p.ok());
        QCOMPARE(p.error().kind, Error::Kind::Corrupt);
        QVERIFY2(QString::fromStdString(p.error().message()).startsWith(QString::fromStdString(broken + ": invalid JSON at line 2, column 14")),
                 p.error().message().c_str());

        const std::string wrongNode = d.write("node.sluice", R"({"format": "sluice-project", "version": 1,
            "pipeline": {"nodes": [{"id": "n", "op": "map", "params": 5}]}})");
        p = Project::load(wrongNode);
        QVERIFY(!p.ok());
        QCOMPARE(p.error().message(), wrongNode + R"(: pipeline.nodes[0] ("n").params: must be an object)");
    }

    void relativePathsResolveAgainstTheFolder()
    {
        auto p = parse(kValid);
        QVERIFY(p.ok());
        QCOMPARE(p->folder(), std::string("/proj"));
        QCOMPARE(p->resolvePath("data/train.npy"), std::string("/proj/data/train.npy"));
        QCOMPARE(p->resolvePath("./data/../x.npy"), std::string("/proj/x.npy"));
        QCOMPARE(p->resolvePath("../shared/y.npy"), std::string("/shared/y.npy"));
        QCOMPARE(p->resolvePath("/abs/z.npy"), std::string("/abs/z.npy"));
    }

    void globsExpandSorted()
    {
        Dir d;
        QVERIFY(QDir(d.dir.path()).mkdir("data"));
        for (const char *name : {"data/part-2.tfrecord", "data/part-10.tfrecord", "data/part-1.tfrecord", "data/part-1.txt"})
            d.write(name, "x");
        auto p = Project::load(d.write("p.sluice", kValid));
        QVERIFY(p.ok());
        const std::string data = p->folder() + "/data/";

        auto files = p->expandFiles("data/part-*.tfrecord");
        QVERIFY(files.ok());
        QCOMPARE(*files, (Ids{data + "part-1.tfrecord", data + "part-10.tfrecord", data + "part-2.tfrecord"}));
        files = p->expandFiles("data/part-?.*");
        QVERIFY(files.ok());
        QCOMPARE(*files, (Ids{data + "part-1.tfrecord", data + "part-1.txt", data + "part-2.tfrecord"}));
        files = p->expandFiles(data + "part-[2]*"); // absolute patterns too
        QVERIFY(files.ok());
        QCOMPARE(*files, (Ids{data + "part-2.tfrecord"}));
        files = p->expandFiles("data/part-1.txt");
        QVERIFY(files.ok());
        QCOMPARE(*files, (Ids{data + "part-1.txt"}));

        files = p->expandFiles("data/*.npy");
        QVERIFY(!files.ok());
        QCOMPARE(files.error().kind, Error::Kind::NotFound);
        QCOMPARE(files.error().what, std::string("data/*.npy"));
        QVERIFY2(QString::fromStdString(files.error().reason).contains("no file matches"), files.error().reason.c_str());
        files = p->expandFiles("data/part-3.tfrecord");
        QVERIFY(!files.ok());
        QCOMPARE(files.error().kind, Error::Kind::NotFound);
        QCOMPARE(files.error().what, std::string("data/part-3.tfrecord"));
    }

    void outputNodeRules()
    {
        // One end: it is the output.
        Project p = graph("[" + node("a") + "," + node("b") + "," + node("c") + "]", R"([["a", "b"], ["b", "c"]])");
        QCOMPARE(*p.outputNode(), std::string("c"));
        // Two ends: an error listing them, until pipeline.output chooses.
        p = graph("[" + node("a") + "," + node("b") + "," + node("c") + "]", R"([["a", "b"], ["a", "c"]])");
        auto out = p.outputNode();
        QVERIFY(!out.ok());
        QCOMPARE(out.error().reason, std::string("several nodes end the pipeline (b, c); set pipeline.output"));
        p = graph("[" + node("a") + "," + node("b") + "," + node("c") + "]", R"([["a", "b"], ["a", "c"]])", R"(, "output": "b")");
        QCOMPARE(*p.outputNode(), std::string("b"));
        // No nodes at all.
        p = graph("[]", "[]");
        out = p.outputNode();
        QVERIFY(!out.ok());
        QCOMPARE(out.error().reason, std::string("the pipeline has no nodes"));
    }

    void graphOrder()
    {
        // File order is kept wherever the edges allow it.
        Project p = graph("[" + node("x") + "," + node("b") + "," + node("y") + "," + node("a") + "," + node("z") + "]",
                          R"([["a", "b"], ["z", "b"], ["x", "y"]])");
        QCOMPARE(p.topologicalOrder(), (Ids{"x", "y", "a", "z", "b"}));
        QCOMPARE(p.inputsOf("b"), (Ids{"a", "z"}));
        QCOMPARE(p.outputsOf("x"), (Ids{"y"}));
        QVERIFY(p.inputsOf("x").empty());

        // The order of inputs is the order of edges in the file (zip's element order).
        p = graph("[" + node("a") + "," + node("b") + "," + node("zip") + "]", R"([["b", "zip"], ["a", "zip"]])");
        QCOMPARE(p.inputsOf("zip"), (Ids{"b", "a"}));
        QCOMPARE(p.topologicalOrder(), (Ids{"a", "b", "zip"}));

        // A reversed chain comes out reversed.
        p = graph("[" + node("c") + "," + node("b") + "," + node("a") + "]", R"([["a", "b"], ["b", "c"]])");
        QCOMPARE(p.topologicalOrder(), (Ids{"a", "b", "c"}));
    }

    void walksUpAndDown()
    {
        // a ─┐           Upstream of out: nearest first, inputs in edge order, each node once
        //    zip ─ m ─ out        (a diamond below zip reaches `src` twice).
        // b ─┘
        // src feeds a and b.
        Project p = graph("[" + node("src") + "," + node("a") + "," + node("b") + "," + node("zip") + "," + node("m") + "," + node("out") + "]",
                          R"([["src", "a"], ["src", "b"], ["a", "zip"], ["b", "zip"], ["zip", "m"], ["m", "out"]])");
        QCOMPARE(p.upstreamOf("out"), (Ids{"m", "zip", "a", "b", "src"}));
        QCOMPARE(p.upstreamOf("out", true), (Ids{"out", "m", "zip", "a", "b", "src"}));
        QVERIFY(p.upstreamOf("src").empty());
        QCOMPARE(p.downstreamOf("src"), (Ids{"a", "b", "zip", "m", "out"}));
        QCOMPARE(p.downstreamOf("zip", true), (Ids{"zip", "m", "out"}));
        QVERIFY(p.upstreamOf("nothing-here").empty());
        // A cycle (a file can hold one; validation refuses it) ends the walk.
        p = graph("[" + node("a") + "," + node("b") + "]", R"([["a", "b"]])");
        p.edges.push_back(p.edges.front());
        std::swap(p.edges.back().from, p.edges.back().to);
        QCOMPARE(p.upstreamOf("a"), (Ids{"b"}));
        QCOMPARE(p.downstreamOf("a", true), (Ids{"a", "b"}));
    }

    void saveIsAtomicAndPretty()
    {
        Dir d;
        const std::string file = d.write("p.sluice", "old contents that are not even JSON");
        auto p = parse(kValid);
        QVERIFY(p.ok());
        QVERIFY(p->path().empty());
        const Status s = p->save(file);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message().c_str());
        QCOMPARE(p->path(), file);
        QCOMPARE(p->folder(), QDir(d.dir.path()).absolutePath().toStdString());
        QCOMPARE(d.entries(), QStringList{"p.sluice"}); // the temporary was renamed, not left behind

        const std::string text = test::readFile(file);
        QCOMPARE(text, p->toJson().dump(2) + "\n");
        QVERIFY(text.find("\n  \"format\": \"sluice-project\"") != std::string::npos);
        auto back = Project::load(file);
        QVERIFY(back.ok());
        QCOMPARE(back->toJson(), p->toJson());

        // A save that cannot happen leaves the old file as it was.
        const Status failed = p->save(d.path("no-such-folder/p.sluice"));
        QVERIFY(!failed.ok());
        QCOMPARE(p->path(), file);
        QCOMPARE(d.entries(), QStringList{"p.sluice"});
    }
};

QTEST_GUILESS_MAIN(TestProjectFile)
#include "tst_project_file.moc"
