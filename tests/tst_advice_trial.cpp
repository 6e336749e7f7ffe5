// Advice that is measured: the change each kind of verdict names, and trials of the project as
// it is against the project with the change (alternating, the same time each, several rounds):
// a change that helps is reported as a speed-up above the spread, one that cannot help as no
// gain; `sluice run --profile --try-advice` reports the same, and the project file is unchanged.
// Timing-sensitive: ctest runs it alone (RUN_SERIAL).
#include "pipeline/profile/advice_trial.h"
#include "project/project.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace sluice;
using namespace sluice::test;

namespace {

// A compute-bound pipeline: noise over 16 KiB rows, four a batch, on one call slot.
std::string noisyChain(int parallelCalls)
{
    return chain({op("src", "from_npy", {{"features", {{"x", "x.npy"}}}}), op("b", "batch", {{"batch_size", 4}}),
                  op("noise", "map", {{"function", "gaussian_noise"}, {"features", nlohmann::json::array({"x"})}, {"stddev", 1.0},
                                      {"seed", 1}, {"num_parallel_calls", parallelCalls}}),
                  op("pf", "prefetch", {{"buffer_size", 4}})});
}

pipeline::StageSnapshot stage(const std::string &id, const std::string &op)
{
    pipeline::StageSnapshot s;
    s.id = id;
    s.op = op;
    return s;
}

} // namespace

class TestAdviceTrial : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

    Result<Project> project(const std::string &pipelineJson)
    {
        writeFile(m_dir.filePath("p.sluice").toStdString(), projectText(pipelineJson));
        return Project::load(m_dir.filePath("p.sluice").toStdString());
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        std::vector<float> values(256 * 4096);
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = float(i % 997) * 0.001f;
        writeNpy(m_dir.filePath("x.npy").toStdString(), values, {4096});
    }

    // Each kind of verdict names the change its advice stands for, or none.
    void verdictsNameTheirChange()
    {
        auto p = project(chain({op("src", "range", {{"stop", 10}}), op("m", "map", {{"function", "identity"}}),
                                op("s", "shuffle", {{"buffer_size", 400}}), op("pf", "prefetch", {{"buffer_size", 2}}),
                                op("i", "interleave", {{"cycle_length", 1}})}));
        QVERIFY(p.ok());
        pipeline::PipelineSnapshot snap;
        snap.threads = 4;
        snap.cores = 2;
        snap.stages = {stage("src", "range"), stage("m", "map"), stage("s", "shuffle"), stage("pf", "prefetch"), stage("i", "interleave")};
        snap.stages[2].bufferSize = 400;
        snap.stages[3].queueCapacity = 2;
        using K = pipeline::BottleneckKind;
        auto changeFor = [&](const std::string &node, K kind) { return pipeline::adviceChange({node, kind, ""}, snap, *p); };

        auto c = changeFor("m", K::Compute); // a map one element at a time: as many calls as threads
        QVERIFY(c && c->node == "m" && c->param == "num_parallel_calls" && c->to == 4 && c->from.is_null());
        QCOMPARE(c->text(), std::string("set m.num_parallel_calls from unset to 4"));
        // As snapshots carry it ("advice_change") and the workbench reads it back.
        auto back = pipeline::AdviceChange::fromJson(c->toJson());
        QVERIFY(back.ok() && back->node == "m" && back->param == "num_parallel_calls" && back->to == 4 && back->from.is_null());
        QCOMPARE(c->toJson()["text"], c->text());
        const nlohmann::json noTarget{{"node", "m"}, {"param", "num_parallel_calls"}};
        const nlohmann::json numberNode{{"node", 3}, {"param", "num_parallel_calls"}, {"to", 2}};
        const nlohmann::json noNode{{"node", ""}, {"param", "buffer_size"}, {"to", 2}};
        for (const nlohmann::json &bad : {noTarget, numberNode, noNode, nlohmann::json("set m")}) {
            auto refused = pipeline::AdviceChange::fromJson(bad);
            QVERIFY2(!refused.ok() && contains(refused.error().message(), "advice_change"), bad.dump().c_str());
        }
        c = changeFor("pf", K::Buffer);
        QVERIFY(c && c->param == "buffer_size" && c->from == 2 && c->to == 8);
        c = changeFor("s", K::Buffer); // a buffer that takes long to fill: a quarter of it
        QVERIFY(c && c->param == "buffer_size" && c->to == 100);
        c = changeFor("i", K::Buffer);
        QVERIFY(c && c->param == "cycle_length" && c->from == 1 && c->to == 4);
        c = changeFor("pipeline", K::Contention); // more threads than cores
        QVERIFY(c && c->node.empty() && c->param == "threads" && c->to == 2);
        QCOMPARE(c->text(), std::string("run with --threads 2 instead of 4"));
        QCOMPARE(pipeline::withChange(pipeline::PipelineOptions{}, *c).threads, 2);
        // Advice that no parameter makes: other data, storage, code, or the consumer itself.
        QVERIFY(!changeFor("src", K::Storage));
        QVERIFY(!changeFor("m", K::Gil));
        QVERIFY(!changeFor("consumer", K::Consumer));
        snap.threads = 2;
        QVERIFY(!changeFor("pipeline", K::Contention)); // another process: nothing here to change
        snap.stages[1].async = true;
        snap.stages[1].parallelism = 2;
        QVERIFY(!changeFor("m", K::Compute)); // already the whole budget
        // A value AUTOTUNE sets is never advice to raise by hand.
        snap.threads = 4;
        snap.stages[1].parallelism = 1;
        QVERIFY(changeFor("m", K::Compute)); // set by hand to 1: raise it
        snap.stages[1].tunesParallelism = true;
        snap.stages[1].tuned["num_parallel_calls"] = 1;
        QVERIFY(!changeFor("m", K::Compute));
        snap.stages[3].tuned["buffer_size"] = 2;
        QVERIFY(!changeFor("pf", K::Buffer));
        snap.threads = 2;
        // The change applies to a copy.
        const Project changed = pipeline::withChange(*p, pipeline::AdviceChange{"pf", "buffer_size", 2, 8});
        QCOMPARE(changed.findNode("pf")->params["buffer_size"].get<int>(), 8);
        QCOMPARE(p->findNode("pf")->params["buffer_size"].get<int>(), 2);
    }

    // The verdict is judged on the rounds' figures (given here: no speed is asserted in the suite).
    void aChangeThatHelpsIsASpeedUpAboveTheSpread()
    {
        pipeline::AdviceTrial trial;
        trial.secondsEach = 0.4;
        trial.rounds = {{100, 190}, {100, 180}, {100, 200}};
        pipeline::judge(trial);
        QVERIFY2(trial.helps, trial.summary().c_str());
        QCOMPARE(trial.speedup, 1.9);
        QCOMPARE(trial.lowest, 1.8);
        QCOMPARE(trial.highest, 2.0);
        QCOMPARE(trial.summary(), std::string("1.90x (1.80-2.00 over 3 rounds of 0.4 s each): it helps"));
    }

    void aChangeThatCannotHelpIsNoGain()
    {
        // A median well above 1 with one round within the noise is no gain: every round must gain.
        pipeline::AdviceTrial trial;
        trial.secondsEach = 0.4;
        trial.rounds = {{100, 150}, {100, 104}, {100, 160}};
        pipeline::judge(trial);
        QVERIFY2(!trial.helps, trial.summary().c_str());
        QCOMPARE(trial.speedup, 1.5);
        QVERIFY(contains(trial.summary(), "no gain"));
        pipeline::AdviceTrial none;
        pipeline::judge(none); // no rounds: nothing judged, nothing helps
        QVERIFY(!none.helps);
    }

    void aTrialMeasuresEveryRoundOnBothSides()
    {
        auto p = project(noisyChain(1));
        QVERIFY(p.ok());
        const pipeline::AdviceChange change{"noise", "num_parallel_calls", 1, 2};
        auto trial = pipeline::tryAdvice(*p, untunedOptions(2), change, 0.4, 3);
        QVERIFY2(trial.ok(), trial.ok() ? "" : trial.error().message().c_str());
        qInfo("%s", trial->summary().c_str()); // the measured speed-up is a figure, not a test
        QCOMPARE(trial->rounds.size(), std::size_t(3));
        for (const pipeline::TrialRound &round : trial->rounds)
            QVERIFY(round.baseline > 0 && round.changed > 0);
        QVERIFY(trial->lowest <= trial->speedup && trial->speedup <= trial->highest);
        QCOMPARE(trial->helps, trial->lowest > pipeline::kHelpsAbove);
    }

    void aChangedPipelineThatFailsSaysWhichChange()
    {
        auto p = project(noisyChain(1));
        QVERIFY(p.ok());
        auto trial = pipeline::tryAdvice(*p, untunedOptions(2), pipeline::AdviceChange{"noise", "num_parallel_calls", 1, "lots"}, 0.1, 1);
        QVERIFY(!trial.ok());
        QVERIFY2(contains(trial.error().message(), "noise.num_parallel_calls") && contains(trial.error().message(), "lots"),
                 trial.error().message().c_str());
    }

    void theCliTriesTheAdviceAndLeavesTheProjectAsItWas()
    {
        auto p = project(noisyChain(1));
        QVERIFY(p.ok());
        const QString file = m_dir.filePath("p.sluice");
        const std::string before = readFile(file.toStdString());
        const auto r = runSluice({"run", file, "--profile", "--seconds", "1", "--threads", "2", "--try-advice", "--trial-seconds", "0.4",
                                  "--rounds", "3", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto lines = jsonLines(r.out);
        QVERIFY(lines.size() >= 2);
        const auto &trial = lines[lines.size() - 2];
        QCOMPARE(trial["event"], "advice_trial");
        QCOMPARE(trial["bottleneck"], "noise");
        QCOMPARE(trial["param"], "num_parallel_calls");
        QCOMPARE(trial["to"].get<int>(), 2);
        QCOMPARE(trial["rounds"].size(), std::size_t(3));
        QVERIFY(trial["helps"].is_boolean()); // whether it helped is measured: a figure, not a test
        QCOMPARE(lines.back()["event"], "run_end");
        // The final statistics, which the verdict was judged on, name the change tried: what the
        // workbench and Python read.
        const nlohmann::json &named = lines.back()["stats"]["advice_change"];
        QVERIFY2(named.is_object(), lines.back()["stats"].dump().c_str());
        QCOMPARE(named["node"], "noise");
        QCOMPARE(named["param"], "num_parallel_calls");
        QCOMPARE(named["to"], trial["to"]);
        QCOMPARE(readFile(file.toStdString()), before);

        const auto text = runSluice({"run", file, "--profile", "--seconds", "0.5", "--threads", "2", "--try-advice", "--trial-seconds", "0.3",
                                     "--rounds", "2"});
        QVERIFY2(text.exitCode == 0, qPrintable(text.err));
        QVERIFY2(text.out.contains("advice: set noise.num_parallel_calls from 1 to 2") && text.out.contains("measured: "),
                 qPrintable(text.out));

        for (const QStringList &bad : {QStringList{"--try-advice", "--rounds", "0"}, QStringList{"--rounds", "2"},
                                       QStringList{"--try-advice", "--trial-seconds", "-1"}}) {
            const auto b = runSluice(QStringList{"run", file, "--profile"} + bad);
            QCOMPARE(b.exitCode, 2);
        }
    }
};

QTEST_MAIN(TestAdviceTrial)
#include "tst_advice_trial.moc"
