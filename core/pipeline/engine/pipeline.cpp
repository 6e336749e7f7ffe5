#include "pipeline/engine/pipeline.h"

#include "pipeline/profile/advice_trial.h"
#include "pipeline/profile/autotuner.h"
#include "pipeline/profile/bottleneck_verdict.h"
#include "pipeline/engine/blocking_reader.h"
#include "pipeline/engine/build_context.h"
#include "pipeline/engine/runtime.h"
#include "telemetry/cpu_usage.h"
#include "telemetry/process_io.h"
#include "telemetry/process_memory.h"

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <mutex>

namespace sluice::pipeline {

struct Pipeline::Impl
{
    // Declaration order matters for destruction: counters outlive the runtime's tasks.
    std::deque<StageStats> stats;
    std::vector<std::shared_ptr<std::atomic<std::uint64_t>>> passCounters; // of the random ops, in build order
    std::vector<StageStats *> order; // source first
    std::vector<std::string> notes;  // from the build
    std::unique_ptr<Runtime> runtime;
    DatasetPtr output;
    std::string outputNode;
    std::unique_ptr<BlockingReader> reader;
    std::unique_ptr<Autotuner> tuner;
    StatsSink sink;
    PipelineOptions options;
    Project project; // as built: what the verdict's advice would change
    std::uint64_t ramBudget = 0;

    std::int64_t startNs = 0, firstRequestNs = 0, lastPublishNs = 0;
    std::uint64_t storageReadAtStart = 0;
    double cpuAtStart = 0; // the process's CPU seconds when the pipeline started
    std::optional<SystemCpuTimes> systemAtStart; // the machine's, then
    std::atomic<std::uint64_t> delivered{0};
    std::atomic<std::int64_t> consumerWaitNs{0};
    std::atomic<bool> consumerAttached{false};

    void tick()
    {
        const std::int64_t now = nowNs();
        if (tuner)
            tuner->step(now);
        if (now - lastPublishNs >= std::chrono::nanoseconds(options.statsInterval).count()) {
            lastPublishNs = now;
            sink.publish(snapshot());
        }
    }
    PipelineSnapshot snapshot() const;
};

Pipeline::Pipeline() : m_impl(std::make_unique<Impl>()) {}

Pipeline::~Pipeline()
{
    m_impl->reader.reset();
    m_impl->runtime->cancel();
    m_impl->runtime->waitIdle();
}

namespace {

std::uint64_t halfOfRam()
{
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? std::uint64_t(pages) * std::uint64_t(size) / 2 : (std::uint64_t(1) << 30);
}

} // namespace

Result<std::unique_ptr<Pipeline>> Pipeline::build(const Project &project, PipelineOptions options)
{
    std::unique_ptr<Pipeline> pipeline(new Pipeline());
    Impl &impl = *pipeline->m_impl;
    impl.options = options;
    impl.runtime = std::make_unique<Runtime>(options.threads);
    impl.ramBudget = options.ramBudgetBytes ? options.ramBudgetBytes : halfOfRam();
    const std::string what = project.path().empty() ? std::string("project") : project.path();

    std::string output;
    if (options.outputNode) {
        if (!project.findNode(*options.outputNode))
            return Error::invalid(what, "node \"" + *options.outputNode + "\" does not exist");
        output = *options.outputNode;
    } else {
        auto node = project.outputNode();
        if (!node.ok())
            return Error::invalid(what, node.error().reason);
        output = *node;
    }
    try {
        BuildContext context(project, what, impl.stats, impl.runtime->threads());
        context.setGlobalSeed(options.seed);
        context.setResidentBudget(options.residentBudgetBytes ? options.residentBudgetBytes : physicalMemoryBytes() / 4);
        impl.output = context.build(output);
        impl.passCounters = context.passCounters();
        impl.notes = project.unknownKeyNotes();
        impl.notes.insert(impl.notes.end(), context.notes().begin(), context.notes().end());
    } catch (const BuildFailure &failure) {
        Error e = failure.error;
        e.what = what;
        return e;
    } catch (const std::bad_alloc &) {
        return Error::outOfMemory(what, "out of memory while building the pipeline");
    }
    impl.outputNode = output;
    impl.project = project;
    // Stages in project order (sources first), keeping only those this pipeline runs.
    for (const auto &id : project.topologicalOrder())
        for (auto &s : impl.stats)
            if (s.nodeId == id)
                impl.order.push_back(&s);
    if (options.autotune)
        impl.tuner = std::make_unique<Autotuner>(impl.order, impl.runtime->threads(), impl.ramBudget);
    return pipeline;
}

const ElementSpec &Pipeline::elementSpec() const { return m_impl->output->spec(); }
const std::string &Pipeline::outputNode() const { return m_impl->outputNode; }
const std::vector<std::string> &Pipeline::notes() const { return m_impl->notes; }
std::int64_t Pipeline::cardinality() const { return m_impl->output->cardinality(); }

Result<std::optional<Element>> Pipeline::next() { return next(std::function<bool()>{}); }

Result<std::optional<Element>> Pipeline::next(const std::function<bool()> &stopRequested)
{
    Impl &impl = *m_impl;
    const std::int64_t now = nowNs();
    if (!impl.startNs) {
        impl.startNs = now;
        impl.storageReadAtStart = storageReadBytes().value_or(0);
        impl.cpuAtStart = readCpuTimes().processSeconds;
        impl.systemAtStart = readSystemCpuTimes();
    }
    if (!impl.firstRequestNs)
        impl.firstRequestNs = now;
    if (!impl.reader)
        impl.reader = std::make_unique<BlockingReader>(*impl.output, *impl.runtime);
    // Everything the consumer spends in here counts as waiting for input, including pipeline work
    // that synchronous stages do on its own thread, as TensorFlow's analyser counts it.
    auto r = impl.reader->next(std::chrono::milliseconds(20), [this, &impl, &stopRequested] {
        impl.tick();
        if (stopRequested && stopRequested())
            cancel();
    });
    impl.consumerWaitNs.fetch_add(nowNs() - now, std::memory_order_relaxed);
    if (r.ok() && *r)
        impl.delivered.fetch_add(1, std::memory_order_relaxed);
    impl.tick();
    return r;
}

void Pipeline::restart()
{
    m_impl->reader.reset();
}

std::vector<std::uint64_t> Pipeline::passCounters() const
{
    std::vector<std::uint64_t> values;
    for (const auto &c : m_impl->passCounters)
        values.push_back(c->load());
    return values;
}

bool Pipeline::setPassCounters(const std::vector<std::uint64_t> &counters)
{
    if (counters.size() != m_impl->passCounters.size())
        return false;
    for (std::size_t i = 0; i < counters.size(); ++i)
        m_impl->passCounters[i]->store(counters[i]);
    return true;
}

void Pipeline::cancel()
{
    m_impl->runtime->cancel();
}

bool Pipeline::cancelled() const { return m_impl->runtime->cancelled(); }

void Pipeline::setConsumerAttached(bool attached) { m_impl->consumerAttached = attached; }

StatsSink &Pipeline::sink() { return m_impl->sink; }

PipelineSnapshot Pipeline::snapshot() const { return m_impl->snapshot(); }

namespace {

StorageSnapshot storageSnapshot(const StageStats &s, double elapsed, std::uint64_t storageRead, std::uint64_t allRowsRead)
{
    const StorageStats &t = s.storage;
    StorageSnapshot st;
    const int access = t.access.load();
    st.access = access == StorageStats::Random ? "random" : access == StorageStats::Sequential ? "sequential" : "none";
    st.rowsRead = t.rowsRead.load();
    st.readSeconds = double(t.readNs.load()) * 1e-9;
    // The wait is measured on a sample of the reads while they come from the page cache.
    const double timed = double(t.timedReadNs.load()) * 1e-9;
    st.waitShare = timed > 0 ? std::min(1.0, double(t.waitNs.load()) * 1e-9 / timed) : 0;
    st.waitSeconds = st.waitShare * st.readSeconds;
    st.majorFaults = t.majorFaults.load();
    st.pagesReadAhead = t.pagesReadAhead.load();
    st.readAhead = t.readAhead.load();
    st.readAheadRows = t.readAheadRows.load();
    st.readAheadLimitRows = t.readAheadLimitRows.load();
    st.readAheadLimitBytes = t.readAheadLimitBytes.load();
    st.releases = t.releases.load();
    st.residentBudgetBytes = t.residentBudgetBytes.load();
    st.mappedBytes = t.mappedBytes.load();
    // The kernel accounts reads per process: shared out over the mapped sources by rows read.
    const double share = allRowsRead ? double(st.rowsRead) / double(allRowsRead) : 0;
    st.storageBytesPerSecond = elapsed > 0 ? double(storageRead) * share / elapsed : 0;
    st.pagesPerRow = st.rowsRead ? double(storageRead) * share / 4096.0 / double(st.rowsRead) : 0;
    st.device = s.storageDevice;
    st.deviceIops = s.storageDeviceIops;
    return st;
}

} // namespace

PipelineSnapshot Pipeline::Impl::snapshot() const
{
    PipelineSnapshot snap;
    const std::int64_t now = nowNs();
    const double elapsed = startNs ? double(now - startNs) * 1e-9 : 0;
    snap.elapsedSeconds = elapsed;
    snap.elements = delivered.load();
    snap.elementsPerSecond = elapsed > 0 ? double(snap.elements) / elapsed : 0;
    snap.threads = runtime->threads();
    snap.ramBudgetBytes = ramBudget;
    snap.residentBytes = currentRssBytes();
    if (startNs)
        snap.storageReadBytes = storageReadBytes().value_or(storageReadAtStart) - storageReadAtStart;
    std::uint64_t rowsRead = 0;
    for (const StageStats *s : order)
        rowsRead += s->readsMappedRows ? s->storage.rowsRead.load() : 0;
    for (const StageStats *s : order) {
        StageSnapshot st;
        st.id = s->nodeId;
        st.op = s->op;
        st.note = s->note;
        if (s->cacheCutShort.load())
            st.note += std::string(st.note.empty() ? "" : "; ") + StageStats::kCacheCutShortNote;
        st.skipped = s->skipped.load();
        if (st.skipped)
            st.note += std::string(st.note.empty() ? "" : "; ") + std::to_string(st.skipped) + " element" + (st.skipped == 1 ? "" : "s") +
                       " skipped (on_error: skip), the first: " + s->firstSkipReason();
        st.async = s->async;
        st.elements = s->elements.load();
        st.bytes = s->bytes.load();
        st.elementsPerSecond = elapsed > 0 ? double(st.elements) / elapsed : 0;
        st.bytesPerSecond = elapsed > 0 ? double(st.bytes) / elapsed : 0;
        std::int64_t inputsNs = 0;
        for (const StageStats *in : s->inputs)
            inputsNs += in->inclusiveNs.load();
        if (s->async) {
            st.busySeconds = double(s->busyNs.load()) * 1e-9;
            st.waitInputSeconds = double(s->waitInputNs.load()) * 1e-9;
            st.waitConsumerSeconds = double(s->waitConsumerNs.load()) * 1e-9;
            st.queueCapacity = s->capacity.load();
            st.parallelism = std::max(1, s->parallelism.load());
            const auto samples = s->fillSamples.load();
            st.queueFill = samples ? double(s->fillSum.load()) / 1000.0 / double(samples) : 0;
            for (const auto &[param, value] : {std::pair{"num_parallel_calls", s->tunesParallelism ? st.parallelism : 0},
                                               std::pair{"buffer_size", s->tunesBuffer ? st.queueCapacity : 0}})
                if (value > 0) {
                    st.tuned[param] = value;
                    st.tunedWhy[param] = autotuneReason(*s, param, value);
                }
        } else {
            st.busySeconds = double(std::max<std::int64_t>(0, s->inclusiveNs.load() - inputsNs)) * 1e-9;
            st.waitInputSeconds = double(inputsNs) * 1e-9;
        }
        if (s->readsMappedRows)
            st.storage = storageSnapshot(*s, elapsed, snap.storageReadBytes, rowsRead);
        st.pythonSeconds = double(s->hostNs.load()) * 1e-9;
        st.gilWaitSeconds = double(s->hostWaitNs.load()) * 1e-9;
        // A mapped source's rows are copied by the fused batch's tasks, several at once.
        // Stages below a parallel interleave run in its slots.
        st.workers = st.storage && !st.async ? std::max(1, s->storage.readers.load())
                     : st.async              ? std::max(1, st.parallelism)
                                             : std::max(1, s->concurrency);
        st.utilisation = elapsed > 0 ? std::min(1.0, st.busySeconds / (elapsed * st.workers)) : 0;
        st.tunesParallelism = s->tunesParallelism;
        st.concurrency = s->concurrency;
        st.interleave = s->interleaveId;
        if (s->shuffleBufferSize > 0) {
            st.bufferSize = s->shuffleBufferSize;
            st.buffered = s->shuffleBuffered.load();
            const std::int64_t since = s->fillingSinceNs.load();
            st.fillSeconds = double(s->fillNs.load() + (since ? now - since : 0)) * 1e-9;
        }
        snap.stages.push_back(std::move(st));
    }
    snap.consumerAttached = consumerAttached.load();
    if (firstRequestNs) {
        const double consumerTime = double(now - firstRequestNs);
        snap.inputBoundShare = consumerTime > 0 ? std::min(1.0, double(consumerWaitNs.load()) / consumerTime) : 0;
        snap.inputBound = classifyInputBound(snap.inputBoundShare);
    }
    snap.cores = usableCoreCount();
    snap.cpuSeconds = startNs ? std::max(0.0, readCpuTimes().processSeconds - cpuAtStart) : 0;
    if (const auto system = readSystemCpuTimes(); system && systemAtStart && system->totalSeconds > systemAtStart->totalSeconds) {
        const double busy = system->busySeconds - systemAtStart->busySeconds, total = system->totalSeconds - systemAtStart->totalSeconds;
        snap.systemBusyShare = std::clamp(busy / total, 0.0, 1.0);
        snap.otherProcessCores = elapsed > 0 ? std::max(0.0, busy - snap.cpuSeconds) / elapsed : 0;
    }
    const BottleneckVerdict verdict = judgeBottleneck(snap);
    snap.bottleneck = verdict.node;
    snap.bottleneckKind = bottleneckKindName(verdict.kind);
    snap.bottleneckReason = verdict.reason;
    snap.verdictLowConfidence = verdict.lowConfidence;
    if (auto change = adviceChange(verdict, snap, project))
        snap.adviceChange = change->toJson();
    return snap;
}

} // namespace sluice::pipeline
