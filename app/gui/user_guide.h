#pragma once
// Help ▸ User Guide (F1): the guides shipped with Sluice (docs/*.md: getting started, pipeline
// ops, training, profiling, Python, coming from tf.data, the project file reference), read inside
// the workbench. Links between guides and to their pictures work as on the web; links to the
// web open in the browser.
//
// The guides are found where the packages install them (bin/../share/sluice/docs), in
// $SLUICE_DOCS_DIR, or in the source tree's docs/ for a build that was not installed.
//
// Threading: GUI thread.

#include <QDialog>

class QListWidget;
class QTextBrowser;

namespace sluice::gui {

class UserGuide : public QDialog
{
    Q_OBJECT
public:
    explicit UserGuide(QWidget *parent = nullptr);

    static QString docsFolder(); // empty when no guide can be found

    // Shows a guide by file name ("training.md"); false when there is no such guide.
    bool showGuide(const QString &fileName);
    QString shownGuide() const; // its file name
    QListWidget *guides() const { return m_guides; }
    QTextBrowser *browser() const { return m_browser; }

private:
    QListWidget *m_guides = nullptr;
    QTextBrowser *m_browser = nullptr;
};

} // namespace sluice::gui
