#pragma once
// A multi-line JSON editor for the values a line is too short for (from_npy's feature → file
// map, a TFRecord feature spec, a warm-up's inner schedule): pretty-printed, checked as typed by
// the parameter's own rule, OK only while valid.
//
// Threading: a dialog; GUI thread only.

#include "inspector/param_spec.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QPlainTextEdit;

namespace sluice::widgets {

class JsonDialog : public QDialog
{
    Q_OBJECT
public:
    JsonDialog(const ParamSpec &spec, const QJsonValue &value, QWidget *parent);

    QJsonValue value() const; // what OK accepts (Undefined: emptied, remove the parameter)
    QPlainTextEdit *textEdit() const { return m_text; }

private:
    void check();

    ParamSpec m_spec;
    QPlainTextEdit *m_text;
    QLabel *m_message;
    QDialogButtonBox *m_buttons;
};

} // namespace sluice::widgets
