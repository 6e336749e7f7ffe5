#pragma once
// Where in the model or training object one of core's errors points, read from its `what` and
// reason ("model: layers[2] (joined)", "model: layer 'hidden'" with "Dense parameter 'units':
// …", "training.optimizer.learning_rate.decay_steps"), so the panel can show the message next
// to the editor concerned. Text, not a contract: what cannot be placed is still shown in a
// banner by the caller.
//
// Threading: pure; any thread.

#include <QString>
#include <QStringList>

namespace sluice::widgets {

struct ErrorLocation
{
    QString list;    // "inputs", "layers", "outputs"; empty: not in a list
    int row = -1;    // by index, when the error names one
    QString name;    // by name ("layer 'hidden'"), when it names one instead
    QString param;   // the parameter, when named
    QStringList trainingPath; // "training.a.b" → {"a", "b"}; empty for model errors
};

ErrorLocation locateError(const QString &what, const QString &reason);

} // namespace sluice::widgets
