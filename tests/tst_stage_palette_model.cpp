// The stage palette's model and its search filter: every registered op once, in its group, with a
// tooltip naming each parameter; drag data carrying the op name; both models under
// QAbstractItemModelTester.
#include "pipeline/engine/op_registry.h"
#include "stage_palette_filter.h"
#include "stage_palette_model.h"

#include <QAbstractItemModelTester>
#include <QMimeData>
#include <QTextDocument>
#include <QtTest>

#include <memory>
#include <set>

using namespace sluice;
using widgets::StagePaletteFilter;
using widgets::StagePaletteModel;

namespace {

// Every op name under the given root of a (source or proxy) model, group by group.
QStringList opNames(const QAbstractItemModel &model)
{
    QStringList names;
    for (int g = 0; g < model.rowCount(); ++g) {
        const QModelIndex group = model.index(g, 0);
        for (int r = 0; r < model.rowCount(group); ++r)
            names << model.index(r, 0, group).data(StagePaletteModel::OpNameRole).toString();
    }
    return names;
}

QStringList groupTitles(const QAbstractItemModel &model)
{
    QStringList titles;
    for (int g = 0; g < model.rowCount(); ++g)
        titles << model.index(g, 0).data().toString();
    return titles;
}

QModelIndex findOp(const QAbstractItemModel &model, const QString &name)
{
    const auto hits = model.match(model.index(0, 0), StagePaletteModel::OpNameRole, name, 1,
                                  Qt::MatchExactly | Qt::MatchRecursive);
    return hits.isEmpty() ? QModelIndex() : hits.first();
}

} // namespace

class TestStagePaletteModel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void passesModelTester()
    {
        StagePaletteModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(model.rowCount() > 0);
    }

    void filterPassesModelTesterWhileTyping()
    {
        StagePaletteModel model;
        StagePaletteFilter filter;
        QAbstractItemModelTester tester(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
        filter.setSourceModel(&model);
        for (const char *text : {"s", "sh", "shu", "shuf", "xyz-nothing", "", "PERF", "from_", ""})
            filter.setSearchText(QString::fromLatin1(text));
        QCOMPARE(opNames(filter), opNames(model));
    }

    void everyRegisteredOpAppearsOnceInItsGroup()
    {
        StagePaletteModel model;
        const auto &ops = pipeline::allOps();
        QStringList expected;
        for (const auto &op : ops)
            expected << QString::fromStdString(op.name);
        QStringList names = opNames(model);
        QCOMPARE(names.size(), expected.size());
        QCOMPARE(std::set<QString>(names.begin(), names.end()).size(), std::size_t(names.size())); // once each
        names.sort();
        expected.sort();
        QCOMPARE(names, expected);

        for (const auto &op : ops) {
            const QModelIndex index = findOp(model, QString::fromStdString(op.name));
            QVERIFY2(index.isValid(), op.name.c_str());
            QCOMPARE(index.data().toString(), QString::fromStdString(op.name));
            QCOMPARE(index.parent().data(StagePaletteModel::GroupRole).toString(), QString::fromStdString(op.group));
            QCOMPARE(index.data(StagePaletteModel::IsGroupRole).toBool(), false);
            QCOMPARE(model.rowCount(index), 0);
        }
    }

    void groupsAsSluiceOpsListsThem()
    {
        StagePaletteModel model;
        QCOMPARE(groupTitles(model), (QStringList{"Sources", "Transformations", "Performance"}));
        for (int g = 0; g < model.rowCount(); ++g) {
            QVERIFY(model.index(g, 0).data(StagePaletteModel::IsGroupRole).toBool());
            QVERIFY(model.rowCount(model.index(g, 0)) > 0);
        }
        QCOMPARE(findOp(model, "from_npy").parent().data().toString(), QString("Sources"));
        QCOMPARE(findOp(model, "shuffle").parent().data().toString(), QString("Transformations"));
        QCOMPARE(findOp(model, "prefetch").parent().data().toString(), QString("Performance"));
    }

    void groupsFollowTheRegistryNotAList()
    {
        // A registry with a new group: the palette shows it, in the order it first appears.
        std::vector<pipeline::OpInfo> ops(3);
        ops[0].name = "a";
        ops[0].group = "sources";
        ops[1].name = "b";
        ops[1].group = "experimental";
        ops[2].name = "c";
        ops[2].group = "sources";
        StagePaletteModel model(ops);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(groupTitles(model), (QStringList{"Sources", "Experimental"}));
        QCOMPARE(opNames(model), (QStringList{"a", "c", "b"}));
    }

    void tooltipsCarryDocsAndEveryParameter()
    {
        StagePaletteModel model;
        for (const auto &op : pipeline::allOps()) {
            const QModelIndex index = findOp(model, QString::fromStdString(op.name));
            const QString tip = index.data(Qt::ToolTipRole).toString();
            QVERIFY2(Qt::mightBeRichText(tip), op.name.c_str());
            QVERIFY2(tip.contains(QString::fromStdString(op.summary).toHtmlEscaped()), op.name.c_str());
            for (const auto &p : op.params) {
                const QString what = QString::fromStdString(op.name + "." + p.name);
                QVERIFY2(tip.contains("<code>" + QString::fromStdString(p.name) + "</code>"), qPrintable(what));
                QVERIFY2(tip.contains(QString::fromStdString(p.type).toHtmlEscaped()), qPrintable(what));
                QVERIFY2(tip.contains(QString::fromStdString(p.doc).toHtmlEscaped()), qPrintable(what));
                if (!p.defaultValue.empty())
                    QVERIFY2(tip.contains(QString::fromStdString(p.defaultValue).toHtmlEscaped()), qPrintable(what));
            }
        }
        // A required parameter says so (shuffle's buffer_size has no default).
        QVERIFY(findOp(model, "shuffle").data(Qt::ToolTipRole).toString().contains("required"));
        QVERIFY(!model.index(0, 0).data(Qt::ToolTipRole).toString().isEmpty()); // groups too
    }

    void tooltipEscapesHtml()
    {
        pipeline::OpInfo op;
        op.name = "x";
        op.summary = "a < b & c";
        op.params = {{"n", "enum:a|b", "<1>", "more <b>bold</b>"}};
        const QString tip = StagePaletteModel::toolTip(op);
        QVERIFY(tip.contains("a &lt; b &amp; c"));
        QVERIFY(tip.contains("&lt;1&gt;"));
        QVERIFY(!tip.contains("<b>bold</b>"));
    }

    void filterLeavesTheShuffleOpsUnderTheirGroup()
    {
        StagePaletteModel model;
        StagePaletteFilter filter;
        filter.setSourceModel(&model);
        filter.setSearchText("shuf");
        QCOMPARE(groupTitles(filter), QStringList{"Transformations"});
        QCOMPARE(opNames(filter), (QStringList{"shuffle", "global_shuffle"}));
        filter.setSearchText("  SHUF ");
        QCOMPARE(opNames(filter), (QStringList{"shuffle", "global_shuffle"}));

        filter.setSearchText("no such stage");
        QCOMPARE(filter.rowCount(), 0);
        filter.setSearchText("feistel"); // only in global_shuffle's documentation
        QCOMPARE(opNames(filter), QStringList{"global_shuffle"});
        filter.setSearchText("perf"); // a group's title keeps the whole group
        QCOMPARE(groupTitles(filter), QStringList{"Performance"});
        QCOMPARE(filter.rowCount(filter.index(0, 0)), model.rowCount(findOp(model, "prefetch").parent()));
        filter.setSearchText("a.b"); // literal text, not a pattern
        QCOMPARE(filter.rowCount(), 0);
        filter.setSearchText("");
        QCOMPARE(opNames(filter), opNames(model));
    }

    // While searching, exact and prefix matches come first, and Enter takes the best one:
    // "batch" is batch, not unbatch (listed before it in the registry).
    void bestMatchesComeFirst()
    {
        StagePaletteModel model;
        StagePaletteFilter filter;
        filter.setSourceModel(&model);
        filter.setSearchText("batch");
        QVERIFY(opNames(filter).contains("unbatch"));
        QCOMPARE(opNames(filter).first(), QString("batch"));
        QCOMPARE(filter.bestMatch().data(StagePaletteModel::OpNameRole).toString(), QString("batch"));
        filter.setSearchText("shuf"); // a prefix before a name that only contains it
        QCOMPARE(opNames(filter), (QStringList{"shuffle", "global_shuffle"}));
        filter.setSearchText("SHUFFLE");
        QCOMPARE(filter.bestMatch().data(StagePaletteModel::OpNameRole).toString(), QString("shuffle"));
        filter.setSearchText("_shuffle");
        QCOMPARE(filter.bestMatch().data(StagePaletteModel::OpNameRole).toString(), QString("global_shuffle"));
        filter.setSearchText("feistel"); // documentation only: still the best there is
        QCOMPARE(filter.bestMatch().data(StagePaletteModel::OpNameRole).toString(), QString("global_shuffle"));
        filter.setSearchText("no such stage");
        QVERIFY(!filter.bestMatch().isValid());
        filter.setSearchText(""); // no text: registry order again
        QCOMPARE(opNames(filter), opNames(model));
    }

    void dragCarriesTheOpName()
    {
        StagePaletteModel model;
        QCOMPARE(model.mimeTypes(), QStringList{"application/x-sluice-stage"});
        const QModelIndex shuffle = findOp(model, "shuffle");
        QVERIFY(model.flags(shuffle) & Qt::ItemIsDragEnabled);
        std::unique_ptr<QMimeData> data(model.mimeData({shuffle}));
        QVERIFY(data);
        QVERIFY(data->hasFormat("application/x-sluice-stage"));
        QCOMPARE(QString::fromUtf8(data->data("application/x-sluice-stage")), QString("shuffle"));
        QCOMPARE(StagePaletteModel::stageNames(data.get()), QStringList{"shuffle"});

        // Through the filter too: the proxy maps the indexes back to the source model.
        StagePaletteFilter filter;
        filter.setSourceModel(&model);
        filter.setSearchText("batch");
        const QModelIndex batch = findOp(filter, "batch");
        QVERIFY(batch.isValid());
        std::unique_ptr<QMimeData> proxied(filter.mimeData({batch}));
        QVERIFY(proxied);
        QCOMPARE(StagePaletteModel::stageNames(proxied.get()), QStringList{"batch"});

        QMimeData foreign;
        foreign.setText("shuffle");
        QVERIFY(StagePaletteModel::stageNames(&foreign).isEmpty());
        QVERIFY(StagePaletteModel::stageNames(nullptr).isEmpty());
    }

    void groupsAreNotDraggable()
    {
        StagePaletteModel model;
        for (int g = 0; g < model.rowCount(); ++g) {
            const QModelIndex group = model.index(g, 0);
            QVERIFY(!(model.flags(group) & Qt::ItemIsDragEnabled));
            QVERIFY(model.flags(group) & Qt::ItemIsEnabled);
            QVERIFY(model.mimeData({group}) == nullptr);
            QVERIFY(model.data(group, StagePaletteModel::OpNameRole).toString().isEmpty());
        }
        // A group dragged together with a stage carries the stage only.
        std::unique_ptr<QMimeData> data(model.mimeData({model.index(0, 0), findOp(model, "range")}));
        QVERIFY(data);
        QCOMPARE(StagePaletteModel::stageNames(data.get()), QStringList{"range"});
    }
};

QTEST_MAIN(TestStagePaletteModel)
#include "tst_stage_palette_model.moc"
