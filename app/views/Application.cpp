#include "Application.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QIcon>
#include <QLibraryInfo>
#include <QLocale>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>
#include <QTimer>
#include <QTranslator>

#include "EngineSession.h"
#include "MainWindow.h"
#include "ModelListModel.h"
#include "ModelsPage.h"
#include "WheelGuard.h"

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
  // Numbers the app shows follow the language (German: decimal comma); see NumberFormat.h.
  QLocale::setDefault(english && locale.language() == QLocale::C ? QLocale(QLocale::English)
                                                                 : locale);
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

namespace {

// --screenshots: every page once the engine had time to answer, one PNG each, then the Models
// page again with the loaded file selected (Local files, its fit chart), then quit. Each step
// starts when the one before is saved, so a busy machine cannot reorder them.
// packaging/screenshots.sh runs it under Xvfb.
void grabInto(QWidget& window, const QString& dir, const QString& name) {
  const QString path = QDir(dir).filePath(name + QStringLiteral(".png"));
  if (!window.grab().save(path)) qWarning("arclight: cannot write %s", qPrintable(path));
}

void screenshotStep(MainWindow& window, const QString& dir, int step) {
  static const char* const names[MainWindow::PageCount] = {"models", "chat", "monitor", "benchmark",
                                                           "cluster"};
  constexpr int kPaintMs = 600;  // the page's first replot and layout
  if (step < MainWindow::PageCount) {
    window.setCurrentPage(step);
    QTimer::singleShot(kPaintMs, &window, [&window, dir, step] {
      grabInto(window, dir, QString::fromLatin1(names[step]));
      screenshotStep(window, dir, step + 1);
    });
    return;
  }
  if (step == MainWindow::PageCount) {
    window.setCurrentPage(0);
    ModelsPage* models = window.modelsPage();
    if (!models->selectModel(window.session()->loadedPath()) &&
        !models->localModel()->entries().isEmpty())
      models->selectModel(models->localModel()->entries().first().id);
    QTimer::singleShot(kPaintMs, &window, [&window, dir, step] {
      grabInto(window, dir, QStringLiteral("models-local"));
      screenshotStep(window, dir, step + 1);
    });
    return;
  }
  QTimer::singleShot(200, qApp, &QApplication::quit);
}

void scheduleScreenshots(MainWindow& window, const QString& dir) {
  constexpr int kSettleMs = 2500;  // health, status, models and fit answers arrive
  QTimer::singleShot(kSettleMs, &window, [&window, dir] { screenshotStep(window, dir, 0); });
}

}  // namespace

int runApplication(QApplication& app) {
  QApplication::setOrganizationName(QStringLiteral("Arclight"));
  QApplication::setApplicationName(QStringLiteral("arclight"));
  QApplication::setApplicationVersion(QStringLiteral(ARC_APP_VERSION));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/arclight.svg")));
  QApplication::setDesktopFileName(QStringLiteral("org.arclight.Arclight"));

  QCommandLineParser cli;
  cli.setApplicationDescription(QApplication::translate(
      "main", "Control panel for Mixture-of-Experts language models on DGX Spark boxes"));
  cli.addHelpOption();
  cli.addVersionOption();
  const QCommandLineOption engineUrl(
      QStringLiteral("engine-url"),
      QApplication::translate("main", "Attach to the running engine at <url> (remembered)."),
      QStringLiteral("url"));
  const QCommandLineOption screenshots(
      QStringLiteral("screenshots"),
      QApplication::translate("main", "Save a PNG of every page into <folder>, then quit."),
      QStringLiteral("folder"));
  cli.addOption(engineUrl);
  cli.addOption(screenshots);
  cli.process(app);

  AppSettings settings;
  if (cli.isSet(engineUrl)) {
    const QUrl url = QUrl::fromUserInput(cli.value(engineUrl));
    if (!url.isValid() || !url.scheme().startsWith(QStringLiteral("http"))) {
      qCritical("arclight: --engine-url needs an http(s) URL, e.g. http://127.0.0.1:8080");
      return 2;
    }
    settings.setEngineMode(AppSettings::EngineMode::Remote);
    settings.setEngineUrl(url);
    settings.sync();
  }
  const QString shotDir = cli.value(screenshots);
  if (!shotDir.isEmpty() && !QDir().mkpath(shotDir)) {
    qCritical("arclight: cannot create %s", qPrintable(shotDir));
    return 2;
  }
  installLanguage(settings.language());
  applyTheme(settings.theme());
  app.installEventFilter(new WheelGuard(&app));
  MainWindow window;
  if (!shotDir.isEmpty()) window.resize(1280, 800);
  window.show();
  window.startEngine();
  if (!shotDir.isEmpty()) scheduleScreenshots(window, shotDir);
  return app.exec();
}

}  // namespace arc::app
