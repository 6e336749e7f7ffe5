// metrics.csv is written and read as CSV: fields are quoted exactly when they must be (a
// comma, a quote, a line end, surrounding spaces), and what is written reads back the same
// through the reader the sources use, whatever the output and metric names; a short row and an
// open quote are errors naming the file and line.
#include "io/formats/csv_text.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace sluice;

class TestCsvText : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void fieldsAreQuotedOnlyWhenNeeded()
    {
        QCOMPARE(csvField("loss"), std::string("loss"));
        QCOMPARE(csvField("0.25"), std::string("0.25"));
        QCOMPARE(csvField(""), std::string(""));
        QCOMPARE(csvField("y,1_loss"), std::string("\"y,1_loss\""));
        QCOMPARE(csvField("say \"hi\""), std::string("\"say \"\"hi\"\"\""));
        QCOMPARE(csvField("two\nlines"), std::string("\"two\nlines\""));
        QCOMPARE(csvField(" padded"), std::string("\" padded\""));
        QCOMPARE(csvLine({"a", "b,c", ""}), std::string("a,\"b,c\",\n"));
    }

    void whatIsWrittenReadsBackTheSame()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("metrics.csv").toStdString();
        const std::vector<std::string> columns{"epoch", "loss", "y,1_loss", "val_\"q\"_mae", "note\nline", "spaced name"};
        const std::vector<std::vector<std::string>> rows{{"1", "0.5", "0.25", "", "x", "1e-05"}, {"2", "0.4", "0.2", "0.1", "", "nan"}};
        std::string text = csvLine(columns);
        for (const auto &r : rows)
            text += csvLine(r);
        test::writeFile(path, text);
        auto table = readCsvTable(path);
        QVERIFY2(table.ok(), table.ok() ? "" : table.error().message().c_str());
        QCOMPARE(table->columns, columns);
        QCOMPARE(table->rows, rows);
        QCOMPARE(table->lines, (std::vector<std::uint64_t>{3, 4})); // the header spans two lines
    }

    void badFilesNameTheLine()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("metrics.csv").toStdString();
        test::writeFile(path, "epoch,loss\n1,0.5\n2\n");
        auto short_ = readCsvTable(path);
        QVERIFY(!short_.ok());
        QVERIFY2(short_.error().message().find("metrics.csv") != std::string::npos && short_.error().message().find("3") != std::string::npos,
                 short_.error().message().c_str());
        test::writeFile(path, "epoch,loss\n1,\"0.5\n");
        QVERIFY(!readCsvTable(path).ok());
        test::writeFile(path, "");
        auto empty = readCsvTable(path);
        QVERIFY(empty.ok() && empty->columns.empty() && empty->rows.empty());
    }
};

QTEST_MAIN(TestCsvText)
#include "tst_csv_text.moc"
