// The workbench's project document: every edit is undoable and redoable, connections that make
// no sense are refused with the reason, saving writes what core reads back (unknown keys kept),
// recovered work is dirty, and the background check names the stage and parameter at fault.
#include "document/graph_layout.h"
#include "document/project_document.h"
#include "document/project_validator.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace sluice;
using namespace sluice::widgets;
using namespace sluice::test;
using nlohmann::json;

class TestProjectDocument : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

    QString path(const QString &name) const { return m_dir.filePath(name); }

    // range → batch, as a user would build it.
    std::unique_ptr<ProjectDocument> rangeBatch(QString *source = nullptr, QString *batch = nullptr)
    {
        auto doc = std::make_unique<ProjectDocument>(m_dir.path());
        const QString s = doc->addNode("range", {{"stop", 10}}, {0, 0});
        const QString b = doc->addNode("batch", {{"batch_size", 4}}, {230, 0});
        [&] { QVERIFY(!doc->connectNodes(s, b)); }();
        if (source)
            *source = s;
        if (batch)
            *batch = b;
        return doc;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void addedStagesGetUniqueIds()
    {
        ProjectDocument doc(m_dir.path());
        QCOMPARE(doc.addNode("shuffle", {}, {}), QString("shuffle"));
        QCOMPARE(doc.addNode("shuffle", {}, {}), QString("shuffle_2"));
        QCOMPARE(doc.addNode("shuffle", {}, {}), QString("shuffle_3"));
        QCOMPARE(doc.nodeIds(), QStringList({"shuffle", "shuffle_2", "shuffle_3"}));
    }

    void everyEditUndoesAndRedoes()
    {
        QString s, b;
        auto doc = rangeBatch(&s, &b);
        QUndoStack *undo = doc->undoStack();
        const json built = doc->state();
        doc->setParameter(b, "drop_remainder", true);
        doc->moveNodes({{b, QPointF(300, 50)}});
        doc->setModel(QJsonObject{{"layers", QJsonArray{}}});
        doc->setTraining(QJsonObject{{"epochs", 3}});
        doc->removeNodes({s});
        QCOMPARE(doc->project().nodes.size(), std::size_t(1));
        QVERIFY(doc->project().edges.empty()); // the edge went with its stage
        const json edited = doc->state();
        while (undo->canUndo() && undo->index() > 3)
            undo->undo();
        QCOMPARE(doc->state(), built);
        while (undo->canRedo())
            undo->redo();
        QCOMPARE(doc->state(), edited);
        QCOMPARE(doc->position(b), QPointF(300, 50));
        QCOMPARE(doc->project().training["epochs"].get<int>(), 3);
        undo->undo(); // the removal
        QCOMPARE(doc->project().nodes.size(), std::size_t(2));
        QCOMPARE(doc->project().edges.size(), std::size_t(1));
        // An unchanged value is no step at all.
        const int steps = undo->count();
        doc->setParameter(b, "drop_remainder", true);
        QCOMPARE(undo->count(), steps);
    }

    void parameterRemovalGoesBackToTheDefault()
    {
        QString s, b;
        auto doc = rangeBatch(&s, &b);
        doc->setParameter(b, "drop_remainder", true);
        QVERIFY(doc->project().findNode(b.toStdString())->params.contains("drop_remainder"));
        doc->setParameter(b, "drop_remainder", QJsonValue(QJsonValue::Undefined));
        QVERIFY(!doc->project().findNode(b.toStdString())->params.contains("drop_remainder"));
    }

    void refusedConnectionsSayWhy()
    {
        QString s, b;
        auto doc = rangeBatch(&s, &b);
        const QString r2 = doc->addNode("range", {{"stop", 3}}, {});
        const QString zip = doc->addNode("zip", {}, {});
        const int steps = doc->undoStack()->count();
        auto reason = [&](const QString &from, const QString &to) { return doc->connectNodes(from, to).value_or(QString()); };
        QVERIFY(reason(b, s).contains("source"));            // a source takes no input
        QVERIFY(reason(s, b).contains("already feeds"));     // duplicate
        QVERIFY(reason(r2, b).contains("one input"));        // batch has its input
        QVERIFY(reason(b, b).contains("itself"));
        QVERIFY(!doc->connectNodes(b, zip));
        QVERIFY(!doc->connectNodes(r2, zip)); // zip takes any number
        QCOMPARE(doc->project().inputsOf(zip.toStdString()).size(), std::size_t(2));
        // A cycle: range → map → batch; with map's input freed, batch → map would close a loop.
        const QString r3 = doc->addNode("range", {{"stop", 3}}, {});
        const QString m = doc->addNode("map", {{"function", "identity"}}, {});
        const QString c = doc->addNode("batch", {{"batch_size", 2}}, {});
        QVERIFY(!doc->connectNodes(r3, m));
        QVERIFY(!doc->connectNodes(m, c));
        doc->disconnectNodes(r3, m);
        QVERIFY(reason(c, m).contains("cycle"));
        QCOMPARE(doc->undoStack()->count(), steps + 8); // refusals left no step
    }

    void saveWritesWhatCoreReadsAndKeepsUnknownKeys()
    {
        const QString file = path("kept.sluice");
        writeFile(file.toStdString(), R"({"format": "sluice-project", "version": 1, "name": "kept", "owner": "team-a",
            "pipeline": {"nodes": [{"id": "src", "op": "range", "params": {"stop": 5}, "note": "keep me"}], "edges": [], "zoom_hint": 2},
            "layout": {"nodes": {"src": {"x": 10, "y": 20}}}})");
        auto opened = ProjectDocument::open(file);
        QVERIFY(opened.ok());
        ProjectDocument &doc = **opened;
        QVERIFY(!doc.isDirty());
        QSignalSpy dirty(&doc, &ProjectDocument::dirtyChanged);
        const QString b = doc.addNode("batch", {{"batch_size", 2}}, {240, 20});
        QVERIFY(!doc.connectNodes("src", b));
        QVERIFY(doc.isDirty());
        QCOMPARE(dirty.count(), 1);
        QVERIFY(doc.save(file).ok());
        QVERIFY(!doc.isDirty());
        auto reread = Project::load(file.toStdString());
        QVERIFY2(reread.ok(), reread.ok() ? "" : reread.error().message().c_str());
        const json saved = reread->toJson();
        QCOMPARE(saved["owner"].get<std::string>(), std::string("team-a"));
        QCOMPARE(saved["pipeline"]["zoom_hint"].get<int>(), 2);
        QCOMPARE(saved["pipeline"]["nodes"][0]["note"].get<std::string>(), std::string("keep me"));
        QCOMPARE(reread->edges.size(), std::size_t(1));
        QCOMPARE(saved["layout"]["nodes"]["batch"]["x"].get<double>(), 240.0);
        // Reopened, the document equals what was saved.
        auto again = ProjectDocument::open(file);
        QVERIFY(again.ok());
        QCOMPARE((*again)->state(), doc.state());
        // Undo after a save makes it dirty again; redo back to the saved state is clean.
        doc.undoStack()->undo();
        QVERIFY(doc.isDirty());
        doc.undoStack()->redo();
        QVERIFY(!doc.isDirty());
    }

    // A project is named after its file: an untitled one at its first save, one still named
    // after its old file at Save As; a name the user chose stays.
    void projectsAreNamedAfterTheirFile()
    {
        ProjectDocument doc(m_dir.path());
        QCOMPARE(doc.project().name, std::string("untitled"));
        QVERIFY(doc.save(path("flow.sluice")).ok());
        QCOMPARE(doc.project().name, std::string("flow"));
        QCOMPARE(Project::load(path("flow.sluice").toStdString())->name, std::string("flow"));
        QVERIFY(doc.save(path("flow-v2.sluice")).ok()); // Save As
        QCOMPARE(Project::load(path("flow-v2.sluice").toStdString())->name, std::string("flow-v2"));
        QCOMPARE(Project::load(path("flow.sluice").toStdString())->name, std::string("flow")); // the old file as it was

        writeFile(path("chosen.sluice").toStdString(), R"({"format": "sluice-project", "version": 1, "name": "Click model",
            "pipeline": {"nodes": [{"id": "src", "op": "range", "params": {"stop": 5}}], "edges": []}})");
        auto chosen = ProjectDocument::open(path("chosen.sluice"));
        QVERIFY(chosen.ok());
        QVERIFY((*chosen)->save(path("chosen-copy.sluice")).ok());
        QCOMPARE(Project::load(path("chosen-copy.sluice").toStdString())->name, std::string("Click model"));
        // A save that fails names nothing anew.
        ProjectDocument fresh(m_dir.path());
        QVERIFY(!fresh.save(path("no-such-folder/x.sluice")).ok());
        QCOMPARE(fresh.project().name, std::string("untitled"));
    }

    void brokenAndNewerFilesAreRefusedWithTheReason()
    {
        const QString broken = path("broken.sluice"), newer = path("newer.sluice");
        writeFile(broken.toStdString(), "{\"format\": \"sluice-project\", \"version\": 1, \"pipeline\": {\"nodes\": [");
        writeFile(newer.toStdString(), R"({"format": "sluice-project", "version": 99, "pipeline": {"nodes": [], "edges": []}})");
        auto a = ProjectDocument::open(broken);
        QVERIFY(!a.ok());
        QVERIFY(contains(a.error().message(), "broken.sluice"));
        auto b = ProjectDocument::open(newer);
        QVERIFY(!b.ok());
        QVERIFY2(contains(b.error().message(), "99") && contains(b.error().message(), "newer"), b.error().message().c_str());
    }

    void copyPasteRenamesAndKeepsInnerEdges()
    {
        QString s, b;
        auto doc = rangeBatch(&s, &b);
        const QJsonObject fragment = doc->copy({s, b});
        const QStringList pasted = doc->paste(fragment, {40, 40});
        QCOMPARE(pasted, QStringList({"range_2", "batch_2"}));
        QCOMPARE(doc->project().edges.size(), std::size_t(2));
        QCOMPARE(doc->project().inputsOf("batch_2"), std::vector<std::string>{"range_2"});
        QCOMPARE(doc->position("batch_2"), doc->position(b) + QPointF(40, 40));
        QCOMPARE(doc->project().findNode("batch_2")->params["batch_size"].get<int>(), 4);
        doc->undoStack()->undo();
        QCOMPARE(doc->project().nodes.size(), std::size_t(2));
        QVERIFY(doc->paste(QJsonObject{{"nodes", "not a list"}}, {}).isEmpty());
    }

    void handWrittenFilesAreLaidOutByDepth()
    {
        const QString file = path("unplaced.sluice");
        writeFile(file.toStdString(), projectText(chain({op("a", "range", {{"stop", 4}}), op("b", "batch", {{"batch_size", 2}}),
                                                         op("c", "prefetch", {{"buffer_size", 1}})})));
        auto doc = ProjectDocument::open(file);
        QVERIFY(doc.ok());
        QVERIFY(!(*doc)->isDirty());
        QCOMPARE((*doc)->position("a").x(), 0.0);
        QCOMPARE((*doc)->position("b").x(), kLayoutColumnWidth);
        QCOMPARE((*doc)->position("c").x(), 2 * kLayoutColumnWidth);
        (*doc)->moveNodes({{"c", QPointF(-500, 900)}});
        (*doc)->autoLayout();
        QCOMPARE((*doc)->position("c"), QPointF(2 * kLayoutColumnWidth, 0));
    }

    void recoveredWorkIsDirtyAndBelongsToItsFile()
    {
        const QString original = path("recover-me.sluice");
        writeFile(original.toStdString(), projectText(chain({op("a", "range", {{"stop", 4}})})));
        const QString state = path("autosaved.sluice");
        writeFile(state.toStdString(), projectText(chain({op("a", "range", {{"stop", 4}}), op("b", "batch", {{"batch_size", 2}})})));
        auto doc = ProjectDocument::recover(state, original);
        QVERIFY(doc.ok());
        QVERIFY((*doc)->isDirty());
        QCOMPARE((*doc)->filePath(), QFileInfo(original).absoluteFilePath());
        QCOMPARE((*doc)->project().nodes.size(), std::size_t(2));
    }

    void checkNamesTheStageAndParameterAtFault()
    {
        const std::string text = projectText(chain({op("src", "range", {{"stop", 10}}), op("b", "batch", {{"batch_size", 0}}), op("p", "prefetch", {{"buffer_size", 2}})}));
        auto project = Project::fromText(text, m_dir.path().toStdString());
        QVERIFY(project.ok());
        const ProjectCheck check = checkProject(*project);
        QVERIFY(check.stages["src"].error.isEmpty());
        QCOMPARE(check.stages["src"].features, QString("{value: int64 ()}"));
        QCOMPARE(check.stages["src"].featureNames, QStringList({"value"}));
        QCOMPARE(check.stages["b"].parameter, QString("batch_size"));
        QVERIFY2(check.stages["b"].error.contains("at least 1"), qPrintable(check.stages["b"].error));
        // Downstream of the broken stage: no error of its own, nothing known.
        QVERIFY(check.stages["p"].error.isEmpty());
        QVERIFY(check.stages["p"].features.isEmpty());
    }

    void validatorDeliversOnlyTheNewestCheck()
    {
        ProjectValidator validator;
        QSignalSpy spy(&validator, &ProjectValidator::validated);
        auto good = Project::fromText(projectText(chain({op("src", "range", {{"stop", 10}})})), "/");
        auto bad = Project::fromText(projectText(chain({op("src", "range", {{"stop", "ten"}})})), "/");
        validator.validate(*good);
        validator.validate(*bad);
        const quint64 last = validator.validate(*good);
        QTRY_VERIFY_WITH_TIMEOUT(!spy.isEmpty() && spy.last().at(0).value<ProjectCheck>().generation == last, 20000);
        for (const auto &call : spy)
            QVERIFY(call.at(0).value<ProjectCheck>().generation != 2); // superseded before it started
        QVERIFY(spy.last().at(0).value<ProjectCheck>().stages["src"].error.isEmpty());
    }
};

QTEST_MAIN(TestProjectDocument)
#include "tst_project_document.moc"
