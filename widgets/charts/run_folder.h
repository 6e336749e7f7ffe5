#pragma once
// Reads the record of a past run — a folder written by `sluice run --out` or by the workbench
// (events.jsonl: one event per line; metrics.csv: one row per epoch) — into a RunRecord, for the
// charts' overlays.
//
// Threading: a function without state; call it from any thread (the charts call it from the GUI
// thread: a record is a few megabytes at most).

#include "io/error.h"

#include <QString>

namespace sluice::widgets {

class RunRecord;

// Per-step losses, throughput and device samples come from events.jsonl; per-epoch values from
// metrics.csv when it exists (it holds one row per epoch even after a resumed run), else from
// the "epoch_end" events. A folder with neither file, or a file that is not in its format, is an
// error naming the file (and line) and the reason. The last line of events.jsonl may be cut
// short by a killed run: it is skipped, not an error.
Status readRunFolder(const QString &folder, RunRecord &record);

} // namespace sluice::widgets
