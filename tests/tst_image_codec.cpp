// JPEG and PNG decoding against TensorFlow's own tf.io.decode_image, bit for bit, on the files
// tests/data/images/make_image_fixtures.py wrote (4:2:0 and 4:4:4 JPEG, progressive, gray,
// RGBA, gray + alpha, palette and 16-bit PNG, each at every channel count TF takes); damaged
// files refused with the file named; encoding round trips.
#include "io/formats/image_codec.h"
#include "io/formats/npy_file.h"
#include "support/test_support.h"

#include <QtTest>

#include <cstring>
#include <random>

using namespace sluice;
using nlohmann::json;

namespace {

const json &imagesManifest()
{
    static const json manifest = json::parse(test::readFile(test::dataFile("images/images.json")));
    return manifest;
}

std::string fileBytes(const std::string &name) { return test::readFile(test::dataFile("images/files/" + name)); }

struct Decoded
{
    ImageInfo info;
    std::vector<std::byte> pixels;
};

Result<Decoded> decode(const std::string &bytes, ImageDecodeOptions options, const std::string &what = "image")
{
    Decoded d;
    auto info = decodeImage(std::as_bytes(std::span(bytes.data(), bytes.size())), options,
                                [&](const ImageInfo &i) {
                                    d.pixels.resize(std::size_t(i.height) * std::size_t(i.width) * std::size_t(i.channels) *
                                                    std::size_t(i.bytesPerSample));
                                    return d.pixels.data();
                                },
                                what);
    if (!info.ok())
        return info.error();
    d.info = *info;
    return d;
}

} // namespace

class TestImageCodec : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void decodeMatchesTensorFlow_data()
    {
        QTest::addColumn<int>("index");
        const auto &cases = imagesManifest()["decode"];
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const auto &c = cases[i];
            const std::string row = c["file"].get<std::string>() + " channels=" + std::to_string(c["channels"].get<int>()) + " " +
                                    c["dtype"].get<std::string>();
            QTest::newRow(row.c_str()) << int(i);
        }
    }
    void decodeMatchesTensorFlow()
    {
        QFETCH(int, index);
        const auto &c = imagesManifest()["decode"][std::size_t(index)];
        ImageDecodeOptions options;
        options.channels = c["channels"].get<int>();
        options.keep16Bit = c["dtype"] == "uint16";
        auto got = decode(fileBytes(c["file"]), options);
        QVERIFY2(got.ok(), got.ok() ? "" : got.error().message().c_str());
        auto want = openNpy(test::dataFile("images/expected/" + c["expected"].get<std::string>()));
        QVERIFY(want.ok());
        const auto &shape = want->shape();
        QCOMPARE(shape.size(), std::size_t(3));
        QCOMPARE(std::uint64_t(got->info.height), shape[0]);
        QCOMPARE(std::uint64_t(got->info.width), shape[1]);
        QCOMPARE(std::uint64_t(got->info.channels), shape[2]);
        QCOMPARE(got->info.bytesPerSample, int(itemSize(want->dtype())));
        QCOMPARE(got->pixels.size(), std::size_t(want->nbytes()));
        // Bit for bit: the same libraries with the same settings. One known difference: TF
        // gives an opaque alpha of (1 << bit depth) - 1, which for a palette of 4-bit indices is
        // 15, not 255; Sluice's opaque alpha is 255 whatever the palette's depth.
        const bool lowDepthPaletteAlpha = c["file"] == "palette.png" && options.channels == 4;
        std::size_t differing = 0;
        for (std::size_t i = 0; i < got->pixels.size(); ++i) {
            if (lowDepthPaletteAlpha && i % 4 == 3) {
                QCOMPARE(std::uint8_t(want->data()[i]), std::uint8_t(15));
                differing += got->pixels[i] != std::byte(255);
                continue;
            }
            differing += got->pixels[i] != want->data()[i];
        }
        QCOMPARE(differing, std::size_t(0));
    }

    void formatIsSniffedFromTheBytesNotTheName()
    {
        // rgb.png renamed .jpg still decodes as PNG; TF's decode_image sniffs the same way.
        const std::string png = fileBytes("rgb.png");
        QCOMPARE(sniffImageFormat(std::as_bytes(std::span(png.data(), png.size()))), ImageFormat::Png);
        const std::string jpeg = fileBytes("rgb420.jpg");
        QCOMPARE(sniffImageFormat(std::as_bytes(std::span(jpeg.data(), jpeg.size()))), ImageFormat::Jpeg);
    }

    void damagedFilesAreRefusedNamingTheFile_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("reason");
        QTest::newRow("cut short") << "truncated.jpg" << "truncated";
        QTest::newRow("bad CRC") << "bad_crc.png" << "CRC";
        QTest::newRow("text") << "not_an_image.jpg" << "not a JPEG or PNG";
    }
    void damagedFilesAreRefusedNamingTheFile()
    {
        QFETCH(QString, file);
        QFETCH(QString, reason);
        // TensorFlow refuses each of these too (images.json says so).
        QCOMPARE(imagesManifest()["bad"][file.toStdString()].get<std::string>(), std::string("refused"));
        auto got = decode(fileBytes(file.toStdString()), {}, "data/" + file.toStdString());
        QVERIFY(!got.ok());
        const QString message = QString::fromStdString(got.error().message());
        QVERIFY2(message.contains("data/" + file), qPrintable(message));
        QVERIFY2(message.contains(reason, Qt::CaseInsensitive), qPrintable(message));
    }

    void anyPrefixOrFlippedByteNeverCrashes()
    {
        // Every prefix of a JPEG and a PNG, and files with random bytes flipped: each decodes or
        // is refused; none crashes (the sanitizer build checks the memory).
        std::mt19937 rng(7);
        for (const std::string name : {"rgb420.jpg", "progressive.jpg", "palette.png", "rgb16.png"}) {
            const std::string whole = fileBytes(name);
            for (std::size_t n = 0; n < whole.size(); n += 1 + n / 8)
                (void)decode(whole.substr(0, n), {});
            for (int trial = 0; trial < 40; ++trial) {
                std::string bad = whole;
                for (int k = 0; k < 3; ++k)
                    bad[rng() % bad.size()] ^= char(1 + rng() % 255);
                (void)decode(bad, {3, false, false});
            }
        }
    }

    // A header that claims a huge picture (here a JPEG whose frame header says 60000 × 60000) is
    // refused before anything is allocated, rather than asking for 10 GB.
    void hugeHeadersAreRefusedBeforeAllocating()
    {
        std::vector<std::uint8_t> pixels(8 * 8 * 3, 128);
        std::string jpeg = encodeJpeg(pixels.data(), 8, 8, 3, 90, "test").value();
        const auto sof = jpeg.find("\xFF\xC0");
        QVERIFY(sof != std::string::npos);
        for (std::size_t k : {sof + 5, sof + 7}) { // height, then width, big-endian
            jpeg[k] = char(0xEA);
            jpeg[k + 1] = char(0x60);
        }
        bool allocated = false;
        auto info = decodeImage(std::as_bytes(std::span(jpeg.data(), jpeg.size())), {}, [&](const ImageInfo &) {
            allocated = true;
            return static_cast<std::byte *>(nullptr);
        }, "huge.jpg");
        QVERIFY(!allocated);
        QVERIFY(!info.ok());
        QVERIFY2(QString::fromStdString(info.error().message()).contains("larger than the 1 GiB"), info.error().message().c_str());
    }

    void jpegHasNoTwoChannelForm()
    {
        auto got = decode(fileBytes("rgb420.jpg"), {2, false, false});
        QVERIFY(!got.ok());
        QVERIFY(QString::fromStdString(got.error().message()).contains("alpha"));
    }

    void pngRoundTripsExactly_data()
    {
        QTest::addColumn<int>("channels");
        for (int c = 1; c <= 4; ++c)
            QTest::newRow(std::to_string(c).c_str()) << c;
    }
    void pngRoundTripsExactly()
    {
        QFETCH(int, channels);
        std::vector<std::uint8_t> pixels(std::size_t(5 * 7 * channels));
        for (std::size_t i = 0; i < pixels.size(); ++i)
            pixels[i] = std::uint8_t(i * 37 + 11);
        auto png = encodePng(pixels.data(), 5, 7, channels, "test");
        QVERIFY(png.ok());
        auto back = decode(*png, {});
        QVERIFY(back.ok());
        QCOMPARE(back->info.channels, channels);
        QVERIFY(std::memcmp(back->pixels.data(), pixels.data(), pixels.size()) == 0);
    }

    void jpegRoundTripsClosely()
    {
        // Lossy, but a smooth picture at quality 95 comes back within a few levels.
        std::vector<std::uint8_t> pixels(std::size_t(16 * 24 * 3));
        for (int y = 0; y < 16; ++y)
            for (int x = 0; x < 24; ++x)
                for (int c = 0; c < 3; ++c)
                    pixels[std::size_t((y * 24 + x) * 3 + c)] = std::uint8_t(20 + 4 * x + 3 * y + 15 * c); // at most 187: no wrap
        auto jpeg = encodeJpeg(pixels.data(), 16, 24, 3, 95, "test");
        QVERIFY(jpeg.ok());
        auto back = decode(*jpeg, {});
        QVERIFY(back.ok());
        QCOMPARE(back->info.height, 16);
        QCOMPARE(back->info.width, 24);
        int worst = 0;
        for (std::size_t i = 0; i < pixels.size(); ++i)
            worst = std::max(worst, std::abs(int(pixels[i]) - int(std::uint8_t(back->pixels[i]))));
        QVERIFY2(worst <= 8, qPrintable(QString::number(worst)));
    }
};

QTEST_APPLESS_MAIN(TestImageCodec)
#include "tst_image_codec.moc"
