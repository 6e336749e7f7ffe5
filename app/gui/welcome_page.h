#pragma once
// What the workbench shows with no project open: start a new project, open one, open one of the
// example projects (the first thing a new user does), or a recent project.
//
// Threading: GUI thread.

#include <QWidget>

class QListWidget;

namespace sluice::gui {

class WelcomePage : public QWidget
{
    Q_OBJECT
public:
    explicit WelcomePage(QWidget *parent = nullptr);
    // Re-reads the example folder and the recent list.
    void refresh();
    // Where the example projects are: $SLUICE_EXAMPLES_DIR, the installed share/sluice/projects
    // next to the executable, or the source tree's projects/ for a build that was not installed.
    static QString examplesFolder();
    QListWidget *examples() const { return m_examples; }
    QListWidget *recent() const { return m_recent; }

Q_SIGNALS:
    void newProjectRequested();
    void openRequested();
    void openPathRequested(const QString &path);
    void openExampleRequested(const QString &path);

private:
    QListWidget *m_examples;
    QListWidget *m_recent;
};

} // namespace sluice::gui
