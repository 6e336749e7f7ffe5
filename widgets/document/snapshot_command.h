#pragma once
// One undoable edit of a ProjectDocument, kept as the document's JSON before and after. Whole
// snapshots make every edit — structure, parameters, model, layout — undo exactly, including
// keys this version does not know; projects are kilobytes, so the copies cost nothing.
//
// Threading: GUI thread, like the document.

#include <nlohmann/json.hpp>

#include <QUndoCommand>

namespace sluice::widgets {

class ProjectDocument;

class SnapshotCommand : public QUndoCommand
{
public:
    SnapshotCommand(ProjectDocument *document, const QString &text, nlohmann::json before, nlohmann::json after);
    void undo() override;
    void redo() override;

private:
    ProjectDocument *m_document;
    nlohmann::json m_before, m_after;
};

} // namespace sluice::widgets
