// What `sluice --help`, each command's --help and `sluice --version` promise users (and what
// the man page is made of): every option of every command shown in an example, the command
// named in its usage line, the version with its commit and the features built in.
#include "support/test_support.h"

#include <QRegularExpression>
#include <QTest>

using namespace sluice::test;

namespace {

// The commands the top-level help lists: "inspect", "run", "bench read", ...
QStringList listedCommands()
{
    const auto r = runSluice({"--help"});
    QStringList commands;
    const QRegularExpression usage("^  sluice ([a-z]+(?: [a-z]+)?)(?= |$)", QRegularExpression::MultilineOption);
    for (auto it = usage.globalMatch(r.out); it.hasNext();) {
        const QString command = it.next().captured(1);
        if (!commands.contains(command))
            commands << command;
    }
    return commands;
}

} // namespace

class TestCliHelp : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void topLevelHelpListsEveryCommand()
    {
        const auto r = runSluice({"--help"});
        QCOMPARE(r.exitCode, 0);
        for (const char *command : {"inspect", "gen", "run", "preview", "ops", "bench read", "bench pipeline", "bench train", "bench storage"})
            QVERIFY2(listedCommands().contains(command), command);
        QVERIFY(r.out.contains("Examples:"));
    }

    void commandHelpShowsEveryOptionInAnExample_data()
    {
        QTest::addColumn<QString>("command");
        for (const QString &command : listedCommands())
            QTest::newRow(qPrintable(command)) << command;
        // The kinds of `gen` that have options of their own have a help of their own.
        for (const char *command : {"gen images", "gen interactions"})
            QTest::newRow(command) << QString(command);
    }

    void commandHelpShowsEveryOptionInAnExample()
    {
        QFETCH(QString, command);
        const auto r = runSluice(command.split(' ') << "--help");
        QCOMPARE(r.exitCode, 0);
        const QString firstWord = command.section(' ', 0, 0);
        QVERIFY2(r.out.startsWith("Usage: sluice " + firstWord + " [options]"), qPrintable(r.out.section('\n', 0, 0)));

        QStringList examples; // "  sluice bench read FILE --order ..." or "  mpirun -np 2 sluice run ..."
        for (const QString &line : r.out.split('\n'))
            if (line.startsWith("  ") && line.contains("sluice " + command))
                examples << line;
        QVERIFY2(!examples.isEmpty(), qPrintable(command + " has no example:\n" + r.out));

        const QString options = r.out.section("\nOptions:\n", 1).section("\nArguments:\n", 0, 0);
        const QRegularExpression option("^\\s+(?:-\\w, )?(--[a-z-]+)", QRegularExpression::MultilineOption);
        int count = 0;
        for (auto it = option.globalMatch(options); it.hasNext();) {
            const QString name = it.next().captured(1);
            if (name == "--help")
                continue;
            ++count;
            const QRegularExpression used(QRegularExpression::escape(name) + "(?![a-z-])");
            bool shown = false;
            for (const QString &example : examples)
                shown = shown || used.match(example).hasMatch();
            QVERIFY2(shown, qPrintable(QStringLiteral("sluice %1: %2 is in no example").arg(command, name)));
        }
        QVERIFY(count > 0 || command == "ops");
    }

    void versionNamesCommitAndFeatures()
    {
        const auto r = runSluice({"--version"});
        QCOMPARE(r.exitCode, 0);
        const QRegularExpression first("^sluice \\d+\\.\\d+\\.\\d+ \\(commit ([0-9a-f]{7,40}(-modified)?|unknown)\\)\n");
        QVERIFY2(first.match(r.out).hasMatch(), qPrintable(r.out));
        QVERIFY2(QRegularExpression("\nCUDA: (not built|built in \\(runtime \\d+\\.\\d+)").match(r.out).hasMatch(), qPrintable(r.out));
        QVERIFY2(QRegularExpression("\nNCCL: (not built|built in)").match(r.out).hasMatch(), qPrintable(r.out));
        QVERIFY2(QRegularExpression("\nMPI: (not built|built in)").match(r.out).hasMatch(), qPrintable(r.out));
        QVERIFY2(QRegularExpression("\nBLAS: \\S+").match(r.out).hasMatch(), qPrintable(r.out));
        QVERIFY2(QRegularExpression("\n(GPU 0: |GPUs: none \\()").match(r.out).hasMatch(), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestCliHelp)
#include "tst_cli_help.moc"
