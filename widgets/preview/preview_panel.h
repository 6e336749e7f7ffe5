#pragma once
// The preview of one stage: what it emits (features with dtype and shape) and a table of its
// first elements — one row per element, one column per feature, each cell the value's shape
// and first values — as `sluice preview` prints them.
//
// Threading: GUI thread only.

#include "pipeline/engine/preview.h"

#include <QWidget>

class QLabel;
class QTableWidget;

namespace sluice::widgets {

class PreviewPanel : public QWidget
{
    Q_OBJECT
public:
    explicit PreviewPanel(QWidget *parent = nullptr);

    void showPreview(const pipeline::StagePreview &preview);
    void showWaiting(const QString &node);
    void showError(const QString &message);
    QTableWidget *table() const { return m_table; }
    QString headline() const;

private:
    QLabel *m_headline;
    QTableWidget *m_table;
};

} // namespace sluice::widgets
