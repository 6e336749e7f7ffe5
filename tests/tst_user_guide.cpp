// Help ▸ User Guide (F1) opens the guides shipped with Sluice inside the workbench: every
// docs/*.md is listed by its title, getting started first; a guide is shown rendered from its
// Markdown, with its pictures; clicking another guide or following a link between guides shows it.
#include "gui/main_window.h"
#include "gui/user_guide.h"

#include <QDir>
#include <QListWidget>
#include <QStandardPaths>
#include <QTextBlock>
#include <QTextBrowser>
#include <QtTest>

using namespace sluice;

class TestUserGuide : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("sluice-tests-guide");
        QCoreApplication::setApplicationName("sluice");
    }

    void f1OpensTheGettingStartedGuide()
    {
        QCOMPARE(QDir(gui::UserGuide::docsFolder()).canonicalPath(), QDir(QString::fromUtf8(SLUICE_SOURCE_DIR) + "/docs").canonicalPath());
        gui::MainWindow window;
        window.show();
        window.activateWindow(); // shortcuts go to the active window
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QCOMPARE(window.userGuide(), nullptr);
        QTest::keyClick(&window, Qt::Key_F1);
        gui::UserGuide *guide = window.userGuide();
        QVERIFY(guide && guide->isVisible());
        QCOMPARE(guide->shownGuide(), QString("getting-started.md"));
        const QString text = guide->browser()->toPlainText();
        QVERIFY2(text.startsWith("Getting started"), qPrintable(text.left(80))); // rendered: no "# " left
        QVERIFY(!text.contains("](")); // links rendered, not shown as Markdown

        // Every guide is listed, getting started first.
        const int files = QDir(gui::UserGuide::docsFolder()).entryList({"*.md"}).size();
        QCOMPARE(guide->guides()->count(), files);
        QCOMPARE(guide->guides()->item(0)->text(), QString("Getting started"));

        // Its pictures load from the guides' folder.
        const QVariant picture = guide->browser()->loadResource(QTextDocument::ImageResource, QUrl("images/welcome.png"));
        QVERIFY(!picture.isNull());
    }

    void clickingAGuideOrALinkShowsIt()
    {
        gui::UserGuide guide;
        guide.show();
        QVERIFY(QTest::qWaitForWindowExposed(&guide));
        QListWidget *list = guide.guides();
        QListWidgetItem *training = nullptr;
        for (int i = 0; i < list->count(); ++i)
            if (list->item(i)->data(Qt::UserRole).toString() == "training.md")
                training = list->item(i);
        QVERIFY(training);
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(training).center());
        QCOMPARE(guide.shownGuide(), QString("training.md"));
        QVERIFY(guide.browser()->toPlainText().startsWith("Training"));

        // A link between guides, clicked with the mouse.
        QVERIFY(guide.showGuide("getting-started.md"));
        QTextBrowser *browser = guide.browser();
        QTextCursor link;
        for (QTextBlock block = browser->document()->begin(); block.isValid() && link.isNull(); block = block.next())
            for (auto it = block.begin(); !it.atEnd(); ++it)
                if (it.fragment().charFormat().anchorHref() == "pipeline-ops.md") {
                    link = QTextCursor(browser->document());
                    link.setPosition(it.fragment().position() + 1);
                    break;
                }
        QVERIFY2(!link.isNull(), "getting started links to the pipeline ops");
        browser->setTextCursor(link);
        browser->ensureCursorVisible();
        QTest::mouseClick(browser->viewport(), Qt::LeftButton, {}, browser->cursorRect(link).center());
        QCOMPARE(guide.shownGuide(), QString("pipeline-ops.md"));
        QVERIFY(browser->toPlainText().startsWith("Pipeline ops"));
        QCOMPARE(list->currentItem()->data(Qt::UserRole).toString(), QString("pipeline-ops.md")); // the list follows
        QVERIFY(!guide.showGuide("no-such-guide.md"));
    }
};

QTEST_MAIN(TestUserGuide)
#include "tst_user_guide.moc"
