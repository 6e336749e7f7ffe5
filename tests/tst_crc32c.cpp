// CRC-32C against published check values, hardware against table, and TFRecord's mask.
#include "io/crc32c.h"

#include <QtTest>

#include <string>

using namespace sluice;

namespace {
std::span<const std::byte> bytesOf(const std::string &s) { return std::as_bytes(std::span(s.data(), s.size())); }
} // namespace

class TestCrc32c : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void checkValues()
    {
        // RFC 3720 (iSCSI) appendix B.4 and the common "123456789" check value.
        QCOMPARE(crc32c(bytesOf("123456789")), 0xe3069283u);
        QCOMPARE(crc32c(bytesOf(std::string(32, '\0'))), 0x8a9136aau);
        QCOMPARE(crc32c(bytesOf(std::string(32, '\xff'))), 0x62a8ab43u);
        std::string ascending;
        for (int i = 0; i < 32; ++i)
            ascending.push_back(char(i));
        QCOMPARE(crc32c(bytesOf(ascending)), 0x46dd794eu);
        QCOMPARE(crc32c({}), 0u);
    }

    void hardwareAndTableAgree()
    {
        std::string data;
        for (int i = 0; i < 4099; ++i)
            data.push_back(char((i * 7919) & 0xff));
        for (std::size_t n : {0, 1, 7, 8, 9, 63, 64, 1000, 4099}) {
            const auto part = bytesOf(data).first(n);
            QCOMPARE(crc32c(part), crc32cPortable(part));
        }
        // Continuing a CRC over two pieces equals the CRC of the whole.
        const auto all = bytesOf(data);
        QCOMPARE(crc32c(all.subspan(100), crc32c(all.first(100))), crc32c(all));
    }

    void tfrecordMask()
    {
        // TensorFlow's masked CRC of an 8-byte zero length: the framing of an empty record.
        const std::string zeros(8, '\0');
        QCOMPARE(maskCrc32c(crc32c(bytesOf(zeros))), ((crc32c(bytesOf(zeros)) >> 15 | crc32c(bytesOf(zeros)) << 17) + 0xa282ead8u));
        QVERIFY(maskCrc32c(1) != 1);
    }
};

QTEST_GUILESS_MAIN(TestCrc32c)
#include "tst_crc32c.moc"
