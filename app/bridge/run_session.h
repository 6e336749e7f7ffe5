#pragma once
// The bridge of docs/architecture.md, decision 3: runs a project in core on a worker thread and hands its
// events to the UI as coalesced Qt signals. A project with a model is trained (train::Trainer,
// the same events `sluice run --json` prints); a pipeline-only project is iterated as
// `sluice run --profile` does, reporting its stage statistics.
//
// Threading contract:
//  - A RunSession lives in one thread, its owner's (the GUI thread in the workbench), which needs
//    a running event loop. start(), stop(), isRunning(), runId() and the destructor are called
//    from that thread only; every signal is emitted in that thread.
//  - The core work runs on one std::thread per run. That thread only appends to the run's
//    mutex-protected buffer; it never touches this QObject.
//  - A ~40 ms QTimer in the owner's thread moves the buffer out under the lock and emits at most
//    one runEvents() and one pipelineStats() (the latest snapshot only) per tick: at most ~25
//    updates a second however fast core reports.
//  - Every signal carries the id of its run. Starting a new run while one is in progress
//    supersedes it: the old run is cancelled, and nothing of it (buffered events, its finished())
//    is emitted any more. Receivers connected with Qt::QueuedConnection should still compare the
//    id with runId() and drop results of a superseded run (docs/architecture.md, "stale results").
//  - Slots connected to finished() may call start() again; delete the session with deleteLater(),
//    not from inside one of its own signals.
//  - stop() only asks core to stop and returns at once; the destructor stops and joins the
//    worker (it waits for the current training step or pipeline element to end).

#include "events/run_events.h"
#include "project/project.h"

#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace sluice::bridge {

class RunSession : public QObject
{
    Q_OBJECT
public:
    enum class Status { Ok, Failed, Cancelled };
    Q_ENUM(Status)
    enum class Kind { Training, Pipeline };
    Q_ENUM(Kind)

    struct Options
    {
        double stepEventInterval = 0.1;  // training: seconds between "step" events (0: every step)
        double statsInterval = 0.5;      // seconds between pipeline statistics snapshots
        int passes = 1;                  // pipeline-only: passes over the pipeline
        double minSeconds = 0;           // pipeline-only: keep starting passes until this long has passed
        std::optional<int> epochs;       // training: overrides training.epochs
        std::string checkpointDir;       // training: empty for no checkpoints
        // Where the run's record is kept, as `sluice run --out` writes it (events.jsonl,
        // metrics.csv, weights.npz, project.sluice); empty: nothing is written.
        std::string runFolder;
    };

    explicit RunSession(QObject *parent = nullptr);
    ~RunSession() override; // stops a running run and joins its thread

    // Starts a run of `project` on a worker thread, which builds the pipeline and the model
    // first (never the caller's thread: opening a large pipeline may read data). Returns the
    // error message when the cheap checks fail (training settings, options, the run folder):
    // then nothing is started and no signal follows. A project that does not build ends its run
    // with a failed RunEnd carrying the error's fields and finished(Failed, message
    // naming the node / parameter / file), and leaves no run folder (the one start() created is
    // removed: a run refused before its first step is not kept). A run already in progress is superseded (cancelled;
    // nothing more of it is emitted).
    std::optional<QString> start(const Project &project, const Options &options);
    std::optional<QString> start(const Project &project) { return start(project, Options()); }
    // Asks the run to stop (between training steps / pipeline elements) and returns at once; the
    // run then ends with finished(Cancelled). Nothing happens when no run is in progress.
    void stop();
    // Holds the run between training steps (pipeline runs: between elements) until resume();
    // stop() also ends a paused run. Nothing happens when no run is in progress.
    void pause();
    void resume();
    bool isPaused() const;
    // True from a successful start() until its finished() has been emitted.
    bool isRunning() const { return m_run != nullptr; }
    // The id of the current (or last) run; ids grow from 1; 0 before the first start().
    quint64 runId() const { return m_lastRunId; }
    Kind kind() const { return m_kind; }
    // Why the last start() refused, with the fields that place it (a training setting's
    // Error::layer and key) where core gave them; empty after a start() that was not refused
    // for such a reason.
    const std::optional<Error> &refusal() const { return m_refusal; }
    // The thread the last finished run's pipeline or trainer was freed on (its worker, not the
    // owner's): for tests; a default id before the first run ends.
    std::thread::id lastTeardownThread() const { return m_lastTeardownThread; }

    static QString statusName(Status status); // "ok", "failed", "cancelled"

Q_SIGNALS:
    // Core's events since the last tick, in order (events/run_events.h): for training the
    // Trainer's (RunStart, Step, EpochEnd, Checkpoint, RunEnd; Stats go to pipelineStats); for a
    // pipeline-only run a RunStart, notices and a final RunEnd.
    void runEvents(quint64 runId, const QList<sluice::events::Event> &events);
    // The latest pipeline statistics snapshot, with the consumer its input-bound share is
    // measured against; older ones of the same tick are dropped.
    void pipelineStats(quint64 runId, const sluice::events::Stats &stats);
    // The run has ended and its thread has been joined; emitted once per run, after its last
    // runEvents() / pipelineStats().
    void finished(quint64 runId, sluice::bridge::RunSession::Status status, const QString &errorMessage);
    // pause() / resume() took effect on the current run (emitted at once, in the owner's thread).
    void pausedChanged(quint64 runId, bool paused);

private:
    struct Run;
    void drain();
    void retire(std::unique_ptr<Run> run);
    static std::optional<QString> openRecord(Run &run, const Project &project, const std::string &folder);

    QTimer m_timer;
    std::thread::id m_lastTeardownThread;
    std::unique_ptr<Run> m_run;                  // the current run; owner thread only
    std::vector<std::unique_ptr<Run>> m_retired; // superseded runs still winding down
    quint64 m_lastRunId = 0;
    Kind m_kind = Kind::Training;
    std::optional<Error> m_refusal;
};

} // namespace sluice::bridge
