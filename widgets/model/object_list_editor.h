#pragma once
// A list of JSON objects with add / remove / move up / move down, and a parameter form for the
// selected one: the model panel's inputs, layers and outputs. It keeps its own copy of the array
// and emits the whole edited array; the owner folds it into the model and re-sets it.
//
// Threading: a widget; GUI thread only.

#include "inspector/param_spec.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QWidget>

#include <functional>

class QListView;
class QToolButton;

namespace sluice::widgets {

class JsonListModel;
class ParamForm;

class ObjectListEditor : public QWidget
{
    Q_OBJECT
public:
    struct Behaviour
    {
        // The label must not depend on the row (the model tester checks a moved row keeps its
        // data); what does (a layer's implicit input) goes into the tooltip.
        std::function<QString(const QJsonObject &item, int row, const QJsonArray &all)> label;
        std::function<QString(const QJsonObject &item, int row, const QJsonArray &all)> toolTip;
        std::function<QList<ParamSpec>(const QJsonObject &item, int row, const QJsonArray &all)> specs;
        // The values the form shows (default: the object itself; a layer merges its "config").
        std::function<QJsonObject(const QJsonObject &item)> values;
        // Writes one edit into the object (default: set, or remove for Undefined).
        std::function<void(QJsonObject &item, const QString &key, const QJsonValue &value)> apply;
        // The object the Add button (or its menu's `choice`) appends.
        std::function<QJsonObject(const QString &choice, const QJsonArray &all)> make;
        QStringList addChoices; // non-empty: Add opens a menu of these (layer classes)
        QString noun;           // "layer": the buttons' tooltips
    };

    ObjectListEditor(Behaviour behaviour, QWidget *parent = nullptr);

    void setItems(const QJsonArray &items);
    void setContext(const ParamContext &context);
    void setErrors(int row, const QMap<QString, QString> &errorsByParam);
    const QJsonArray &items() const;

    int currentRow() const;
    void setCurrentRow(int row);
    // Appends `choice` (as the Add button or its menu would) and selects it.
    void addItem(const QString &choice = {});
    void removeCurrent();
    void moveCurrent(int delta); // -1 up, +1 down

    JsonListModel *listModel() const { return m_model; }
    QListView *view() const { return m_view; }
    ParamForm *form() const { return m_form; }

Q_SIGNALS:
    void itemsEdited(const QJsonArray &items);

private:
    void showCurrent();
    void edited(const QString &key, const QJsonValue &value);
    void updateButtons();

    Behaviour m_behaviour;
    ParamContext m_context;
    JsonListModel *m_model;
    QListView *m_view;
    ParamForm *m_form;
    QToolButton *m_add, *m_remove, *m_up, *m_down;
    QMap<QString, QString> m_errors;
    int m_errorRow = -1;
};

} // namespace sluice::widgets
