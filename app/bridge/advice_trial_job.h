#pragma once
// The workbench's Try Advice: measures the change a verdict's advice names (pipeline::tryAdvice:
// the project as it is and with the change, alternately, several rounds) off the GUI thread and
// hands the result back as a signal. Nothing changes the project; applying the change is the
// window's undoable edit.
//
// Threading contract: start(), cancel(), isRunning(), the destructor and the signals belong to
// the owner's (GUI) thread. One trial at a time runs on its own std::thread; the destructor
// cancels it and joins (a round in progress stops within one pipeline element).

#include "pipeline/profile/advice_trial.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <thread>

namespace sluice::bridge {

class AdviceTrialJob : public QObject
{
    Q_OBJECT
public:
    explicit AdviceTrialJob(QObject *parent = nullptr);
    ~AdviceTrialJob() override;

    // Starts a trial of `change`: `rounds` rounds of `secondsEach` seconds each way, on
    // `options`' threads. False (and nothing started) while another trial runs.
    bool start(const Project &project, const pipeline::PipelineOptions &options, const pipeline::AdviceChange &change,
               double secondsEach, int rounds);
    // Asks the running trial to stop; it then ends with failed("… cancelled").
    void cancel();
    bool isRunning() const { return m_thread.joinable(); }

Q_SIGNALS:
    // `change` is AdviceChange::toJson() of the change tried. The measured trial
    // (AdviceTrial::toJson(): speed-up, spread, rounds, "helps"), and its summary line
    // ("1.84x (1.79-1.90 over 3 rounds of 1.0 s each): it helps").
    void finished(const QJsonObject &change, const QString &summary, const QJsonObject &trial, bool helps);
    // The changed (or unchanged) pipeline failed, or the trial was cancelled.
    void failed(const QJsonObject &change, const QString &message);

private:
    void deliver(std::shared_ptr<Result<pipeline::AdviceTrial>> result, const pipeline::AdviceChange &change);

    std::thread m_thread;
    std::atomic<bool> m_cancel{false};
};

} // namespace sluice::bridge
