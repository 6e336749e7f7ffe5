// map's categorical functions against real Keras 3 / TensorFlow (tests/data/categorical, from
// make_categorical_reference.py): hashing as keras.layers.Hashing (FarmHash, SipHash with one or
// two salts, masks; strings from CSV and TFRecord bytes, integers, floats), lookup as
// StringLookup / IntegerLookup (lists, files, adapted vocabularies, OOV hashing and floormod,
// masks, max_tokens), bucketize as tf.raw_ops.Bucketize and discretize as
// keras.layers.Discretization (given and adapted boundaries, unbatched and batched): every
// index equal, sequentially and with parallel calls. Then the hashes on published vectors,
// parameters as the inspector writes them, and the build errors that name the parameter.
#include "pipeline/functions/string_hash.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"
#include "support/tfrecord_writer.h"

#include <QTemporaryDir>
#include <QtTest>

#include <charconv>
#include <cmath>

using namespace sluice;
using namespace sluice::pipeline;
using nlohmann::json;
using test::op;

namespace {

const json &reference()
{
    static const json r = json::parse(test::readFile(test::dataFile("categorical/categorical_reference.json")));
    return r;
}

// Vocabulary files are named relative to the project, here the reference's folder.
std::string referenceFolder()
{
    return test::dataFile("categorical");
}

std::string quoted(const std::string &field)
{
    std::string out = "\"";
    for (char c : field)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// A float64 as text that reads back as the same double ("nan", "inf" as from_chars takes them).
std::string numberText(const json &value)
{
    const double v = test::jsonNumber(value);
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char buffer[64];
    return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
}

std::string fromHex(const std::string &hex)
{
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(char(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return out;
}

// The reference's columns as data.csv and its raw bytes as raw.tfrecord, in `folder`.
struct Inputs
{
    std::string csv, tfrecord;
};
Inputs writeInputs(const std::string &folder)
{
    const json &columns = reference()["columns"];
    // words_again: a second string feature, for what one function does with two.
    std::string csv = "words,ints,ints32,floats,words_again\n";
    for (std::size_t i = 0; i < reference()["rows"].get<std::size_t>(); ++i) {
        const std::string word = quoted(columns["words"][i].get<std::string>());
        csv += word + "," + columns["ints"][i].dump() + "," + columns["ints32"][i].dump() + "," + numberText(columns["floats"][i]) + "," +
               word + "\n";
    }
    std::string records;
    for (const auto &hex : reference()["raw_hex"])
        records += test::frameRecord(test::serializeExample({{"raw", {}, {}, {fromHex(hex.get<std::string>())}}}));
    Inputs in{folder + "/data.csv", folder + "/raw.tfrecord"};
    test::writeFile(in.csv, csv);
    test::writeFile(in.tfrecord, records);
    return in;
}

std::string source(const Inputs &in, const std::string &feature)
{
    if (feature == "raw")
        return op("src", "from_tfrecord", {{"filenames", in.tfrecord}, {"features", {{"raw", {{"dtype", "string"}}}}}});
    return op("src", "from_csv",
              {{"filenames", in.csv}, {"columns",
               {{"words", "string"}, {"ints", "int64"}, {"ints32", "int32"}, {"floats", "float64"}, {"words_again", "string"}}}});
}

// The pipeline of a reference case: the source, an optional cast and batch, then the function.
std::string casePipeline(const Inputs &in, const json &c, int parallelCalls)
{
    const std::string feature = c["feature"].get<std::string>();
    std::vector<std::string> nodes{source(in, feature)};
    if (c.contains("cast"))
        nodes.push_back(op("cast", "map", {{"function", "cast"}, {"features", feature}, {"dtype", c["cast"]}}));
    if (c["batch"].get<int>() > 0)
        nodes.push_back(op("batch", "batch", {{"batch_size", c["batch"]}}));
    json params = c["params"];
    params["function"] = c["function"];
    params["features"] = feature;
    if (parallelCalls > 0)
        params["num_parallel_calls"] = parallelCalls;
    nodes.push_back(op("m", "map", params));
    return test::chain(nodes);
}

std::vector<std::int64_t> asIntegers(const std::vector<double> &values)
{
    std::vector<std::int64_t> out;
    for (double v : values)
        out.push_back(std::int64_t(v));
    return out;
}

// The indices `pipelineJson` gives for `feature`, checked to be int64 with the input's shapes
// (batches of `batch`, the last one possibly short); an empty list after a failed check.
std::vector<std::int64_t> indicesOf(const std::string &pipelineJson, const std::string &feature, int batch)
{
    std::string error;
    auto pipeline = test::buildPipeline(pipelineJson, referenceFolder(), {}, &error);
    if (!pipeline) {
        qWarning("build: %s", error.c_str());
        return {};
    }
    const auto index = pipeline->elementSpec().find(feature);
    if (!index || pipeline->elementSpec().features[*index].type != ValueType{DType::Int64, false}) {
        qWarning("%s is not int64 in %s", feature.c_str(), pipeline->elementSpec().names().c_str());
        return {};
    }
    const test::Pass pass = test::collect(*pipeline, feature);
    if (!pass.ok()) {
        qWarning("%s", pass.error.c_str());
        return {};
    }
    std::size_t rows = 0;
    for (const auto &shape : pass.shapes)
        rows += shape.empty() ? 1 : std::size_t(shape[0]);
    std::size_t seen = 0;
    for (const auto &shape : pass.shapes) {
        const Shape expected = batch > 0 ? Shape{std::int64_t(std::min<std::size_t>(std::size_t(batch), rows - seen))} : Shape{};
        if (shape != expected) {
            qWarning("an element has shape %s, not %s", shapeText(shape).c_str(), shapeText(expected).c_str());
            return {};
        }
        seen += shape.empty() ? 1 : std::size_t(shape[0]);
    }
    return asIntegers(pass.flat());
}

std::string where(const std::vector<std::int64_t> &got, const std::vector<std::int64_t> &expected)
{
    if (got.size() != expected.size())
        return std::to_string(got.size()) + " values, expected " + std::to_string(expected.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != expected[i])
            return "row " + std::to_string(i) + ": " + std::to_string(got[i]) + ", Keras " + std::to_string(expected[i]);
    return "equal";
}

} // namespace

class TestCategoricalFunctions : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void matchesKeras_data()
    {
        QTest::addColumn<int>("index");
        QTest::addColumn<int>("parallelCalls");
        const json &cases = reference()["cases"];
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const std::string name = cases[i]["name"].get<std::string>();
            QTest::newRow(name.c_str()) << int(i) << 0;
            QTest::newRow((name + ", parallel").c_str()) << int(i) << 3;
        }
    }
    void matchesKeras()
    {
        QFETCH(int, index);
        QFETCH(int, parallelCalls);
        QTemporaryDir dir;
        const Inputs in = writeInputs(dir.path().toStdString());
        const json &c = reference()["cases"][std::size_t(index)];
        const auto expected = c["expected"].get<std::vector<std::int64_t>>();
        const auto got = indicesOf(casePipeline(in, c, parallelCalls), c["feature"].get<std::string>(), c["batch"].get<int>());
        QVERIFY2(got == expected, where(got, expected).c_str());
    }

    // Published values: SipHash-2-4's test vector (key 00…0f, message 00…0e) and the examples in
    // keras.layers.Hashing's documentation.
    void hashesMatchPublishedValues()
    {
        std::string message;
        for (int i = 0; i < 15; ++i)
            message.push_back(char(i));
        QCOMPARE(sipHash24(0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull, message), 0xa129ca6149be45e5ull);
        QCOMPARE(farmhashFingerprint64(""), 0x9ae16a3b2f90404full);
        const std::vector<std::string> letters{"A", "B", "C", "D", "E"};
        std::vector<std::int64_t> fast, twoSalts, oneSalt;
        for (const auto &s : letters) {
            fast.push_back(hashBucketFast(s, 3));
            twoSalts.push_back(hashBucketStrong(s, 3, 133, 137));
            oneSalt.push_back(hashBucketStrong(s, 3, 133, 133));
        }
        QCOMPARE(fast, (std::vector<std::int64_t>{1, 0, 1, 1, 2}));
        QCOMPARE(twoSalts, (std::vector<std::int64_t>{1, 2, 1, 0, 2}));
        QCOMPARE(oneSalt, (std::vector<std::int64_t>{0, 0, 2, 1, 0}));
    }

    // The inspector writes masks and tokens as text and a single salt as a one-element list:
    // they mean what the numbers do.
    void parametersTypedAsTextMeanTheSame()
    {
        QTemporaryDir dir;
        const Inputs in = writeInputs(dir.path().toStdString());
        const auto find = [](const std::string &name) -> const json & {
            for (const auto &c : reference()["cases"])
                if (c["name"] == name)
                    return c;
            qFatal("no case %s", name.c_str());
        };
        const auto run = [&](json c, const json &params) {
            c["params"] = params;
            return indicesOf(casePipeline(in, c, 0), c["feature"].get<std::string>(), 0);
        };
        const json &masked = find("hashing ints mask");
        QCOMPARE(run(masked, {{"num_bins", 6}, {"mask_value", "0"}}), masked["expected"].get<std::vector<std::int64_t>>());
        const json &salted = find("hashing words salt");
        QCOMPARE(run(salted, {{"num_bins", 1000}, {"salt", {133}}}), salted["expected"].get<std::vector<std::int64_t>>());
        const json &ints = find("lookup ints 4 oov farmhash salt mask");
        json textual = ints["params"];
        textual["mask_token"] = "0";
        textual["vocabulary"] = json::array();
        for (const auto &v : ints["params"]["vocabulary"])
            textual["vocabulary"].push_back(v.dump());
        QCOMPARE(run(ints, textual), ints["expected"].get<std::vector<std::int64_t>>());
    }

    // num_oov_indices 0: a value out of the vocabulary stops the pass, naming it (Keras's error).
    void noOovIndicesMakesUnknownValuesAnError()
    {
        QTemporaryDir dir;
        const Inputs in = writeInputs(dir.path().toStdString());
        const auto pass = test::runPass(
            test::chain({source(in, "words"), op("m", "map", {{"function", "lookup"}, {"features", "words"}, {"vocabulary", {"dog", "cat"}}, {"num_oov_indices", 0}})}),
            "words", referenceFolder());
        QVERIFY(!pass.ok());
        QVERIFY2(test::contains(pass.error, "is not in the vocabulary and num_oov_indices is 0"), pass.error.c_str());
        QVERIFY2(test::contains(pass.error, "feature \"words\""), pass.error.c_str());
    }

    void badParametersAreBuildErrorsNamingThem_data()
    {
        QTest::addColumn<QString>("feature");
        QTest::addColumn<QString>("params");
        QTest::addColumn<QString>("param");
        QTest::addColumn<QString>("reason");
        const auto row = [](const char *name, const char *feature, const char *params, const char *param, const char *reason) {
            QTest::newRow(name) << feature << params << param << reason;
        };
        row("hashing without num_bins", "words", R"({"function": "hashing"})", "num_bins", "missing");
        row("hashing num_bins 0", "words", R"({"function": "hashing", "num_bins": 0})", "num_bins", "at least 1");
        row("hashing three salts", "words", R"({"function": "hashing", "num_bins": 3, "salt": [1, 2, 3]})", "salt", "one integer or a list of two");
        row("hashing text salt", "words", R"({"function": "hashing", "num_bins": 3, "salt": "x"})", "salt", "one integer or a list of two");
        row("hashing mask of another type", "ints", R"({"function": "hashing", "num_bins": 3, "mask_value": "cat"})", "mask_value",
            "is not a value of \"ints\"");
        row("lookup missing file", "words", R"({"function": "lookup", "vocabulary_file": "no-such-vocabulary.txt"})", "vocabulary_file",
            "no such file");
        row("lookup missing file as vocabulary", "words", R"({"function": "lookup", "vocabulary": "no-such-vocabulary.txt"})", "vocabulary",
            "no such file");
        row("lookup empty vocabulary", "words", R"({"function": "lookup", "vocabulary": []})", "vocabulary", "is empty");
        row("lookup repeated tokens", "words", R"({"function": "lookup", "vocabulary": ["a", "b", "a"]})", "vocabulary", "repeats tokens");
        row("lookup mask inside", "words", R"({"function": "lookup", "vocabulary": ["a", ""], "mask_token": ""})", "vocabulary",
            "holds the mask_token");
        row("lookup float token", "words", R"({"function": "lookup", "vocabulary": ["a", 1.5]})", "vocabulary", "not a string");
        row("lookup text for integers", "ints", R"({"function": "lookup", "vocabulary": [1, "two"]})", "vocabulary", "not an integer");
        row("lookup float feature", "floats", R"({"function": "lookup", "vocabulary": [1, 2]})", "features", "lookup takes strings or integers");
        row("lookup list and file", "words", R"({"function": "lookup", "vocabulary": ["a"], "vocabulary_file": "vocabulary.txt"})",
            "vocabulary_file", "not both");
        row("lookup too many tokens", "words", R"({"function": "lookup", "vocabulary": ["a", "b", "c"], "max_tokens": 3})", "max_tokens",
            "the vocabulary has 4 indices");
        row("lookup max_tokens 1", "words", R"({"function": "lookup", "max_tokens": 1})", "max_tokens", "at least 2");
        row("lookup adapted max_tokens too small", "words", R"({"function": "lookup", "max_tokens": 3, "num_oov_indices": 2, "mask_token": ""})",
            "max_tokens", "leaves no index");
        row("lookup integer salt without farmhash", "ints", R"({"function": "lookup", "vocabulary": [1], "num_oov_indices": 2, "salt": 4})",
            "salt", "oov_method \"farmhash\"");
        row("lookup bad oov_method", "ints", R"({"function": "lookup", "vocabulary": [1], "oov_method": "modulo"})", "oov_method", "modulo");
        row("lookup negative oov indices", "words", R"({"function": "lookup", "vocabulary": ["a"], "num_oov_indices": -1})", "num_oov_indices",
            "at least 0");
        row("lookup adapt_elements with a vocabulary", "words", R"({"function": "lookup", "vocabulary": ["a"], "adapt_elements": 5})",
            "adapt_elements", "applies only when the vocabulary is adapted");
        row("lookup adapt_elements 0", "words", R"({"function": "lookup", "adapt_elements": 0})", "adapt_elements", "at least 1");
        row("lookup adapting two features", "words", R"({"function": "lookup", "features": ["words", "words_again"]})", "features",
            "one feature at a time");
        row("lookup strings and integers", "words", R"({"function": "lookup", "features": ["words", "ints"], "vocabulary": ["a"]})", "features",
            "strings or integers, not both");
        row("bucketize a string feature", "words", R"({"function": "bucketize", "boundaries": [1, 2]})", "features", "is a string feature");
        row("bucketize unsorted", "floats", R"({"function": "bucketize", "boundaries": [2, 1]})", "boundaries", "must be sorted");
        row("bucketize without boundaries", "floats", R"({"function": "bucketize"})", "boundaries", "missing");
        row("discretize neither", "floats", R"({"function": "discretize"})", "bin_boundaries", "missing");
        row("discretize both", "floats", R"({"function": "discretize", "num_bins": 3, "bin_boundaries": [1]})", "num_bins", "not both");
        row("discretize epsilon with boundaries", "floats", R"({"function": "discretize", "bin_boundaries": [1], "epsilon": 0.1})", "epsilon",
            "applies only when num_bins is adapted");
        row("discretize num_bins 0", "floats", R"({"function": "discretize", "num_bins": 0})", "num_bins", "at least 1");
        row("discretize epsilon 0", "floats", R"({"function": "discretize", "num_bins": 4, "epsilon": 0})", "epsilon", "must be in (0, 1]");
        row("discretize adapting over NaN", "floats", R"({"function": "discretize", "num_bins": 4})", "num_bins", "holds NaN");
        row("discretize a string feature", "words", R"({"function": "discretize", "bin_boundaries": [1]})", "features", "is a string feature");
    }
    void badParametersAreBuildErrorsNamingThem()
    {
        QFETCH(QString, feature);
        QFETCH(QString, params);
        QFETCH(QString, param);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const Inputs in = writeInputs(dir.path().toStdString());
        json p = json::parse(params.toStdString());
        if (!p.contains("features"))
            p["features"] = feature.toStdString();
        const std::string error = test::buildError(test::chain({source(in, feature.toStdString()), op("m", "map", p)}), referenceFolder());
        QVERIFY2(!error.empty(), "the pipeline built");
        QVERIFY2(test::contains(error, "node \"m\" (map): " + param.toStdString() + ": "), error.c_str());
        QVERIFY2(test::contains(error, reason.toStdString()), error.c_str());
    }

    // Vocabulary files as TensorFlow reads them: an empty line, an empty file, a token twice or an
    // integer vocabulary's line that is not an integer are errors naming the file and line.
    void badVocabularyFilesNameTheLine_data()
    {
        QTest::addColumn<QString>("feature");
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("reason");
        QTest::newRow("empty line") << "words" << QByteArray("cat\n\ndog\n") << "line 2 is empty";
        QTest::newRow("blank last line") << "words" << QByteArray("cat\ndog\n\r\n") << "line 3 is empty";
        QTest::newRow("empty file") << "words" << QByteArray() << "is empty";
        QTest::newRow("repeated") << "words" << QByteArray("cat\ndog\ncat") << "line 3 repeats \"cat\"";
        QTest::newRow("not an integer") << "ints" << QByteArray("7\nseven\n") << "line 2: \"seven\" is not an integer";
    }
    void badVocabularyFilesNameTheLine()
    {
        QFETCH(QString, feature);
        QFETCH(QByteArray, content);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const Inputs in = writeInputs(dir.path().toStdString());
        test::writeFile(dir.path().toStdString() + "/vocab.txt", content.toStdString());
        const std::string error = test::buildError(
            test::chain({source(in, feature.toStdString()),
                         op("m", "map", {{"function", "lookup"}, {"features", feature.toStdString()}, {"vocabulary_file", "vocab.txt"}})}),
            dir.path().toStdString());
        QVERIFY2(test::contains(error, "vocabulary_file: "), error.c_str());
        QVERIFY2(test::contains(error, "vocab.txt"), error.c_str());
        QVERIFY2(test::contains(error, reason.toStdString()), error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCategoricalFunctions)
#include "tst_categorical_functions.moc"
