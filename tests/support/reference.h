#pragma once
// A reference a test compares Sluice with (numpy, TensorFlow, Arrow, ONNX's libraries, a
// packaging tool) that cannot be had: under CI=true the test fails, naming it, so that the suite
// never passes without its reference; elsewhere it reports a skip with the same words. A macro:
// QFAIL and QSKIP return from the test function itself.

#include <QtGlobal>
#include <QtTest>

#define SLUICE_REFERENCE_MISSING(message)                                                                                           \
    do {                                                                                                                            \
        if (qEnvironmentVariable("CI") == QLatin1String("true"))                                                                    \
            QFAIL(qPrintable(QString::fromUtf8(message) + QStringLiteral(" (under CI=true every reference must be there)")));      \
        QSKIP(message);                                                                                                             \
    } while (false)
