// Images through pipelines: from_files over class folders as Keras's
// image_dataset_from_directory lists them, with shuffle, global_shuffle, shard and interleave;
// decode_image's on_error (an error naming the file, or skipped and counted in the stats);
// resize against TensorFlow's tf.image.resize (tests/data/images); the seeded augmentations
// against naive references, deterministic for a seed on 1 and several threads.
#include "io/formats/image_codec.h"
#include "io/formats/npy_file.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

using namespace sluice;
using namespace sluice::pipeline;
using nlohmann::json;
using test::op;

namespace {

// A small picture whose pixel values say which file it is: value = 10 * index + channel.
std::string pngOf(int index, int height = 6, int width = 5)
{
    std::vector<std::uint8_t> px(std::size_t(height * width * 3));
    for (std::size_t i = 0; i < px.size(); ++i)
        px[i] = std::uint8_t(10 * index + int(i % 3));
    return encodePng(px.data(), height, width, 3, "test").value();
}

// A picture with structure (no two pixels alike along a row or column), for augmentations.
std::string texturedPngOf(int index, int height = 6, int width = 5)
{
    std::vector<std::uint8_t> px(std::size_t(height * width * 3));
    for (std::size_t i = 0; i < px.size(); ++i)
        px[i] = std::uint8_t((i * 37 + std::size_t(index) * 11) % 251);
    return encodePng(px.data(), height, width, 3, "test").value();
}

// root/<class>/img<k>.png for each class, `perClass` files each; returns the root.
std::string makeClassFolders(const QTemporaryDir &dir, const std::vector<std::string> &classes, int perClass)
{
    namespace fs = std::filesystem;
    const fs::path root = fs::path(dir.path().toStdString()) / "images";
    int index = 0;
    for (const auto &c : classes) {
        fs::create_directories(root / c);
        for (int k = 0; k < perClass; ++k)
            test::writeFile((root / c / ("img" + std::to_string(k) + ".png")).string(), pngOf(index++));
    }
    test::writeFile((root / "README.txt").string(), "not an image, not in a class folder");
    return root.string();
}

json filesNode(const std::string &root, json extra = json::object())
{
    extra["directory"] = root;
    return extra;
}

std::string pipelineOf(std::vector<std::string> nodes) { return test::chain(nodes); }

} // namespace

class TestImagePipeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void classFoldersGiveKerasLabelsAndOrder()
    {
        QTemporaryDir dir;
        const std::string root = makeClassFolders(dir, {"dog", "cat", "bird"}, 2);
        // Keras sorts the class folders: bird 0, cat 1, dog 2; files sorted within each.
        auto pass = test::runPass(pipelineOf({op("src", "from_files", filesNode(root))}), "label");
        QVERIFY2(pass.ok(), pass.error.c_str());
        QCOMPARE(pass.firstValues(), (std::vector<std::int64_t>{0, 0, 1, 1, 2, 2}));
        auto paths = test::runPass(pipelineOf({op("src", "from_files", filesNode(root))}), "path");
        QVERIFY(QString::fromStdString(paths.elements[0].tensors[2].stringValues()[0]).endsWith("bird/img0.png"));
        QVERIFY(QString::fromStdString(paths.elements[5].tensors[2].stringValues()[0]).endsWith("dog/img1.png"));

        // class_names picks and orders the classes.
        auto picked = test::runPass(pipelineOf({op("src", "from_files", filesNode(root, {{"class_names", {"dog", "bird"}}}))}), "path");
        QVERIFY2(picked.ok(), picked.error.c_str());
        QCOMPARE(picked.size(), std::size_t(4));
        QVERIFY(QString::fromStdString(picked.elements[0].tensors[2].stringValues()[0]).contains("/dog/"));

        // labels null: no label feature; a list: one per file in sorted path order.
        auto unlabelled = test::buildPipeline(pipelineOf({op("src", "from_files", filesNode(root, {{"labels", nullptr}}))}));
        QVERIFY(unlabelled);
        QCOMPARE(QString::fromStdString(unlabelled->elementSpec().names()), QString("image, path"));
        auto listed = test::runPass(pipelineOf({op("src", "from_files", filesNode(root, {{"labels", {5, 4, 3, 2, 1, 0}}}))}), "label");
        QVERIFY2(listed.ok(), listed.error.c_str());
        QCOMPARE(listed.firstValues(), (std::vector<std::int64_t>{5, 4, 3, 2, 1, 0}));
    }

    void badSourceParametersNameTheParameter_data()
    {
        QTest::addColumn<QString>("params");
        QTest::addColumn<QString>("message");
        QTest::newRow("neither") << R"({})" << "give either files";
        QTest::newRow("not a folder") << R"({"directory": "/no/such/folder"})" << "is not a folder";
        QTest::newRow("unknown class") << R"({"directory": "ROOT", "class_names": ["cow"]})" << "\"cow\" is not a sub-folder";
        QTest::newRow("label count") << R"({"directory": "ROOT", "labels": [1, 2]})" << "2 labels for 4 files";
        QTest::newRow("bad labels") << R"({"directory": "ROOT", "labels": "folders"})" << "must be \"inferred\"";
        QTest::newRow("inferred files") << R"({"files": "ROOT/a/img*.png", "labels": "inferred"})" << "needs a directory";
    }
    void badSourceParametersNameTheParameter()
    {
        QFETCH(QString, params);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string root = makeClassFolders(dir, {"a", "b"}, 2);
        const json p = json::parse(params.replace("ROOT", QString::fromStdString(root)).toStdString());
        const std::string error = test::buildError(pipelineOf({op("src", "from_files", p)}));
        QVERIFY2(QString::fromStdString(error).contains(message), error.c_str());
        QVERIFY2(QString::fromStdString(error).contains("src"), error.c_str());
    }

    void worksWithShuffleGlobalShuffleShardAndInterleave()
    {
        QTemporaryDir dir;
        const std::string root = makeClassFolders(dir, {"a", "b"}, 4);
        const auto labelsOf = [&](std::vector<std::string> nodes) {
            auto pass = test::runPass(pipelineOf(nodes), "label");
            if (!pass.ok())
                qWarning("%s", pass.error.c_str());
            return pass.firstValues();
        };
        const auto src = op("src", "from_files", filesNode(root));
        for (const auto &shuffler : {op("s", "shuffle", {{"buffer_size", 8}, {"seed", 3}}), op("s", "global_shuffle", {{"seed", 3}})}) {
            const auto shuffled = labelsOf({src, shuffler});
            QCOMPARE(test::sorted(shuffled), (std::vector<std::int64_t>{0, 0, 0, 0, 1, 1, 1, 1}));
            QVERIFY(shuffled != (std::vector<std::int64_t>{0, 0, 0, 0, 1, 1, 1, 1}));
        }
        QCOMPARE(labelsOf({src, op("sh", "shard", {{"num_shards", 4}, {"index", 1}})}), (std::vector<std::int64_t>{0, 1}));
        // interleave over the files of a glob: one sub-pipeline per file, cycle_length at once.
        const std::string files = root + "/*/*.png";
        auto inter = test::runPass(pipelineOf({op("src", "from_files", {{"files", files}}),
                                               op("il", "interleave", {{"cycle_length", 2}, {"block_length", 1}})}),
                                   "path");
        QVERIFY2(inter.ok(), inter.error.c_str());
        QCOMPARE(inter.size(), std::size_t(8));
    }

    void decodeResizeAndBatchGiveImages()
    {
        QTemporaryDir dir;
        const std::string root = makeClassFolders(dir, {"a", "b"}, 3);
        auto pass = test::runPass(pipelineOf({op("src", "from_files", filesNode(root)),
                                              op("dec", "map", {{"function", "decode_image"}, {"features", "image"}, {"channels", 3}}),
                                              op("rs", "map", {{"function", "resize"}, {"features", "image"}, {"size", {4, 4}}}),
                                              op("b", "batch", {{"batch_size", 6}})}),
                                  "image");
        QVERIFY2(pass.ok(), pass.error.c_str());
        QCOMPARE(pass.size(), std::size_t(1));
        QCOMPARE(pass.shapes[0], (Shape{6, 4, 4, 3}));
        // Flat pictures stay flat through bilinear resizing: image k holds 10k + channel.
        for (int k = 0; k < 6; ++k)
            for (int c = 0; c < 3; ++c)
                QCOMPARE(pass.values[0][std::size_t(k * 48 + c)], double(10 * k + c));
    }

    void imagesOfDifferentSizesNeedAResizeBeforeBatch()
    {
        QTemporaryDir dir;
        namespace fs = std::filesystem;
        const fs::path root = fs::path(dir.path().toStdString()) / "mixed";
        fs::create_directories(root / "a");
        test::writeFile((root / "a" / "big.png").string(), pngOf(1, 8, 8));
        test::writeFile((root / "a" / "small.png").string(), pngOf(2, 4, 4));
        auto pass = test::runPass(pipelineOf({op("src", "from_files", filesNode(root.string())),
                                              op("dec", "map", {{"function", "decode_image"}, {"features", "image"}}),
                                              op("b", "batch", {{"batch_size", 2}})}),
                                  "image");
        QVERIFY(!pass.ok());
        QVERIFY2(QString::fromStdString(pass.error).contains("b"), pass.error.c_str());
    }

    void badImagesStopNamingTheFileOrAreSkippedAndCounted()
    {
        QTemporaryDir dir;
        const std::string root = makeClassFolders(dir, {"a", "b"}, 3);
        test::writeFile(root + "/a/img1.png", pngOf(1).substr(0, 40)); // cut short
        test::writeFile(root + "/b/img2.png", "not a picture");
        const auto decodeWith = [&](const std::string &onError) {
            return pipelineOf({op("src", "from_files", filesNode(root)),
                               op("dec", "map", {{"function", "decode_image"}, {"features", "image"}, {"on_error", onError}}),
                               op("rs", "map", {{"function", "resize"}, {"features", "image"}, {"size", {2, 2}}})});
        };
        auto stopped = test::runPass(decodeWith("error"), "label");
        QVERIFY(!stopped.ok());
        QVERIFY2(QString::fromStdString(stopped.error).contains("a/img1.png"), stopped.error.c_str());
        QCOMPARE(stopped.size(), std::size_t(1)); // the good file before it

        auto pipeline = test::buildPipeline(decodeWith("skip"));
        QVERIFY(pipeline);
        auto skipped = test::collect(*pipeline, "label");
        QVERIFY2(skipped.ok(), skipped.error.c_str());
        QCOMPARE(skipped.firstValues(), (std::vector<std::int64_t>{0, 0, 1, 1}));
        const auto snap = pipeline->snapshot();
        const auto dec = std::find_if(snap.stages.begin(), snap.stages.end(), [](const StageSnapshot &s) { return s.id == "dec"; });
        QVERIFY(dec != snap.stages.end());
        QCOMPARE(dec->skipped, std::uint64_t(2));
        QVERIFY2(QString::fromStdString(dec->note).contains("2 elements skipped"), dec->note.c_str());
        QVERIFY2(QString::fromStdString(dec->note).contains("a/img1.png"), dec->note.c_str());
        // The count survives the stats' JSON (what --json and the workbench read).
        QCOMPARE(PipelineSnapshot::fromJson(snap.toJson()).value().stages[1].skipped, std::uint64_t(2));
    }

    void unreadableFilesStopOrAreSkipped()
    {
        // A listed "file" that cannot be read as one (a folder named like a picture): works as
        // root too, where permissions would not stop the read.
        QTemporaryDir dir;
        const std::string root = makeClassFolders(dir, {"a"}, 3);
        std::filesystem::create_directory(root + "/a/broken.png");
        const json files = {root + "/a/img0.png", root + "/a/broken.png", root + "/a/img2.png"};
        auto stopped = test::runPass(pipelineOf({op("src", "from_files", {{"files", files}})}), "path");
        QVERIFY(!stopped.ok());
        QVERIFY2(QString::fromStdString(stopped.error).contains("broken.png"), stopped.error.c_str());
        QCOMPARE(stopped.size(), std::size_t(1));
        auto pipeline = test::buildPipeline(pipelineOf({op("src", "from_files", {{"files", files}, {"on_error", "skip"}})}));
        QVERIFY(pipeline);
        auto skipped = test::collect(*pipeline, "path");
        QVERIFY2(skipped.ok(), skipped.error.c_str());
        QCOMPARE(skipped.size(), std::size_t(2));
        QCOMPARE(pipeline->snapshot().stages.at(0).skipped, std::uint64_t(1));
    }

    void resizeMatchesTensorFlow_data()
    {
        QTest::addColumn<int>("index");
        const json manifest = json::parse(test::readFile(test::dataFile("images/images.json")));
        for (std::size_t i = 0; i < manifest["resize"].size(); ++i)
            QTest::newRow(manifest["resize"][i]["expected"].get<std::string>().c_str()) << int(i);
    }
    void resizeMatchesTensorFlow()
    {
        QFETCH(int, index);
        const json manifest = json::parse(test::readFile(test::dataFile("images/images.json")));
        const json &c = manifest["resize"][std::size_t(index)];
        // The decoded source as a one-row .npy, resized by a pipeline.
        QTemporaryDir dir;
        auto source = openNpy(test::dataFile("images/expected/resize_source.npy")).value();
        const std::string input = dir.path().toStdString() + "/source.npy";
        test::writeNpy(input, DType::UInt8, {source.shape()[0], source.shape()[1], source.shape()[2]}, source.data());
        // writeNpy's rows are the first dimension: one row holding the whole image.
        auto pass = test::runPass(pipelineOf({op("src", "from_npy", {{"features", {{"image", input}}}}),
                                              op("b", "batch", {{"batch_size", 1}}),
                                              op("rs", "map", {{"function", "resize"}, {"features", "image"}, {"size", c["size"]},
                                                               {"method", c["method"]}})}),
                                  "image");
        QVERIFY2(pass.ok(), pass.error.c_str());
        auto want = openNpy(test::dataFile("images/expected/" + c["expected"].get<std::string>())).value();
        const std::vector<double> got = pass.values.at(0);
        QCOMPARE(std::uint64_t(got.size()), want.count());
        double worst = 0;
        for (std::uint64_t i = 0; i < want.count(); ++i) {
            const std::byte *at = want.data().data();
            double w = 0;
            if (c["method"] == "nearest") {
                w = double(std::uint8_t(at[i]));
            } else {
                float f;
                std::memcpy(&f, at + i * sizeof(float), sizeof f);
                w = f;
            }
            worst = std::max(worst, std::abs(got[std::size_t(i)] - w));
        }
        // The same float operations in the same order: TF's own kernels' test tolerance is 1e-5.
        QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst)));
    }

    void augmentationsAreDeterministicOnAnyThreadCount()
    {
        QTemporaryDir dir;
        const std::string root = makeClassFolders(dir, {"a", "b"}, 6);
        for (int k = 0; k < 6; ++k)
            for (const char *c : {"a", "b"})
                test::writeFile(root + "/" + c + "/img" + std::to_string(k) + ".png", texturedPngOf(k + (c[0] == 'b' ? 6 : 0)));
        const std::string p = pipelineOf(
            {op("src", "from_files", filesNode(root)),
             op("dec", "map", {{"function", "decode_image"}, {"features", "image"}, {"dtype", "float32"}, {"num_parallel_calls", 4}}),
             op("flip", "map", {{"function", "random_flip"}, {"features", "image"}, {"seed", 1}, {"num_parallel_calls", 4}}),
             op("crop", "map", {{"function", "random_crop"}, {"features", "image"}, {"size", {3, 3}}, {"seed", 2}, {"num_parallel_calls", 4}}),
             op("br", "map", {{"function", "random_brightness"}, {"features", "image"}, {"max_delta", 0.2}, {"seed", 3}}),
             op("ct", "map", {{"function", "random_contrast"}, {"features", "image"}, {"lower", 0.5}, {"upper", 1.5}, {"seed", 4}}),
             op("b", "batch", {{"batch_size", 4}})});
        PipelineOptions one, many;
        one.threads = 1;
        many.threads = 4;
        const auto a = test::runPass(p, "image", "/", one), b = test::runPass(p, "image", "/", many);
        QVERIFY2(a.ok() && b.ok(), (a.error + b.error).c_str());
        QCOMPARE(a.flat(), b.flat());
        QCOMPARE(a.shapes[0], (Shape{4, 3, 3, 3}));
        // Another seed of any one augmentation gives other images.
        for (const std::string seed : {"\"seed\":1", "\"seed\":2", "\"seed\":3", "\"seed\":4"}) {
            std::string other = p;
            const auto at = other.find(seed);
            QVERIFY(at != std::string::npos);
            other.replace(at, seed.size(), seed.substr(0, 7) + "9");
            QVERIFY2(test::runPass(other, "image", "/", one).flat() != a.flat(), seed.c_str());
        }
    }

    void flipAndCropMoveThePixelsTheyShould()
    {
        // A 1 × 3 × 4 × 1 batch counting 0..11: a horizontal flip reverses each row, a vertical
        // one the rows, and the crop is a window of the original.
        QTemporaryDir dir;
        const std::string input = dir.path().toStdString() + "/grid.npy";
        std::vector<float> grid(12);
        for (int i = 0; i < 12; ++i)
            grid[std::size_t(i)] = float(i);
        test::writeNpy(input, grid, {3, 4, 1});
        const auto run = [&](const json &fn) {
            return test::runPass(pipelineOf({op("src", "from_npy", {{"features", {{"g", input}}}}), op("f", "map", fn)}), "g").values.at(0);
        };
        const auto h = run({{"function", "random_flip"}, {"features", "g"}, {"mode", "horizontal"}, {"seed", 0}});
        const std::vector<double> same(grid.begin(), grid.end());
        const std::vector<double> mirrored{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8};
        QVERIFY(h == same || h == mirrored);
        const auto v = run({{"function", "random_flip"}, {"features", "g"}, {"mode", "vertical"}, {"seed", 0}});
        const std::vector<double> upsideDown{8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3};
        QVERIFY(v == same || v == upsideDown);
        // Over many seeds both outcomes occur, about half each.
        int flipped = 0;
        for (int seed = 0; seed < 200; ++seed)
            flipped += run({{"function", "random_flip"}, {"features", "g"}, {"mode", "horizontal"}, {"seed", seed}}) == mirrored;
        QVERIFY2(flipped > 70 && flipped < 130, qPrintable(QString::number(flipped)));
        const auto crop = run({{"function", "random_crop"}, {"features", "g"}, {"size", {2, 2}}, {"seed", 9}});
        QCOMPARE(crop.size(), std::size_t(4));
        const int top = int(crop[0]) / 4, left = int(crop[0]) % 4;
        QCOMPARE(crop, (std::vector<double>{double(top * 4 + left), double(top * 4 + left + 1), double((top + 1) * 4 + left),
                                           double((top + 1) * 4 + left + 1)}));
    }

    void brightnessAndContrastFollowTfImage()
    {
        QTemporaryDir dir;
        const std::string input = dir.path().toStdString() + "/img.npy";
        std::vector<float> img{0.1f, 0.5f, 0.3f, 0.7f, 0.2f, 0.9f}; // 1 × 3 × 1 × 2 channels
        test::writeNpy(input, img, {3, 1, 2});
        const auto run = [&](const json &fn) {
            return test::runPass(pipelineOf({op("src", "from_npy", {{"features", {{"g", input}}}}), op("f", "map", fn)}), "g").values.at(0);
        };
        const auto b = run({{"function", "random_brightness"}, {"features", "g"}, {"max_delta", 0.25}, {"seed", 4}});
        const double delta = b[0] - 0.1;
        QVERIFY(std::abs(delta) <= 0.25 + 1e-6);
        for (std::size_t i = 0; i < img.size(); ++i)
            QVERIFY(std::abs(b[i] - (img[i] + delta)) < 1e-6);
        // adjust_contrast: per channel, (x - mean) * f + mean; the means are 0.2 and 0.7.
        const auto c = run({{"function", "random_contrast"}, {"features", "g"}, {"lower", 0.5}, {"upper", 2.0}, {"seed", 4}});
        const double f = (c[0] - 0.2) / (0.1 - 0.2);
        QVERIFY(f >= 0.5 - 1e-6 && f <= 2.0 + 1e-6);
        const double means[2] = {0.2, 0.7};
        for (std::size_t i = 0; i < img.size(); ++i)
            QVERIFY(std::abs(c[i] - ((img[i] - means[i % 2]) * f + means[i % 2])) < 1e-5);
    }

    void imageFunctionErrorsNameTheParameter_data()
    {
        QTest::addColumn<QString>("fn");
        QTest::addColumn<QString>("message");
        QTest::newRow("decode numbers") << R"({"function": "decode_image", "features": "g"})" << "scalar string";
        QTest::newRow("two channels") << R"({"function": "decode_image", "features": "s", "channels": 2})" << "1, 3 or 4";
        QTest::newRow("size") << R"({"function": "resize", "features": "g", "size": [4]})" << "[height, width]";
        QTest::newRow("rank") << R"({"function": "resize", "features": "v", "size": [2, 2]})" << "image functions take";
        QTest::newRow("crop too big") << R"({"function": "random_crop", "features": "g", "size": [9, 9]})" << "larger than";
        QTest::newRow("integer brightness") << R"({"function": "random_brightness", "features": "u", "max_delta": 0.1})" << "float32";
        QTest::newRow("contrast bounds") << R"({"function": "random_contrast", "features": "g", "lower": 2, "upper": 1})" << "greater than lower";
    }
    void imageFunctionErrorsNameTheParameter()
    {
        QFETCH(QString, fn);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        test::writeNpy(d + "/g.npy", std::vector<float>(2 * 12), {3, 4, 1});
        test::writeNpy(d + "/u.npy", std::vector<std::uint8_t>(2 * 12), {3, 4, 1});
        test::writeNpy(d + "/v.npy", std::vector<float>(2 * 3), {3});
        const std::string p = pipelineOf({op("src", "from_npy", {{"features", {{"g", d + "/g.npy"}, {"u", d + "/u.npy"}, {"v", d + "/v.npy"}}}}),
                                          op("s", "map", {{"function", "cast"}, {"features", "g"}, {"dtype", "float32"}}),
                                          op("f", "map", json::parse(fn.toStdString()))});
        std::string error = test::buildError(p);
        if (fn.contains("\"s\""))
            error = test::buildError(pipelineOf({op("src", "from_files", {{"files", d + "/g.npy"}}), op("f", "map", {{"function", "decode_image"},
                                                                                                                       {"features", "image"},
                                                                                                                       {"channels", 2}})}));
        QVERIFY2(QString::fromStdString(error).contains(message), error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestImagePipeline)
#include "tst_image_pipeline.moc"
