#include "train/loop/step_update.h"

#include <algorithm>

namespace sluice::train {

Status reduceGradients(GradientReducer &reducer, const Model &model, std::span<const std::unique_ptr<Replica>> replicas, UsedRows &used)
{
    std::vector<std::vector<float> *> buffers;
    for (const auto &rep : replicas)
        buffers.push_back(&rep->gradients());
    const auto &sparse = model.rowSparseParameters();
    used.assign(sparse.size(), {});
    if (sparse.empty())
        return reducer.sum(buffers);
    if (auto s = reducer.sumRanges(buffers, model.denseRanges()); !s.ok())
        return s;
    for (std::size_t k = 0; k < sparse.size(); ++k) {
        const auto &entry = model.parameters()[sparse[k]];
        std::vector<const std::vector<std::int64_t> *> rows;
        for (const auto &rep : replicas)
            rows.push_back(&rep->touchedRows()[k]);
        if (auto s = reducer.sumRows(buffers, entry.offset, std::size_t(entry.rowSize), rows, used[k]); !s.ok())
            return s;
    }
    replicas.front()->setTouchedRows(used);
    return Status::success();
}

namespace {

// The rows of table `entry` in `rows`, as ranges of the flat buffer.
void appendRows(const ParameterEntry &entry, const std::vector<std::int64_t> &rows, std::vector<FloatRange> &ranges)
{
    const std::size_t rowSize = std::size_t(entry.rowSize);
    for (std::int64_t row : rows)
        ranges.push_back({entry.offset + std::size_t(row) * rowSize, rowSize});
}

} // namespace

void applyStepUpdate(const Model &model, Optimizer &optimizer, std::span<float> weights, std::span<float> grads, double globalClipnorm, float lr,
                     std::int64_t iteration, const UsedRows &used)
{
    applyStateUpdates(model, weights, grads);
    const std::size_t trainable = model.trainableParameterCount();
    const auto &sparse = model.rowSparseParameters();
    if (sparse.empty() || used.size() != sparse.size()) {
        const std::span<float> trainableGrads = grads.first(trainable);
        if (globalClipnorm > 0)
            clipByGlobalNorm(trainableGrads, globalClipnorm);
        optimizer.apply(weights.first(trainable), trainableGrads, lr, iteration);
        return;
    }
    // Only the dense trainable ranges and the used rows hold non-zero gradients.
    std::vector<FloatRange> nonZero, updated;
    for (const auto &r : model.denseRanges()) {
        if (r.offset >= trainable)
            continue;
        const FloatRange part{r.offset, std::min(r.count, trainable - r.offset)};
        nonZero.push_back(part);
        updated.push_back(part);
    }
    for (std::size_t k = 0; k < sparse.size(); ++k) {
        const auto &entry = model.parameters()[sparse[k]];
        appendRows(entry, used[k], nonZero);
        if (entry.sparseUpdates)
            appendRows(entry, used[k], updated);
        else
            updated.push_back({entry.offset, entry.count});
    }
    if (globalClipnorm > 0)
        clipByGlobalNorm(grads, nonZero, globalClipnorm);
    optimizer.applyRanges(weights.first(trainable), grads.first(trainable), updated, lr, iteration);
}

} // namespace sluice::train
