#pragma once
// Reads what `sluice inspect` reports about a file on a thread of its own, so that a table
// filling itself from a large TFRecord or CSV file (which is read through once) never freezes
// the workbench. The report reaches `done` in the receiver's thread, and never once the
// receiver is gone.
//
// Threading: call from the receiver's thread; `done` runs there.

#include <QObject>
#include <QString>

#include <nlohmann/json.hpp>

#include <functional>

namespace sluice::widgets {

// `error` is empty when the file was read; `report` is an empty object otherwise.
using InspectDone = std::function<void(const nlohmann::json &report, const QString &error)>;
void inspectInBackground(QObject *receiver, const QString &path, InspectDone done);

} // namespace sluice::widgets
