#pragma once
// The run console: the log and errors of runs, in words. Log lines come from the workbench
// (appendLog) and from runs' events (appendRunEvents: the model summary, one line per epoch as
// Keras prints it, checkpoints, the end with its status; a failure in red). Lines carry the
// time they arrived; the console keeps the last maxLines() of them, can show only the errors,
// copies what is selected (or every shown line) and clears.
//
// Threading contract: a widget; every function is called from the GUI thread (the bridge's
// signals are queued there). Events of a run older than the newest one seen are ignored (stale
// results, docs/architecture.md).

#include "console/run_event_text.h"
#include "events/run_events.h"

#include <QDateTime>
#include <QList>
#include <QStringList>
#include <QWidget>

#include <deque>

class QCheckBox;
class QPlainTextEdit;

namespace sluice::widgets {

class RunConsole : public QWidget
{
    Q_OBJECT
public:
    static constexpr int defaultMaxLines = 5000;

    explicit RunConsole(QWidget *parent = nullptr);

    void appendLog(LogLevel level, const QString &text);
    // A run's events (as RunSession::runEvents delivers them); a higher runId than before starts
    // a new run (a separator line names it), a lower one is a superseded run and is ignored.
    void appendRunEvents(quint64 runId, const QList<events::Event> &events);

    void clear();
    // Copies the selection, or every line shown when nothing is selected, to the clipboard.
    void copy() const;

    bool errorsOnly() const { return m_errorsOnly; }
    void setErrorsOnly(bool errorsOnly);

    int maxLines() const { return m_maxLines; }
    void setMaxLines(int lines); // older lines are dropped first

    // The lines kept (all, or only those the filter shows), as shown, without the time stamp.
    QStringList lines(bool shownOnly = false) const;
    int errorCount() const { return m_errorCount; }

Q_SIGNALS:
    // An error line was added (the main window may raise the console's dock).
    void errorAppended(const QString &text);

protected:
    void changeEvent(QEvent *event) override;

private:
    struct Entry
    {
        QTime time;
        LogLevel level;
        QString text;
    };
    void add(LogLevel level, const QString &text);
    bool shown(const Entry &entry) const { return !m_errorsOnly || entry.level == LogLevel::Error; }
    void show(const Entry &entry);
    void rerender();
    void trim();

    std::deque<Entry> m_entries;
    int m_maxLines = defaultMaxLines;
    int m_errorCount = 0;
    bool m_errorsOnly = false;
    quint64 m_runId = 0;
    int m_runEpochs = 0; // of the current run, from its run_start

    QPlainTextEdit *m_view = nullptr;
    QCheckBox *m_errorsOnlyBox = nullptr;
};

} // namespace sluice::widgets
