// The run events' one codec (events/run_events.h): every type survives encode → decode →
// encode unchanged, a failed run's error keeps its kind and location fields, and what does not
// decode says which event and key.
#include "events/run_events.h"

#include <QtTest>

using namespace sluice;
using namespace sluice::events;

namespace {

// A snapshot with every kind of field toJson() writes: a buffered stage with tuned values, a
// mapped source with its storage figures, a shuffle's buffer, a Python function's times.
pipeline::PipelineSnapshot richSnapshot()
{
    pipeline::PipelineSnapshot s;
    s.elapsedSeconds = 1.25;
    s.elements = 10;
    s.elementsPerSecond = 8;
    pipeline::StageSnapshot source;
    source.id = "arrays";
    source.op = "from_npy";
    source.elements = 2560;
    source.utilisation = 0.56;
    source.note = "rebuilding c.cache: the seed changed";
    pipeline::StorageSnapshot storage;
    storage.access = "random";
    storage.rowsRead = 2560;
    storage.waitShare = 0.1;
    storage.device = "sda";
    storage.deviceIops = 7e4;
    source.storage = storage;
    pipeline::StageSnapshot shuffle;
    shuffle.id = "s";
    shuffle.op = "shuffle";
    shuffle.bufferSize = 64;
    shuffle.buffered = 60;
    shuffle.fillSeconds = 0.01;
    shuffle.pythonSeconds = 0.2;
    shuffle.gilWaitSeconds = 0.05;
    pipeline::StageSnapshot prefetch;
    prefetch.id = "p";
    prefetch.op = "prefetch";
    prefetch.async = true;
    prefetch.queueFill = 0.25;
    prefetch.queueCapacity = 4;
    prefetch.parallelism = 1;
    prefetch.tuned = {{"buffer_size", 4}};
    prefetch.tunedWhy = {{"buffer_size", "its consumer waited"}};
    s.stages = {source, shuffle, prefetch};
    s.bottleneck = "arrays";
    s.bottleneckKind = "compute";
    s.bottleneckReason = "busy 56%";
    s.verdictLowConfidence = true;
    s.adviceChange = {{"node", "p"}, {"param", "buffer_size"}, {"from", 4}, {"to", 8}, {"text", "t"}};
    s.consumerAttached = true;
    s.inputBoundShare = 0.3;
    s.inputBound = pipeline::classifyInputBound(0.3);
    s.threads = 2;
    s.cores = 2;
    s.residentBytes = 1 << 20;
    return s;
}

std::vector<Event> oneOfEach()
{
    RunStart training;
    training.model = "Model: \"m\"\n";
    training.parameters = 1234;
    training.replicas = 2;
    training.reducer = "tree";
    training.optimizer = "adam";
    training.epochs = 3;
    training.startStep = 40;
    training.startEpoch = 1;
    RunStart pipeline;
    pipeline.kind = RunStart::Kind::Pipeline;
    pipeline.output = "batch";
    pipeline.cardinality = 10;
    EpochEnd epoch;
    epoch.epoch = 2;
    epoch.step = 80;
    epoch.values = {{"loss", 0.5}, {"mae", 0.25}, {"val_loss", 0.75}};
    epoch.seconds = 1.5;
    epoch.samplesPerSecond = 2e5;
    epoch.learningRate = 1e-3;
    telemetry::GpuSnapshot gpu;
    gpu.timeSeconds = 2.25;
    gpu.devices.push_back({0, "NVIDIA H100", 87u, 1ull << 33, 80ull << 30, std::nullopt, 61});
    CpuUsage cpu;
    cpu.time = 3;
    cpu.processPercent = 150;
    cpu.cores = 2;
    AdviceTrial untried{"src", "storage", false, "its advice needs other data", nullptr};
    RunEnd ok;
    ok.step = 120;
    ok.epochs = 3;
    RunEnd profiled;
    profiled.status = RunEnd::Status::Cancelled;
    profiled.passes = 2;
    profiled.elements = 99;
    profiled.seconds = 0.5;
    pipeline::PipelineSnapshot small;
    small.elapsedSeconds = 0.5;
    profiled.stats = Stats{small, nlohmann::json{{"step_ms", 2.0}}};
    return {training,
            pipeline,
            Step{.step = 7, .epoch = 1, .batch = 7, .loss = 0.9, .batchLoss = 0.8, .learningRate = 0.01, .samplesPerSecond = 1e4, .timeSeconds = 0.7, .cardinality = 50},
            epoch,
            Stats{richSnapshot(), "as fast as possible"},
            Checkpoint{80, 2, "runs/a/checkpoints/ckpt-80.npz"},
            Resumed{"runs/a/checkpoints/ckpt-80.npz", 80},
            Notice{"batch: num_parallel_calls has no effect here"},
            untried,
            gpu,
            cpu,
            ok,
            profiled};
}

} // namespace

class TestRunEvents : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyTypeRoundTrips()
    {
        const auto all = oneOfEach();
        QCOMPARE(all.size(), std::variant_size_v<Event> + 2); // two run_start and two run_end forms
        for (const Event &event : all) {
            const nlohmann::json json = toJson(event);
            QCOMPARE(json["event"].get<std::string>(), std::string(typeName(event)));
            auto back = parseLine(json.dump());
            QVERIFY2(back.ok(), back.ok() ? "" : back.error().message().c_str());
            QCOMPARE(back->index(), event.index());
            QCOMPARE(toJson(*back).dump(), json.dump());
        }
        const auto decoded = parseLine(toJson(all[3]).dump());
        QVERIFY(decoded.ok());
        const auto *epoch = as<EpochEnd>(*decoded);
        QVERIFY(epoch);
        QCOMPARE(epoch->values.front().first, std::string("loss")); // the loss leads, whatever the JSON order
        QCOMPARE(epoch->value("val_loss").value_or(0), 0.75);
        QVERIFY(!epoch->value("accuracy"));

        // The snapshot inside a stats event comes back typed, field for field.
        const auto stats = parseLine(toJson(all[4]).dump());
        QVERIFY(stats.ok());
        const auto &snapshot = std::get<Stats>(*stats).snapshot;
        QCOMPARE(snapshot.stages.size(), std::size_t(3));
        QVERIFY(snapshot.stages[0].storage && snapshot.stages[0].storage->device == "sda");
        QVERIFY(snapshot.stages[2].async && snapshot.stages[2].tuned.at("buffer_size") == 4);
        QVERIFY(!snapshot.stages[1].async);
        QVERIFY(snapshot.verdictLowConfidence);
        QCOMPARE(snapshot.inputBound, pipeline::InputBound::Highly);
        QCOMPARE(std::get<Stats>(*stats).consumer, nlohmann::json("as fast as possible"));
    }

    // The keys as users' scripts read them, spelt out here apart from the codec (its field
    // lists serve both directions, so a round trip alone would not notice a key renamed).
    void theKeysAreThoseTheFormatNames()
    {
        const auto all = oneOfEach();
        auto keys = [](const Event &event) {
            std::vector<std::string> names;
            const nlohmann::json json = toJson(event);
            for (const auto &item : json.items())
                names.push_back(item.key());
            return names;
        };
        using Keys = std::vector<std::string>;
        QCOMPARE(keys(all[0]), (Keys{"device", "epochs", "event", "kind", "model", "optimizer", "parameters", "processes", "reducer", "replicas",
                                     "sharding", "start_epoch", "start_step"}));
        QCOMPARE(keys(all[1]), (Keys{"cardinality", "event", "kind", "output"}));
        QCOMPARE(keys(all[2]), (Keys{"batch", "batch_loss", "cardinality", "epoch", "event", "learning_rate", "loss", "samples_per_s", "step",
                                     "time_s"}));
        QCOMPARE(keys(all[3]), (Keys{"epoch", "event", "learning_rate", "loss", "mae", "samples_per_s", "seconds", "step", "val_loss"}));
        QCOMPARE(keys(all[5]), (Keys{"epoch", "event", "path", "step"}));
        QCOMPARE(keys(all[6]), (Keys{"event", "path", "step"}));
        QCOMPARE(keys(all[7]), (Keys{"event", "message"}));
        QCOMPARE(keys(all[10]), (Keys{"cores", "event", "process_percent", "time"}));
        QCOMPARE(keys(all[11]), (Keys{"epochs", "event", "status", "step"})); // absent figures are left out
        const nlohmann::json gpu = toJson(all[9]);
        QCOMPARE(gpu["devices"][0].dump(), std::string(R"({"index":0,"memory_total_bytes":85899345920,"memory_used_bytes":8589934592,)"
                                                        R"("name":"NVIDIA H100","power_watts":null,"temperature_c":61,"utilization_percent":87})"));
        QCOMPARE(toJson(all[12])["status"], "cancelled");
    }

    void aFailedRunKeepsItsErrorsFields()
    {
        Error e = Error::invalid("model: layers[3] (hidden)", "Dense parameter 'units': must be at least 1");
        e.layer = "layers[3]";
        e.key = "units";
        RunEnd failed;
        failed.status = RunEnd::Status::Failed;
        failed.error = e;
        const nlohmann::json json = toJson(failed);
        QCOMPARE(json["error"].get<std::string>(), e.message());
        QCOMPARE(json["error_kind"].get<std::string>(), std::string("invalid"));
        QCOMPARE(json["layer"].get<std::string>(), std::string("layers[3]"));
        QVERIFY(!json.contains("node")); // empty fields are left out
        const auto back = fromJson(json);
        QVERIFY(back.ok());
        const auto &error = *std::get<RunEnd>(*back).error;
        QCOMPARE(error.kind, Error::Kind::InvalidArgument);
        QCOMPARE(error.message(), e.message());
        QCOMPARE(error.layer, e.layer);
        QCOMPARE(error.key, e.key);

        Error stage = Error::make(Error::Kind::Cancelled, "x", "cancelled").at("b", "batch_size");
        failed.error = stage;
        const auto node = std::get<RunEnd>(*fromJson(toJson(failed))).error;
        QCOMPARE(node->kind, Error::Kind::Cancelled);
        QCOMPARE(node->node, std::string("b"));
        QCOMPARE(node->param, std::string("batch_size"));
        QCOMPARE(kindFromName("out_of_memory"), Error::Kind::OutOfMemory);
    }

    void badLinesSayWhatAndWhy()
    {
        const auto notJson = parseLine("{\"event\": \"step\", ");
        QVERIFY(!notJson.ok());
        QCOMPARE(notJson.error().kind, Error::Kind::Corrupt);
        const auto noType = parseLine(R"({"step": 3})");
        QVERIFY(!noType.ok());
        QVERIFY(noType.error().message().find("\"event\"") != std::string::npos);
        const auto wrongType = parseLine(R"({"event": "step", "step": 3, "loss": "high"})");
        QVERIFY(!wrongType.ok());
        QCOMPARE(wrongType.error().message(), std::string("event \"step\": \"loss\" must be a number"));
        const auto negative = parseLine(R"({"event": "run_end", "status": "ok", "elements": -1})");
        QVERIFY(!negative.ok());
        QVERIFY(negative.error().message().find("\"elements\"") != std::string::npos);
        const auto status = parseLine(R"({"event": "run_end", "status": "fine"})");
        QVERIFY(!status.ok());
        QVERIFY(status.error().message().find("\"status\"") != std::string::npos);
        const auto metric = parseLine(R"({"event": "epoch_end", "epoch": 1, "loss": [1]})");
        QVERIFY(!metric.ok());
        QVERIFY(metric.error().message().find("\"loss\"") != std::string::npos);
        const auto stage = parseLine(R"({"event": "stats", "stages": [{"id": "a", "elements": "many"}]})");
        QVERIFY(!stage.ok());
        QCOMPARE(stage.error().message(), std::string("stats: stage: \"elements\" must be a whole number"));
        // A type a newer Sluice writes: Unsupported, which readers skip.
        const auto future = parseLine(R"({"event": "profile_trace", "path": "x"})");
        QVERIFY(!future.ok());
        QCOMPARE(future.error().kind, Error::Kind::Unsupported);
        // Keys it does not know are ignored: an older reader still reads a newer writer's event.
        QVERIFY(parseLine(R"({"event": "notice", "message": "m", "severity": "low"})").ok());
    }
};

QTEST_GUILESS_MAIN(TestRunEvents)
#include "tst_run_events.moc"
