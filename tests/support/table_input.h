#pragma once
// Typing into a QTableWidget's cell as a user does: select it, F2 to edit, type, Enter. Header
// only: just the widget tests include it (the support library stays free of Qt Widgets).
#include <QCoreApplication>
#include <QLineEdit>
#include <QTableWidget>
#include <QtTest>

namespace sluice::test {

inline void typeIntoCell(QTableWidget *table, int row, int column, const QString &text)
{
    table->setFocus();
    table->setCurrentCell(row, column);
    QTest::keyClick(table, Qt::Key_F2);
    QLineEdit *editor = nullptr;
    for (QLineEdit *e : table->findChildren<QLineEdit *>())
        if (e->isVisible())
            editor = e;
    QVERIFY(editor);
    editor->selectAll();
    QTest::keyClicks(editor, text);
    QTest::keyClick(editor, Qt::Key_Return);
    QCoreApplication::processEvents(); // the delegate commits the edit from a queued call
}

} // namespace sluice::test
