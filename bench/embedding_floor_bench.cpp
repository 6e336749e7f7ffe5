// The memory floor of a sparse (LazyAdam) Embedding step on this machine: the least a training
// step must do with a table's rows, and nothing else. Per step, for ids drawn uniformly from a
// table of N rows, it gathers each id's row of the weights (the forward pass) and then runs Adam
// on every distinct row used: reads the row's gradient from a compact buffer (as if backward had
// summed it there) and reads and writes the row of the weights and of both moments. The tables
// sit on transparent huge pages and the rows are prefetched ahead, as in Sluice's own step
// (train/model/prefetch.h, train/model/huge_pages.h); no gradient table, no sorting, no reduction is timed.
//
// The difference between N = 10 k (tables in the caches) and N = 1 M rows (each row a miss in
// DRAM) estimates what the larger table costs on this machine before anything else a step does
// (the same prefetching and huge pages as Sluice's step; better code could shave some of it);
// set against the whole step of `sluice bench train` it tells how far "within 10%" is.
// One JSON line per table size on stdout.
//
//   sluice_embedding_floor_bench [--rows 10000,1000000] [--ids 8192] [--dim 32] [--steps 200] [--threads 2] [--runs 5]
#include "train/model/huge_pages.h"
#include "train/model/prefetch.h"

#include <nlohmann/json.hpp>

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace sluice::train;

namespace {

struct Options
{
    std::vector<std::int64_t> rows{10000, 1000000};
    std::int64_t ids = 8192, dim = 32, steps = 200, runs = 5;
    int threads = 2;
};

[[noreturn]] void usage(const char *why)
{
    std::fprintf(stderr, "sluice_embedding_floor_bench: %s\nusage: sluice_embedding_floor_bench [--rows 10000,1000000] [--ids 8192] "
                         "[--dim 32] [--steps 200] [--threads 2] [--runs 5]\n", why);
    std::exit(2);
}

std::int64_t positive(const char *option, const char *text)
{
    char *end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || v < 1)
        usage((std::string(option) + " needs a positive integer, got '" + text + "'").c_str());
    return v;
}

Options parse(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; i += 2) {
        const std::string key = argv[i];
        if (i + 1 >= argc)
            usage((key + " needs a value").c_str());
        const char *value = argv[i + 1];
        if (key == "--rows") {
            o.rows.clear();
            std::string list = value;
            for (std::size_t at = 0; at <= list.size();) {
                const std::size_t comma = std::min(list.find(',', at), list.size());
                o.rows.push_back(positive("--rows", list.substr(at, comma - at).c_str()));
                at = comma + 1;
            }
        } else if (key == "--ids") {
            o.ids = positive("--ids", value);
        } else if (key == "--dim") {
            o.dim = positive("--dim", value);
        } else if (key == "--steps") {
            o.steps = positive("--steps", value);
        } else if (key == "--runs") {
            o.runs = positive("--runs", value);
        } else if (key == "--threads") {
            o.threads = int(positive("--threads", value));
        } else {
            usage(("unknown option " + key).c_str());
        }
    }
    return o;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Keras's Adam on one row, as train/objectives/optimizers.cpp runs it.
inline void adamRow(float *__restrict w, float *__restrict m, float *__restrict v, const float *__restrict g, std::int64_t n, float lr, float b1,
                    float b2, float eps)
{
    for (std::int64_t k = 0; k < n; ++k) {
        m[k] += (g[k] - m[k]) * (1 - b1);
        v[k] += (g[k] * g[k] - v[k]) * (1 - b2);
        w[k] -= m[k] * lr / (std::sqrt(v[k]) + eps);
    }
}

struct Tables
{
    std::vector<float> w, m, v;
};

Tables makeTables(std::int64_t rows, std::int64_t dim)
{
    Tables t;
    for (auto *table : {&t.w, &t.m, &t.v}) {
        table->assign(std::size_t(rows * dim), 0.0f);
        adviseHugePages(*table);
        for (std::size_t i = 0; i < table->size(); i += 1024)
            (*table)[i] = 0.001f; // touch every page now, not in the timed steps
    }
    std::fill(t.w.begin(), t.w.end(), 0.01f);
    return t;
}

// One step's ids and the distinct rows among them, sorted as Sluice's backward lists them.
struct StepIds
{
    std::vector<std::int64_t> ids, rows;
};

std::vector<StepIds> drawIds(const Options &o, std::int64_t tableRows, std::uint64_t seed)
{
    std::mt19937_64 gen(seed);
    std::uniform_int_distribution<std::int64_t> pick(0, tableRows - 1);
    std::vector<StepIds> steps(std::size_t(o.steps));
    for (auto &s : steps) {
        s.ids.resize(std::size_t(o.ids));
        for (auto &id : s.ids)
            id = pick(gen);
        s.rows = s.ids;
        std::sort(s.rows.begin(), s.rows.end());
        s.rows.erase(std::unique(s.rows.begin(), s.rows.end()), s.rows.end());
    }
    return steps;
}

// Median milliseconds of one step (gather + sparse Adam) over the steps of one run.
double timeRun(const Options &o, Tables &t, const std::vector<StepIds> &steps, oneapi::tbb::task_arena &arena)
{
    const std::int64_t D = o.dim;
    std::vector<float> gathered(std::size_t(o.ids * D)), grads(std::size_t(o.ids * D), 1e-3f);
    std::vector<double> ms;
    for (const auto &s : steps) {
        const auto t0 = std::chrono::steady_clock::now();
        arena.execute([&] {
            const std::int64_t n = std::int64_t(s.ids.size());
            oneapi::tbb::parallel_for(std::int64_t(0), std::int64_t(o.threads), [&](std::int64_t part) {
                const std::int64_t b = n * part / o.threads, e = n * (part + 1) / o.threads;
                for (std::int64_t i = b; i < e; ++i) {
                    if (i + std::int64_t(kPrefetchRows) < e)
                        prefetchRow(t.w.data() + s.ids[std::size_t(i + std::int64_t(kPrefetchRows))] * D, std::size_t(D));
                    std::memcpy(gathered.data() + i * D, t.w.data() + s.ids[std::size_t(i)] * D, std::size_t(D) * sizeof(float));
                }
            });
            const std::int64_t r = std::int64_t(s.rows.size());
            oneapi::tbb::parallel_for(std::int64_t(0), std::int64_t(o.threads), [&](std::int64_t part) {
                const std::int64_t b = r * part / o.threads, e = r * (part + 1) / o.threads;
                for (std::int64_t i = b; i < e; ++i) {
                    if (i + std::int64_t(kPrefetchRows) < e) {
                        const std::int64_t ahead = s.rows[std::size_t(i + std::int64_t(kPrefetchRows))] * D;
                        prefetchRow(t.w.data() + ahead, std::size_t(D));
                        prefetchRow(t.m.data() + ahead, std::size_t(D));
                        prefetchRow(t.v.data() + ahead, std::size_t(D));
                    }
                    const std::int64_t at = s.rows[std::size_t(i)] * D;
                    adamRow(t.w.data() + at, t.m.data() + at, t.v.data() + at, grads.data() + i * D, D, 1e-3f, 0.9f, 0.999f, 1e-7f);
                }
            });
        });
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(ms);
}

} // namespace

int main(int argc, char **argv)
{
    const Options o = parse(argc, argv);
    oneapi::tbb::task_arena arena(o.threads);
    for (const std::int64_t rows : o.rows) {
        Tables t = makeTables(rows, o.dim);
        std::vector<double> runs;
        std::size_t distinct = 0;
        for (std::int64_t run = 0; run < o.runs; ++run) {
            const auto steps = drawIds(o, rows, 17 + std::uint64_t(run));
            distinct = steps.front().rows.size();
            timeRun(o, t, std::vector<StepIds>(steps.begin(), steps.begin() + std::min<std::ptrdiff_t>(10, std::ptrdiff_t(steps.size()))), arena); // warm-up
            runs.push_back(timeRun(o, t, steps, arena));
        }
        const nlohmann::json line = {{"benchmark", "embedding_floor"}, {"rows", rows},     {"ids", o.ids},          {"dim", o.dim},
                                     {"threads", o.threads},           {"steps", o.steps}, {"distinct_rows", distinct},
                                     {"step_ms_median", median(runs)}, {"step_ms_runs", runs}};
        std::printf("%s\n", line.dump().c_str());
        std::fflush(stdout);
    }
    return 0;
}
