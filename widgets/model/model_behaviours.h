#pragma once
// How the model panel's three lists label, describe, create and edit their objects: model
// inputs, layers (whose parameters may sit in a Keras "config" object, and whose class may
// change), outputs. Kept apart from the panel so each rule is small and testable.
//
// Threading: pure; GUI thread (they are called by widgets) or any.

#include "model/object_list_editor.h"

#include <QMap>

namespace sluice::widgets::behaviours {

// `features` and `shapes` are read at call time (the panel updates them).
ObjectListEditor::Behaviour inputs(const QStringList *features, const QMap<QString, QString> *shapes);
ObjectListEditor::Behaviour layers(const QJsonObject *model);
ObjectListEditor::Behaviour outputs(const QJsonObject *model, const QStringList *features);

// The layer's parameters as core reads them: its "config" object, then its top-level keys.
QJsonObject layerValues(const QJsonObject &layer);
// Writes a layer edit where the parameter lives (in "config" when it is there); a new class drops
// the parameters only the old class documents.
void applyLayerEdit(QJsonObject &layer, const QString &key, const QJsonValue &value);
// Renames `from` to `to` in the layers' inputs and the outputs' layer references.
void renameReferences(QJsonObject &model, const QString &from, const QString &to);
// `base`, or base_2, base_3… whichever no object of `all` is named yet.
QString uniqueName(const QString &base, const QJsonArray &all);

} // namespace sluice::widgets::behaviours
