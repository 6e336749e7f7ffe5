#pragma once
// <qcustomplot.h> through the project's Qt settings. The header declares its signals with
// Qt's `signals` keyword and loops with `foreach`, both of which QT_NO_KEYWORDS removes (the
// project keeps them off: `emit` breaks oneTBB's headers, docs/architecture.md, decision 2). They are
// defined as their Q_ spellings for this one include and undefined again, so nothing after it
// sees them. Include this, never <qcustomplot.h> itself.

#include <QtGlobal>

#if defined(signals) || defined(foreach)
#include <qcustomplot.h>
#else
#define signals Q_SIGNALS
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef foreach
#endif
