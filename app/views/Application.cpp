#include "Application.h"

#include <QApplication>
#include <QIcon>
#include <QLibraryInfo>
#include <QLocale>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>
#include <QTranslator>

#include "MainWindow.h"

namespace arc::app {

namespace {
// Owned by the application object; replaced when the language changes.
QTranslator* g_appTranslator = nullptr;
QTranslator* g_qtTranslator = nullptr;
}  // namespace

QString installLanguage(const QString& code) {
  auto* app = QCoreApplication::instance();
  if (g_appTranslator) {
    QCoreApplication::removeTranslator(g_appTranslator);
    delete g_appTranslator;
    g_appTranslator = nullptr;
  }
  if (g_qtTranslator) {
    QCoreApplication::removeTranslator(g_qtTranslator);
    delete g_qtTranslator;
    g_qtTranslator = nullptr;
  }
  const QLocale locale = code.isEmpty() ? QLocale::system() : QLocale(code);
  const bool english = locale.language() == QLocale::English || locale.language() == QLocale::C;
  auto* t = new QTranslator(app);
  // English needs its file too: it holds the plural forms of the "%n box(es)" strings.
  if (!t->load(english ? QLocale(QLocale::English) : locale, QStringLiteral("arclight"),
               QStringLiteral("_"), QStringLiteral(":/i18n"))) {
    delete t;
    return {};
  }
  QCoreApplication::installTranslator(t);
  g_appTranslator = t;
  if (english) return {};
  // Qt's own strings (standard buttons, dialogs) from the installed Qt translations.
  auto* qt = new QTranslator(app);
  if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
               QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
    QCoreApplication::installTranslator(qt);
    g_qtTranslator = qt;
  } else {
    delete qt;
  }
  return locale.name().section(QLatin1Char('_'), 0, 0);
}

void applyTheme(AppSettings::Theme theme) {
  static const QPalette systemPalette = QApplication::palette();
  if (theme == AppSettings::Theme::System) {
    QApplication::setPalette(systemPalette);
    return;
  }
  QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  QPalette p;
  if (theme == AppSettings::Theme::Dark) {
    const QColor window(0x2b, 0x2d, 0x31), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Highlight, QColor(0xf5, 0xa6, 0x23));
    p.setColor(QPalette::HighlightedText, Qt::black);
    p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
    p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x80, 0x80));
  } else {
    p = QApplication::style()->standardPalette();
    p.setColor(QPalette::Highlight, QColor(0x1f, 0x6f, 0xd1));
  }
  QApplication::setPalette(p);
}

int runApplication(QApplication& app) {
  QApplication::setOrganizationName(QStringLiteral("Arclight"));
  QApplication::setApplicationName(QStringLiteral("arclight"));
  QApplication::setApplicationVersion(QStringLiteral(ARC_APP_VERSION));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/arclight.svg")));
  AppSettings settings;
  installLanguage(settings.language());
  applyTheme(settings.theme());
  MainWindow window;
  window.show();
  window.startEngine();
  return app.exec();
}

}  // namespace arc::app
