#include "support/train_test_support.h"

#include "support/pipeline_test_support.h"
#include "io/formats/npz_file.h"
#include "io/writers/npz_writer.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace sluice::test {

void writeTrainingData(const std::string &folder, int rows)
{
    std::mt19937 gen(1234);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    std::vector<float> x(std::size_t(rows) * 6), meta(std::size_t(rows) * 3), y(std::size_t(rows) * 2), score(static_cast<std::size_t>(rows)),
        w(static_cast<std::size_t>(rows)), seq(std::size_t(rows) * 15);
    std::vector<std::int64_t> label(static_cast<std::size_t>(rows));
    for (int r = 0; r < rows; ++r) {
        float *xr = &x[std::size_t(r) * 6], *mr = &meta[std::size_t(r) * 3];
        for (int k = 0; k < 6; ++k)
            xr[k] = normal(gen);
        for (int k = 0; k < 3; ++k)
            mr[k] = uniform(gen);
        y[std::size_t(r) * 2] = std::tanh(xr[0] - 0.5f * xr[1]) + 0.3f * mr[0];
        y[std::size_t(r) * 2 + 1] = 0.5f * xr[2] * mr[1] - 0.2f * xr[3];
        score[std::size_t(r)] = 0.7f * xr[4] + 0.1f * mr[2];
        // Imbalanced classes: 0 most of the time, 1 and 2 rarely, decided by x.
        label[std::size_t(r)] = xr[0] + xr[5] > 1.6f ? 1 : (xr[1] > 1.3f ? 2 : 0);
        w[std::size_t(r)] = 0.5f + uniform(gen);
        for (int t = 0; t < 5; ++t)
            for (int f = 0; f < 3; ++f)
                seq[std::size_t(r) * 15 + std::size_t(t) * 3 + std::size_t(f)] = std::sin(0.7f * float(t) + xr[f]) * 0.8f;
    }
    const auto n = std::uint64_t(rows);
    (void)n;
    writeNpy<float>(folder + "/x.npy", x, {6});
    writeNpy<float>(folder + "/meta.npy", meta, {3});
    writeNpy<float>(folder + "/y.npy", y, {2});
    writeNpy<float>(folder + "/score.npy", score, {1});
    writeNpy<float>(folder + "/w.npy", w, {});
    writeNpy<std::int64_t>(folder + "/label.npy", label, {});
    writeNpy<float>(folder + "/seq.npy", seq, {5, 3});
}

nlohmann::json trainingProject(const nlohmann::json &model, const nlohmann::json &training, int batchSize,
                               const std::vector<nlohmann::json> &beforeBatch)
{
    std::vector<nlohmann::json> nodes;
    nodes.push_back({{"id", "src"},
                     {"op", "from_npy"},
                     {"params",
                      {{"features",
                        {{"x", "x.npy"}, {"meta", "meta.npy"}, {"y", "y.npy"}, {"score", "score.npy"}, {"w", "w.npy"}, {"label", "label.npy"},
                         {"seq", "seq.npy"}}}}}});
    for (const auto &n : beforeBatch)
        nodes.push_back(n);
    nodes.push_back({{"id", "batch"}, {"op", "batch"}, {"params", {{"batch_size", batchSize}}}});
    std::vector<nlohmann::json> edges;
    for (std::size_t i = 1; i < nodes.size(); ++i)
        edges.push_back(std::vector<std::string>{nodes[i - 1]["id"].get<std::string>(), nodes[i]["id"].get<std::string>()});
    return {{"format", "sluice-project"},
            {"version", 1},
            {"name", "test"},
            {"pipeline", {{"nodes", nodes}, {"edges", edges}}},
            {"model", model},
            {"training", training}};
}

nlohmann::json multiInputModel(double dropout)
{
    return nlohmann::json::parse(R"({
      "inputs": [{"name": "x", "feature": "x"}, {"name": "meta", "feature": "meta"}],
      "layers": [
        {"class_name": "Dense", "name": "enc", "inputs": ["x"], "units": 12, "activation": "tanh"},
        {"class_name": "Concatenate", "name": "cat", "inputs": ["enc", "meta"]},
        {"class_name": "LayerNormalization", "name": "norm"},
        {"class_name": "Dropout", "name": "drop", "rate": )" + std::to_string(dropout) + R"(},
        {"class_name": "Dense", "name": "hidden", "units": 10, "activation": "tanh"},
        {"class_name": "Dense", "name": "y_head", "inputs": ["hidden"], "units": 2},
        {"class_name": "Dense", "name": "score_head", "inputs": ["hidden"], "units": 1}
      ],
      "outputs": [
        {"name": "y", "layer": "y_head", "target": "y", "loss": "mse", "metrics": ["mae"]},
        {"name": "score", "layer": "score_head", "target": "score", "loss": "huber", "loss_weight": 0.5}
      ]})");
}

nlohmann::json mlpModel()
{
    return nlohmann::json::parse(R"({
      "inputs": [{"name": "x", "feature": "x"}],
      "layers": [
        {"class_name": "Dense", "name": "d1", "units": 16, "activation": "relu"},
        {"class_name": "Dense", "name": "d2", "units": 2}
      ],
      "outputs": [{"name": "y", "layer": "d2", "target": "y", "loss": "mse", "metrics": ["mae"]}]})");
}

std::vector<nlohmann::json> TrainingRun::eventsOf(const std::string &type) const
{
    std::vector<nlohmann::json> found;
    for (const auto &e : events)
        if (e.value("event", "") == type)
            found.push_back(e);
    return found;
}

TrainingRun runTraining(const nlohmann::json &document, const std::string &folder, train::TrainerOptions options,
                        const std::function<void(train::Trainer &, const nlohmann::json &)> &onEvent)
{
    TrainingRun run;
    auto project = Project::fromJson(document, folder);
    if (!project) {
        run.error = project.error().message();
        return run;
    }
    auto config = train::parseTrainingConfig(*project);
    if (!config) {
        run.error = config.error().message();
        return run;
    }
    train::Trainer *current = nullptr;
    options.stepEventInterval = 0; // every step, so tests can act on a given one
    // The events as JSON, encoded as `sluice run --json` prints them: tests read the wire form.
    options.onEvent = [&](const events::Event &event) {
        const nlohmann::json e = events::toJson(event);
        run.events.push_back(e);
        if (onEvent && current)
            onEvent(*current, e);
    };
    auto trainer = train::Trainer::create(*project, *config, options);
    if (!trainer) {
        run.error = trainer.error().message();
        return run;
    }
    current = trainer->get();
    run.outcome = (*trainer)->run();
    if (run.outcome.error)
        run.error = run.outcome.error->message();
    run.weights = (*trainer)->weights();
    return run;
}

double maxRelativeDifference(const std::vector<float> &a, const std::vector<float> &b)
{
    if (a.size() != b.size())
        return INFINITY;
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
        scale = std::max(scale, std::abs(double(b[i])));
    }
    return scale > 0 ? worst / scale : worst;
}

std::string noticesOf(const TrainingRun &run)
{
    std::string all;
    for (const auto &e : run.eventsOf("notice"))
        all += e["message"].get<std::string>() + "\n";
    return all;
}

bool rewriteCheckpointState(const std::string &path, const std::string &keys)
{
    auto npz = NpzFile::open(path);
    if (!npz)
        return false;
    struct Member
    {
        std::string name;
        TypeDescr descr;
        std::vector<std::uint64_t> shape;
        std::vector<std::byte> bytes;
    };
    std::vector<Member> members;
    for (const auto &m : npz->members()) {
        auto array = npz->load(m);
        if (!array)
            return false;
        const auto data = array->data();
        members.push_back({m.name, array->descr(), array->shape(), std::vector<std::byte>(data.begin(), data.end())});
    }
    for (auto &m : members) {
        if (m.name != "state")
            continue;
        auto state = nlohmann::json::parse(reinterpret_cast<const char *>(m.bytes.data()), reinterpret_cast<const char *>(m.bytes.data()) + m.bytes.size());
        state.update(nlohmann::json::parse("{" + keys + "}"));
        const std::string text = state.dump();
        m.bytes.assign(reinterpret_cast<const std::byte *>(text.data()), reinterpret_cast<const std::byte *>(text.data()) + text.size());
        m.shape = {text.size()};
    }
    auto writer = NpzWriter::create(path);
    if (!writer)
        return false;
    for (const auto &m : members)
        if (!writer->add(m.name, m.descr, m.shape, m.bytes).ok())
            return false;
    return writer->finish().ok();
}

} // namespace sluice::test
