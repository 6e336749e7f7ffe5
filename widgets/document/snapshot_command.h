#pragma once
// One undoable edit of a ProjectDocument, kept as the document's JSON before and after. Whole
// snapshots make every edit — structure, parameters, model, layout — undo exactly, including
// keys this version does not know; projects are kilobytes, so the copies cost nothing.
//
// Threading: GUI thread, like the document.

#include <nlohmann/json.hpp>

#include <QString>
#include <QUndoCommand>

namespace sluice::widgets {

class ProjectDocument;

class SnapshotCommand : public QUndoCommand
{
public:
    // Edits with the same non-empty `mergeKey` made within a second of each other become one step
    // (a spin box's arrows or wheel commit on every step; undo should not replay each).
    SnapshotCommand(ProjectDocument *document, const QString &text, nlohmann::json before, nlohmann::json after, QString mergeKey = {});
    void undo() override;
    void redo() override;
    int id() const override { return m_mergeKey.isEmpty() ? -1 : 1; }
    bool mergeWith(const QUndoCommand *other) override;

private:
    ProjectDocument *m_document;
    nlohmann::json m_before, m_after;
    QString m_mergeKey;
    qint64 m_madeAtMs;
};

} // namespace sluice::widgets
