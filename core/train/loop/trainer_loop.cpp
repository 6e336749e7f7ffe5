// The Trainer's epoch loop: read a batch, agree on it with the other processes, train on it,
// report, checkpoint; then the epoch's end (validation, metrics, checkpoint).
#include "train/loop/step_update.h"
#include "train/loop/trainer_impl.h"


#include <algorithm>
#include <cmath>
#include <set>

namespace sluice::train {

void Trainer::Impl::resetEpoch()
{
    train.reset(model->outputs().size());
    held.reset(model->outputs().size());
    for (auto &rep : replicas)
        rep->resetMetrics();
    for (auto &rep : validationReplicas)
        rep->resetMetrics();
}

void Trainer::Impl::restoreMetricStates(const nlohmann::json &trainStates, const nlohmann::json &heldStates)
{
    auto restore = [](std::vector<std::unique_ptr<Replica>> &reps, const nlohmann::json &states) {
        std::size_t k = 0;
        for (auto &rep : reps)
            for (auto &out : rep->metrics())
                for (auto &m : out)
                    if (states.is_array() && k < states.size())
                        m->setState(states[k++].get<std::vector<double>>());
    };
    restore(replicas, trainStates);
    restore(validationReplicas, heldStates);
}

Result<std::vector<double>> Trainer::Impl::trainStep(const std::optional<pipeline::Element> &batch, std::int64_t rows, double globalRows, int epoch)
{
    SliceResult result;
    // A layer's refusal (an Embedding id out of range) fails the step only after the processes
    // have exchanged their sums below, so that no other process waits for this one forever.
    std::optional<Error> refused;
    if (batch) {
        auto ran = runBatch(*batch, rows, globalRows, true, replicas);
        if (!ran) {
            if (ran.error().layer.empty())
                return ran.error();
            refused = ran.error();
            result.outputLossSums.assign(model->outputs().size(), 0.0);
        } else
            result = std::move(*ran);
    } else if (gpu) {
        // This process has no rows in the last global batch: empty slices give zero gradients.
        for (auto &slice : slices)
            slice.rows = 0;
        const std::vector<std::int64_t> bounds(replicas.size() + 1, 0);
        auto ran = runOnGpu(nullptr, bounds, true, 0.0f, replicas);
        if (!ran)
            return ran.error();
        result = std::move(*ran);
    } else {
        // This process has no rows in the last global batch: it adds zero gradients.
        result.outputLossSums.assign(model->outputs().size(), 0.0);
        for (auto &rep : replicas)
            rep->clearGradients();
    }
    std::vector<double> sums = result.outputLossSums;
    sums.push_back(refused ? 1.0 : 0.0);
    sums.push_back(result.finite ? 0.0 : 1.0);
    if (auto s = reducer->sumAcrossProcesses(sums); !s.ok())
        return s.error();
    if (refused)
        return *refused;
    if (sums[sums.size() - 2] != 0)
        return trainingError("", "another process stopped at step " + std::to_string(step + 1) + " because a layer refused its input (its log says which)");
    sums.erase(sums.end() - 2);
    const bool finite = sums.back() == 0 && std::all_of(sums.begin(), sums.end() - 1, [](double v) { return std::isfinite(v); });
    sums.pop_back();
    if (!finite) {
        std::string which;
        for (std::size_t o = 0; o < model->outputs().size(); ++o)
            if (!std::isfinite(sums[o]))
                which += (which.empty() ? "" : ", ") + model->outputs()[o].name;
        return trainingError("", "the loss became NaN or infinite at step " + std::to_string(step + 1) + " (epoch " + std::to_string(epoch + 1) +
                                              ", output " + (which.empty() ? std::string("?") : which) +
                                              "): lower the learning rate, clip gradients (global_clipnorm) or check the data");
    }
    const double lr = schedule->at(step);
    if (gpu) {
        // Sum, clip and update on the GPUs.
        Status updated = Status::success();
        inArena([&] { updated = gpu->update(float(lr), step + 1); });
        if (!updated.ok())
            return updated.error();
        ++step;
        train.rows += globalRows;
        for (std::size_t o = 0; o < sums.size(); ++o)
            train.outputLoss[o] += sums[o];
        return sums;
    }
    Status reduced = Status::success();
    inArena([&] {
        UsedRows used;
        reduced = reduceGradients(*reducer, *model, replicas, used);
        if (reduced.ok())
            applyStepUpdate(*model, *optimizer, weights, replicas.front()->gradients(), config.globalClipnorm, float(lr), step + 1, used);
    });
    if (!reduced.ok())
        return reduced.error();
    ++step;
    train.rows += globalRows;
    for (std::size_t o = 0; o < sums.size(); ++o)
        train.outputLoss[o] += sums[o];
    return sums;
}

void Trainer::Impl::reportProgress(int epoch, std::int64_t batchInEpoch, double epochRows, Clock::time_point epochStart, double batchLoss, double lr)
{
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - lastStepEvent).count() >= options.stepEventInterval) {
        lastStepEvent = now;
        const double elapsed = secondsSince(epochStart);
        emit(events::Step{.step = step,
                          .epoch = epoch + 1,
                          .batch = batchInEpoch,
                          .loss = train.loss(*model),
                          .batchLoss = batchLoss,
                          .learningRate = lr,
                          .samplesPerSecond = elapsed > 0 ? epochRows / elapsed : 0.0,
                          .timeSeconds = secondsSince(runStart),
                          .cardinality = pipeline->cardinality()});
    }
    if (std::chrono::duration<double>(now - lastStatsEvent).count() >= options.statsEventInterval) {
        lastStatsEvent = now;
        emit(events::Stats{pipeline->snapshot(), nullptr});
    }
}

Result<events::EpochEnd> Trainer::Impl::epochEndEvent(int epoch, std::int64_t heldEvery, double epochRows, Clock::time_point epochStart)
{
    const auto &outputs = model->outputs();
    events::EpochEnd event;
    event.epoch = epoch + 1;
    event.step = step;
    auto add = [&event](std::string name, double value) { event.values.emplace_back(std::move(name), value); };
    auto addAll = [&add](const Result<nlohmann::json> &values) -> Status {
        if (!values)
            return values.error();
        for (auto it = values->begin(); it != values->end(); ++it)
            add(it.key(), it->get<double>());
        return Status::success();
    };
    add("loss", train.loss(*model));
    if (outputs.size() > 1)
        for (std::size_t o = 0; o < outputs.size(); ++o)
            add(outputs[o].name + "_loss", train.rows > 0 ? train.outputLoss[o] / train.rows : 0.0);
    if (auto s = addAll(metricValues(replicas, "", true)); !s.ok())
        return s.error();
    Totals val;
    bool haveValidation = false;
    if (validation) {
        if (auto s = evaluateValidationNode(val); !s.ok())
            return s.error();
        haveValidation = true;
        if (auto s = addAll(metricValues(validationReplicas, "val_", false)); !s.ok())
            return s.error();
    } else if (heldEvery) {
        std::vector<double> sums = held.outputLoss;
        sums.push_back(held.rows);
        if (auto s = reducer->sumAcrossProcesses(sums); !s.ok())
            return s.error();
        val.rows = sums.back();
        val.outputLoss.assign(sums.begin(), sums.end() - 1);
        haveValidation = true;
        if (auto s = addAll(metricValues(validationReplicas, "val_", true)); !s.ok())
            return s.error();
    }
    if (haveValidation) {
        add("val_loss", val.loss(*model));
        if (outputs.size() > 1)
            for (std::size_t o = 0; o < outputs.size(); ++o)
                add("val_" + outputs[o].name + "_loss", val.rows > 0 ? val.outputLoss[o] / val.rows : 0.0);
    }
    const double seconds = secondsSince(epochStart);
    event.seconds = seconds;
    event.samplesPerSecond = seconds > 0 ? epochRows / seconds : 0.0;
    event.learningRate = schedule->at(step);
    return event;
}

RunOutcome Trainer::run()
{
    Impl &impl = *m_impl;
    const Model &model = *impl.model;
    RunOutcome outcome;
    auto fail = [&](Error e) {
        outcome.status = RunStatus::Failed;
        outcome.error = std::move(e);
        outcome.steps = impl.step;
        events::RunEnd end;
        end.status = events::RunEnd::Status::Failed;
        end.step = impl.step;
        end.error = outcome.error;
        impl.emit(end);
        return outcome;
    };
    auto cancelled = [&](int epoch) {
        if (auto s = impl.syncFromGpu(); !s.ok())
            return fail(s.error());
        outcome.status = RunStatus::Cancelled;
        outcome.steps = impl.step;
        events::RunEnd end;
        end.status = events::RunEnd::Status::Cancelled;
        end.step = impl.step;
        end.epoch = epoch;
        impl.emit(end);
        return outcome;
    };

    int startEpoch = 0;
    std::int64_t skipBatches = 0, resumedStepInEpoch = 0;
    std::vector<std::uint64_t> resumeCounters;
    nlohmann::json resumeMetrics, resumeHeldMetrics;
    if (impl.options.resume) {
        auto state = impl.resumeFromCheckpoint();
        if (!state)
            return fail(state.error());
        impl.step = state->step;
        startEpoch = state->epoch;
        skipBatches = state->batchInEpoch;
        resumedStepInEpoch = state->stepInEpoch;
        resumeCounters = state->passCounters;
        if (impl.validation)
            impl.validation->setPassCounters(state->validationPassCounters);
        impl.train.fromJson(state->trainTotals);
        impl.held.fromJson(state->heldTotals);
        resumeMetrics = state->metricStates;
        resumeHeldMetrics = state->heldMetricStates;
    } else if (auto s = impl.reducer->broadcastFromFirst(impl.weights); !s.ok()) {
        return fail(s.error());
    }

    if (impl.gpu)
        if (auto s = impl.gpu->setState(impl.weights, impl.optimizer->slots()); !s.ok())
            return fail(s.error());
    if (!impl.deviceNote.empty())
        impl.emit(events::Notice{impl.deviceNote});
    for (const auto &note : impl.startNotes)
        impl.emit(events::Notice{note});

    std::int64_t parameters = 0;
    for (const auto &p : model.parameters())
        parameters += std::int64_t(p.count);
    events::RunStart start;
    start.model = model.summary();
    start.parameters = parameters;
    start.replicas = impl.replicaCount();
    start.processes = impl.workers();
    start.reducer = impl.gpu ? impl.gpu->reducerName() + (impl.workers() > 1 ? "/" + impl.reducer->name() : "") : impl.reducer->name();
    start.device = impl.deviceDescription;
    start.sharding = impl.shardingPolicy;
    start.optimizer = impl.optimizer->name();
    start.epochs = impl.config.epochs;
    start.startStep = impl.step;
    start.startEpoch = startEpoch;
    impl.emit(start);

    // Notes a stage gains while running (a cache whose pass was cut short) are said once, when
    // they appear, as the build's notes were at the start.
    std::set<std::string> saidNotes;
    auto sayNewStageNotes = [&](bool say) {
        for (const auto &stage : impl.pipeline->snapshot().stages)
            if (!stage.note.empty() && saidNotes.insert(stage.id + "\n" + stage.note).second && say)
                impl.emit(events::Notice{stage.op + " '" + stage.id + "': " + stage.note});
    };
    sayNewStageNotes(false);

    const std::int64_t heldEvery = impl.config.validationSplit > 0 ? std::max<std::int64_t>(2, std::llround(1.0 / impl.config.validationSplit)) : 0;
    double fullGlobalBatch = 0;
    for (int epoch = startEpoch; epoch < impl.config.epochs; ++epoch) {
        const bool resuming = epoch == startEpoch && impl.options.resume;
        impl.pipeline->restart();
        sayNewStageNotes(true);
        if (resuming && !impl.pipeline->setPassCounters(resumeCounters))
            return fail(Error::invalid(impl.options.checkpointDir, "the checkpoint was written for another pipeline"));
        const std::vector<std::uint64_t> epochCounters = impl.pipeline->passCounters();
        if (resuming)
            impl.restoreMetricStates(resumeMetrics, resumeHeldMetrics);
        else
            impl.resetEpoch();
        const auto epochStart = Clock::now();
        double epochRows = 0;
        std::int64_t batchInEpoch = 0, stepInEpoch = resuming ? resumedStepInEpoch : 0;
        std::int64_t skip = resuming ? skipBatches : 0;
        bool localEnded = false;
        for (;;) {
            if (impl.config.stepsPerEpoch > 0 && stepInEpoch >= impl.config.stepsPerEpoch && skip == 0)
                break;
            if (impl.options.betweenSteps)
                impl.options.betweenSteps();
            std::optional<pipeline::Element> batch;
            if (!localEnded) {
                auto next = impl.pipeline->next();
                if (!next) {
                    if (impl.cancelRequested() && impl.pipeline->cancelled())
                        break;
                    return fail(next.error());
                }
                batch = std::move(*next);
                localEnded = !batch;
            }
            std::int64_t rows = 0;
            if (batch) {
                auto r = batchRows(model, *batch);
                if (!r)
                    return fail(r.error());
                rows = *r;
            }
            // Every process takes the same path: agree on the global batch and on cancelling.
            std::vector<double> agree{double(rows), batch ? 1.0 : 0.0, impl.cancelRequested() ? 1.0 : 0.0};
            if (auto s = impl.reducer->sumAcrossProcesses(agree); !s.ok())
                return fail(s.error());
            if (agree[2] > 0 && skip == 0) {
                // The batch just read is not trained on: the checkpoint's position counts only the
                // batches before it, so a resumed run reads it again.
                if (auto s = impl.saveCheckpointAt(epoch, batchInEpoch, stepInEpoch, epochCounters); !s.ok())
                    return fail(s.error());
                return cancelled(epoch);
            }
            if (agree[1] == 0)
                break; // every process has finished its pass
            ++batchInEpoch;
            if (skip > 0) {
                --skip;
                continue;
            }
            const double globalRows = agree[0];
            if (heldEvery && batchInEpoch % heldEvery == 0) {
                Result<SliceResult> result = SliceResult{};
                if (batch)
                    result = impl.runBatch(*batch, rows, globalRows, false, impl.validationReplicas);
                if (!result)
                    return fail(result.error());
                impl.held.rows += double(rows);
                for (std::size_t o = 0; o < result->outputLossSums.size(); ++o)
                    impl.held.outputLoss[o] += result->outputLossSums[o];
                continue;
            }
            if (fullGlobalBatch == 0)
                fullGlobalBatch = globalRows;
            if (impl.config.dropRemainder && globalRows < fullGlobalBatch)
                continue;

            const double lr = impl.schedule->at(impl.step);
            auto sums = impl.trainStep(batch, rows, globalRows, epoch);
            if (!sums)
                return fail(sums.error());
            ++stepInEpoch;
            epochRows += globalRows;
            double batchLoss = 0;
            for (std::size_t o = 0; o < model.outputs().size(); ++o)
                batchLoss += double(model.outputs()[o].lossWeight) * (*sums)[o];
            impl.reportProgress(epoch, batchInEpoch, epochRows, epochStart, batchLoss / globalRows, lr);
            if (impl.config.checkpoint.everySteps > 0 && impl.step % impl.config.checkpoint.everySteps == 0)
                if (auto s = impl.saveCheckpointAt(epoch, batchInEpoch, stepInEpoch, epochCounters); !s.ok())
                    return fail(s.error());
        }
        if (impl.cancelRequested())
            return cancelled(epoch);

        auto event = impl.epochEndEvent(epoch, heldEvery, epochRows, epochStart);
        if (!event)
            return fail(event.error());
        impl.emit(*event);
        outcome.epochs = epoch + 1;
        if (impl.config.checkpoint.everyEpoch) {
            impl.resetEpoch();
            // The next pass has not started: its orders follow from the counters as they are now.
            if (auto s = impl.saveCheckpointAt(epoch + 1, 0, 0, impl.pipeline->passCounters()); !s.ok())
                return fail(s.error());
        }
    }
    if (auto s = impl.syncFromGpu(); !s.ok())
        return fail(s.error());
    outcome.status = RunStatus::Ok;
    outcome.steps = impl.step;
    events::RunEnd end;
    end.step = impl.step;
    end.epochs = outcome.epochs;
    impl.emit(end);
    return outcome;
}

} // namespace sluice::train
