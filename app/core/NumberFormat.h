// Numbers as the user reads them: in the app's language (QLocale's default, set with the
// language), so German shows "41,5". Machine-readable outputs (CSV, JSON, hostfiles, command
// lines) keep QString::number's C locale.
#pragma once

#include <QLocale>
#include <QString>

namespace arc::app {

inline QString decimal(double value, int decimals) {
  return QLocale().toString(value, 'f', decimals);
}

}  // namespace arc::app
