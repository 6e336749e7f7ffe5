#pragma once
// A source's spec read off its data, from what `sluice inspect` reports about a file
// (io/array_report.h): the from_tfrecord feature spec, from_csv's columns, from_npz's members.
// The canvas fills a dropped file's source with these, and the inspector's tables fill
// themselves from the source's first file on request, so both say the same.
//
// Threading: pure; any thread.

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

namespace sluice::widgets {

// Fixed-length features as tf.train.Example stores them: {name: {dtype, shape}}, a scalar when a
// feature has one value per record. A feature whose length varies between records is left out
// and named in `problems` ("file: feature \"f\" has 1 to 3 values per record…").
QJsonObject tfRecordSpecFromReport(const nlohmann::json &report, QStringList &problems);

// The columns in file order with their inferred dtype ({name: dtype}); float64 becomes float32,
// as make_csv_dataset infers it and as a model takes it.
QJsonObject csvColumnsFromReport(const nlohmann::json &report);

// The archive's member names, sorted by name (as `sluice inspect` lists them).
QStringList npzMembersFromReport(const nlohmann::json &report);

// The first file a path parameter names (a path, a glob pattern or a list of them), absolute,
// paths relative to `projectFolder`; empty when it names none that exists.
QString firstSourceFile(const QJsonValue &paths, const QString &projectFolder);

} // namespace sluice::widgets
