// Application-wide setup: names, icon, language, palette; then the main window.
#pragma once

#include <QString>

#include "AppSettings.h"

class QApplication;
class QTranslator;

namespace arc::app {

int runApplication(QApplication& app);

// Installs the translation for a language code ("de"), or the system's when empty; "en" removes
// translations. Returns the code actually installed ("" for English).
QString installLanguage(const QString& code);

// Light or dark palette (Fusion style), or the platform's when System.
void applyTheme(AppSettings::Theme theme);

}  // namespace arc::app
