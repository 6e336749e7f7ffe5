#include "bridge/run_session.h"

#include "cli/run_output.h"
#include "io/writers/atomic_file.h"
#include "events/run_events.h"
#include "pipeline/engine/pipeline.h"
#include "train/loop/trainer.h"
#include "train/loop/training_config.h"
#include "events/run_folder.h"

#include <QPointer>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

namespace sluice::bridge {

namespace {

constexpr int kTickMs = 40; // at most 25 updates a second


} // namespace

// One run: built in the owner's thread, executed on `thread`, read by the owner's timer.
struct RunSession::Run
{
    quint64 id = 0;
    // Built on the worker thread (opening a large pipeline, a normalize that reads its data, must
    // not hold the window), then used there; the owner only cancels them, under `objectsMutex`.
    std::function<std::optional<Error>(Run &)> build;
    std::mutex objectsMutex;
    std::unique_ptr<train::Trainer> trainer;     // training runs; GUARDED_BY(objectsMutex) while set
    std::unique_ptr<pipeline::Pipeline> pipe;    // pipeline-only runs; idem
    nlohmann::json consumer; // pipeline-only runs: the consumer the input-bound share is against (worker thread)
    std::atomic<bool> cancel{false};             // any thread
    std::unique_ptr<cli::RunOutput> record;      // the run folder's files; worker thread only once started
    std::string runFolder;                       // empty: no record
    bool createdRunFolder = false;               // openRecord() made it: a run that never starts removes it

    std::mutex pauseMutex;
    std::condition_variable pauseChanged;
    bool paused = false; // GUARDED_BY(pauseMutex)

    std::mutex mutex;
    QList<events::Event> events;       // GUARDED_BY(mutex): not yet delivered, in order
    std::optional<events::Stats> stats; // GUARDED_BY(mutex): the latest snapshot not yet delivered
    bool done = false;                 // GUARDED_BY(mutex): set last by the worker, after every append
    Status status = Status::Ok;        // GUARDED_BY(mutex): valid once done
    QString error;                     // GUARDED_BY(mutex): valid once done
    std::thread::id tornDownOn;        // GUARDED_BY(mutex): the thread end() freed the objects on

    std::thread thread; // started last, joined first

    ~Run()
    {
        requestStop();
        if (thread.joinable())
            thread.join();
    }

    void requestStop()
    {
        cancel = true;
        {
            std::lock_guard lock(objectsMutex);
            if (pipe)
                pipe->cancel();
        }
        // trainer: polls `cancel` through TrainerOptions::cancelFlag between steps.
        setPaused(false);
    }

    void setPaused(bool value)
    {
        {
            std::lock_guard lock(pauseMutex);
            paused = value;
        }
        pauseChanged.notify_all();
    }

    bool isPaused()
    {
        std::lock_guard lock(pauseMutex);
        return paused;
    }

    // Worker thread, between steps / elements: holds while paused, returns at once on stop.
    void waitWhilePaused()
    {
        std::unique_lock lock(pauseMutex);
        pauseChanged.wait(lock, [this] { return !paused || cancel.load(); });
    }

    // Worker thread.
    void append(const events::Event &event)
    {
        if (record)
            record->onEvent(event);
        if (const auto *s = events::as<events::Stats>(event)) {
            std::lock_guard lock(mutex);
            stats = *s;
            return;
        }
        std::lock_guard lock(mutex);
        events.append(event);
    }

    // A snapshot as the record and the window get it: with the consumer its input-bound share is
    // measured against, as `sluice run --profile` states it.
    events::Stats statsEvent(const pipeline::PipelineSnapshot &snapshot) const { return {snapshot, consumer}; }

    void setStats(const pipeline::PipelineSnapshot &snapshot)
    {
        events::Stats event = statsEvent(snapshot);
        std::lock_guard lock(mutex);
        stats = std::move(event);
    }

    void end(Status s, const QString &message)
    {
        // Torn down here, on the worker thread: a pipeline's tasks and mappings and a model's
        // buffers can take a while to free, and the window then only joins a thread that has
        // returned (~Run).
        std::unique_ptr<train::Trainer> endedTrainer;
        std::unique_ptr<pipeline::Pipeline> endedPipe;
        {
            std::lock_guard lock(objectsMutex);
            endedTrainer = std::move(trainer);
            endedPipe = std::move(pipe);
        }
        endedTrainer.reset();
        endedPipe.reset();
        std::lock_guard lock(mutex);
        tornDownOn = std::this_thread::get_id();
        status = s;
        error = message;
        done = true;
    }

    void train()
    {
        const train::RunOutcome outcome = trainer->run();
        if (!runFolder.empty() && outcome.status != train::RunStatus::Failed) {
            if (auto saved = trainer->model().saveWeights(runfolder::path(runFolder, runfolder::kWeights), trainer->weights()); !saved.ok()) {
                end(Status::Failed, QString::fromStdString(saved.error().message()));
                return;
            }
        }
        switch (outcome.status) {
        case train::RunStatus::Ok:
            end(Status::Ok, {});
            break;
        case train::RunStatus::Cancelled:
            end(Status::Cancelled, {});
            break;
        case train::RunStatus::Failed:
            end(Status::Failed, QString::fromStdString(outcome.error ? outcome.error->message() : std::string("training failed")));
            break;
        }
    }

    // Iterates the pipeline as `sluice run` does for a pipeline-only project.
    // Worker thread: the pipeline's statistics into the run's record (events.jsonl), as
    // `sluice run --profile --json` prints them.
    void recordStats()
    {
        if (!record)
            return;
        record->onEvent(statsEvent(pipe->snapshot()));
    }

    void iterate(int passes, double minSeconds, double statsInterval)
    {
        const auto start = std::chrono::steady_clock::now();
        // The loop below is the consumer: it takes elements as fast as the pipeline gives them, so
        // the input-bound share is reported as for `sluice run --profile` without --consumer-ms.
        consumer = "as fast as possible";
        pipe->setConsumerAttached(true);
        const int observer = pipe->sink().subscribe([this](const pipeline::PipelineSnapshot &s) { setStats(s); });
        events::RunStart begin;
        begin.kind = events::RunStart::Kind::Pipeline;
        begin.output = pipe->outputNode();
        begin.cardinality = pipe->cardinality();
        append(begin);
        for (const auto &note : pipe->notes())
            append(events::Notice{note});
        Status outcome = Status::Ok;
        std::optional<Error> failure;
        int pass = 1;
        std::uint64_t elements = 0;
        auto lastRecord = start;
        auto seconds = [](auto from) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count(); };
        for (;;) {
            waitWhilePaused();
            if (record && seconds(lastRecord) >= statsInterval) {
                recordStats();
                lastRecord = std::chrono::steady_clock::now();
            }
            if (cancel) {
                outcome = Status::Cancelled;
                break;
            }
            auto r = pipe->next();
            if (!r.ok()) {
                if (pipe->cancelled() && r.error().isCancelled()) {
                    outcome = Status::Cancelled;
                } else {
                    outcome = Status::Failed;
                    failure = r.error();
                }
                break;
            }
            if (!*r) {
                if ((pass >= passes && seconds(start) >= minSeconds) || elements == 0)
                    break;
                ++pass;
                pipe->restart();
                continue;
            }
            ++elements;
        }
        pipe->sink().unsubscribe(observer);
        const pipeline::PipelineSnapshot snapshot = pipe->snapshot();
        setStats(snapshot);
        recordStats();
        events::RunEnd endEvent;
        endEvent.status = outcome == Status::Ok ? events::RunEnd::Status::Ok
                          : outcome == Status::Cancelled ? events::RunEnd::Status::Cancelled
                                                         : events::RunEnd::Status::Failed;
        endEvent.passes = pass;
        endEvent.elements = elements;
        endEvent.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        endEvent.error = failure;
        append(endEvent);
        end(outcome, failure ? QString::fromStdString(failure->message()) : QString());
    }

    // Removes the run folder this run created, with the record in it (worker thread).
    void forgetRecord()
    {
        record.reset();
        if (!createdRunFolder || runFolder.empty())
            return;
        std::error_code ec;
        std::filesystem::remove_all(runFolder, ec); // best effort: a folder left behind is only clutter
        runFolder.clear();
    }

    void work(const Options &options)
    {
        try {
            if (auto failure = build(*this)) {
                const std::string message = failure->message();
                events::RunEnd runEnd;
                runEnd.status = events::RunEnd::Status::Failed;
                runEnd.error = *failure;
                append(runEnd);
                forgetRecord(); // refused before its first step: no run to keep or compare
                end(Status::Failed, QString::fromStdString(message));
                return;
            }
            if (cancel) {
                events::RunEnd runEnd;
                runEnd.status = events::RunEnd::Status::Cancelled;
                append(runEnd);
                end(Status::Cancelled, {});
                return;
            }
            if (trainer)
                train();
            else
                iterate(options.passes, options.minSeconds, options.statsInterval);
        } catch (const std::exception &e) {
            end(Status::Failed, QStringLiteral("run: %1").arg(QString::fromUtf8(e.what())));
        } catch (...) {
            end(Status::Failed, QStringLiteral("run: unknown error"));
        }
    }
};

RunSession::RunSession(QObject *parent) : QObject(parent)
{
    m_timer.setInterval(kTickMs);
    m_timer.setTimerType(Qt::CoarseTimer);
    connect(&m_timer, &QTimer::timeout, this, &RunSession::drain);
}

RunSession::~RunSession()
{
    m_timer.stop();
    // Ask every run to stop first, then join them (~Run): the waits overlap.
    if (m_run)
        m_run->requestStop();
    for (auto &r : m_retired)
        r->requestStop();
    m_run.reset();
    m_retired.clear();
}

// The Q_ENUM mirrors core's RunStatus (Qt registers only enums declared in the class).
static_assert(int(RunSession::Status::Ok) == int(RunStatus::Ok) && int(RunSession::Status::Failed) == int(RunStatus::Failed) &&
              int(RunSession::Status::Cancelled) == int(RunStatus::Cancelled));

QString RunSession::statusName(Status status)
{
    return QString::fromLatin1(runStatusName(RunStatus(int(status))));
}

std::optional<QString> RunSession::start(const Project &project, const Options &options)
{
    // What can be checked cheaply is checked here (a failure leaves a run in progress untouched);
    // building the pipeline and the model happens on the run's thread, and its errors end the run
    // with finished(Failed, message).
    auto run = std::make_unique<Run>();
    Kind kind = Kind::Training;
    m_refusal.reset();
    if (!project.model.is_null()) {
        auto config = train::parseTrainingConfig(project);
        if (!config) {
            m_refusal = config.error();
            return QString::fromStdString(config.error().message());
        }
        if (options.epochs) {
            if (*options.epochs < 1)
                return QStringLiteral("epochs: must be at least 1 (got %1)").arg(*options.epochs);
            config->epochs = *options.epochs;
        }
        train::TrainerOptions trainerOptions;
        trainerOptions.checkpointDir = options.checkpointDir;
        trainerOptions.cancelFlag = &run->cancel;
        trainerOptions.stepEventInterval = options.stepEventInterval;
        trainerOptions.statsEventInterval = options.statsInterval;
        Run *target = run.get();
        trainerOptions.onEvent = [target](const events::Event &e) { target->append(e); };
        trainerOptions.betweenSteps = [target] { target->waitWhilePaused(); };
        run->build = [project, config = *config, trainerOptions = std::move(trainerOptions)](Run &r) mutable -> std::optional<Error> {
            auto trainer = train::Trainer::create(project, config, std::move(trainerOptions));
            if (!trainer)
                return trainer.error();
            std::lock_guard lock(r.objectsMutex);
            r.trainer = std::move(*trainer);
            return std::nullopt;
        };
    } else {
        if (options.passes < 1)
            return QStringLiteral("passes: must be at least 1 (got %1)").arg(options.passes);
        if (options.minSeconds < 0)
            return QStringLiteral("minSeconds: must not be negative (got %1)").arg(options.minSeconds);
        kind = Kind::Pipeline;
        pipeline::PipelineOptions pipelineOptions;
        pipelineOptions.statsInterval = std::chrono::milliseconds(std::max<std::int64_t>(10, std::int64_t(options.statsInterval * 1000)));
        run->build = [project, pipelineOptions](Run &r) -> std::optional<Error> {
            auto pipe = pipeline::Pipeline::build(project, pipelineOptions);
            if (!pipe)
                return pipe.error();
            std::lock_guard lock(r.objectsMutex);
            r.pipe = std::move(*pipe);
            if (r.cancel)
                r.pipe->cancel();
            return std::nullopt;
        };
    }

    if (!options.runFolder.empty()) {
        if (auto problem = openRecord(*run, project, options.runFolder))
            return problem;
    }

    if (m_run)
        retire(std::move(m_run)); // superseded: nothing more of it is emitted
    run->id = ++m_lastRunId;
    m_kind = kind;
    Run *raw = run.get();
    run->thread = std::thread([raw, options] { raw->work(options); });
    m_run = std::move(run);
    if (!m_timer.isActive())
        m_timer.start();
    return std::nullopt;
}

void RunSession::stop()
{
    if (m_run)
        m_run->requestStop();
}

void RunSession::pause()
{
    if (!m_run || m_run->isPaused())
        return;
    m_run->setPaused(true);
    Q_EMIT pausedChanged(m_run->id, true);
}

void RunSession::resume()
{
    if (!m_run || !m_run->isPaused())
        return;
    m_run->setPaused(false);
    Q_EMIT pausedChanged(m_run->id, false);
}

bool RunSession::isPaused() const
{
    return m_run && m_run->isPaused();
}

std::optional<QString> RunSession::openRecord(Run &run, const Project &project, const std::string &folder)
{
    // Never overwrite an earlier run's record (as `sluice run --out` refuses to).
    if (std::filesystem::exists(runfolder::path(folder, runfolder::kEvents)))
        return QStringLiteral("%1: holds an earlier run; choose another folder").arg(QString::fromStdString(folder));
    std::error_code ec;
    run.createdRunFolder = !std::filesystem::exists(folder);
    std::filesystem::create_directories(folder, ec);
    if (ec)
        return QStringLiteral("%1: cannot create the run folder: %2").arg(QString::fromStdString(folder), QString::fromStdString(ec.message()));
    cli::RunOutput::Options options;
    options.quiet = true;
    options.outDir = folder;
    options.epochs = 1; // quiet: used only for printed epoch lines
    run.record = std::make_unique<cli::RunOutput>(options);
    if (auto problem = run.record->open())
        return QStringLiteral("%1: %2").arg(QString::fromStdString(folder), QString::fromStdString(*problem));
    if (auto file = AtomicFile::create(runfolder::path(folder, runfolder::kProject)); file.ok()) {
        if (file->write(project.toJson().dump(2) + "\n").ok())
            (void)file->commit();
    }
    run.runFolder = folder;
    return std::nullopt;
}

void RunSession::retire(std::unique_ptr<Run> run)
{
    run->requestStop();
    m_retired.push_back(std::move(run));
}

void RunSession::drain()
{
    // Superseded runs: join and free those that have ended; their results are dropped.
    for (auto it = m_retired.begin(); it != m_retired.end();) {
        bool done;
        {
            std::lock_guard lock((*it)->mutex);
            done = (*it)->done;
        }
        it = done ? m_retired.erase(it) : it + 1; // ~Run joins a thread that is about to return
    }
    if (!m_run) {
        if (m_retired.empty())
            m_timer.stop();
        return;
    }

    Run *run = m_run.get();
    const quint64 id = run->id;
    QList<events::Event> events;
    std::optional<events::Stats> stats;
    bool done;
    Status status;
    QString error;
    {
        std::lock_guard lock(run->mutex);
        events.swap(run->events);
        stats.swap(run->stats);
        done = run->done; // read with the buffers: after done, the worker appends nothing more
        status = run->status;
        error = run->error;
        if (done)
            m_lastTeardownThread = run->tornDownOn;
    }

    // A slot may start another run (this one is then superseded) or delete this session.
    QPointer<RunSession> self(this);
    auto stillCurrent = [&] { return self && m_run.get() == run; };
    if (!events.isEmpty())
        Q_EMIT runEvents(id, events);
    if (!stillCurrent())
        return;
    if (stats)
        Q_EMIT pipelineStats(id, *stats);
    if (!stillCurrent() || !done)
        return;
    std::unique_ptr<Run> ended = std::move(m_run); // isRunning() is false from here
    ended.reset();                                 // joins the worker, which has returned or is returning
    if (m_retired.empty())
        m_timer.stop();
    Q_EMIT finished(id, status, error);
}

} // namespace sluice::bridge
