#include "AppSettings.h"

#include <QDir>
#include <QStandardPaths>

namespace arc::app {

namespace {
constexpr int kDefaultPort = 8080;
}

AppSettings::EngineMode AppSettings::engineMode() const {
  return m_settings.value(QStringLiteral("engine/mode"), 0).toInt() == 1 ? EngineMode::Remote
                                                                         : EngineMode::Local;
}
void AppSettings::setEngineMode(EngineMode m) {
  m_settings.setValue(QStringLiteral("engine/mode"), int(m));
}
bool AppSettings::startLocalEngine() const {
  return m_settings.value(QStringLiteral("engine/startLocal"), true).toBool();
}
void AppSettings::setStartLocalEngine(bool on) {
  m_settings.setValue(QStringLiteral("engine/startLocal"), on);
}
QUrl AppSettings::engineUrl() const {
  return m_settings.value(QStringLiteral("engine/url"), QStringLiteral("http://127.0.0.1:8080"))
      .toUrl();
}
void AppSettings::setEngineUrl(const QUrl& url) {
  m_settings.setValue(QStringLiteral("engine/url"), url);
}
QString AppSettings::apiKey() const {
  return m_settings.value(QStringLiteral("engine/apiKey")).toString();
}
void AppSettings::setApiKey(const QString& key) {
  m_settings.setValue(QStringLiteral("engine/apiKey"), key);
}
int AppSettings::localPort() const {
  const int p = m_settings.value(QStringLiteral("engine/port"), kDefaultPort).toInt();
  return p > 0 && p < 65536 ? p : kDefaultPort;
}
void AppSettings::setLocalPort(int port) {
  m_settings.setValue(QStringLiteral("engine/port"), port);
}
QString AppSettings::hostfile() const {
  return m_settings.value(QStringLiteral("engine/hostfile")).toString();
}
void AppSettings::setHostfile(const QString& path) {
  m_settings.setValue(QStringLiteral("engine/hostfile"), path);
}
int AppSettings::ranks() const {
  return qBound(1, m_settings.value(QStringLiteral("engine/ranks"), 1).toInt(), 64);
}
void AppSettings::setRanks(int n) {
  m_settings.setValue(QStringLiteral("engine/ranks"), n);
}
QString AppSettings::localBackend() const {
  const QString b = m_settings.value(QStringLiteral("engine/backend")).toString();
  return b == QLatin1String("cuda") || b == QLatin1String("cpu") ? b : QStringLiteral("auto");
}
void AppSettings::setLocalBackend(const QString& backend) {
  m_settings.setValue(QStringLiteral("engine/backend"), backend);
}
QStringList AppSettings::modelDirs() const {
  return m_settings.value(QStringLiteral("engine/modelDirs")).toStringList();
}
void AppSettings::setModelDirs(const QStringList& dirs) {
  m_settings.setValue(QStringLiteral("engine/modelDirs"), dirs);
}
QString AppSettings::demoModelDir() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation))
      .filePath(QStringLiteral("demo"));
}
QStringList AppSettings::engineModelDirs() const {
  QStringList dirs = modelDirs();
  if (!dirs.contains(demoModelDir())) dirs << demoModelDir();
  if (!dirs.contains(downloadDir())) dirs << downloadDir();  // downloads are served too
  return dirs;
}
QUrl AppSettings::hubUrl() const {
  const QUrl u = m_settings.value(QStringLiteral("hub/url")).toUrl();
  return u.isValid() && !u.isEmpty() ? u : QUrl(QStringLiteral("https://huggingface.co"));
}
void AppSettings::setHubUrl(const QUrl& url) {
  m_settings.setValue(QStringLiteral("hub/url"), url);
}
QString AppSettings::downloadDir() const {
  const QStringList dirs = modelDirs();
  if (!dirs.isEmpty()) return dirs.first();
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation))
      .filePath(QStringLiteral("models"));
}
AppSettings::Theme AppSettings::theme() const {
  const int t = m_settings.value(QStringLiteral("ui/theme"), 0).toInt();
  return t == 1 ? Theme::Light : t == 2 ? Theme::Dark : Theme::System;
}
void AppSettings::setTheme(Theme t) {
  m_settings.setValue(QStringLiteral("ui/theme"), int(t));
}
QString AppSettings::language() const {
  return m_settings.value(QStringLiteral("ui/language")).toString();
}
void AppSettings::setLanguage(const QString& code) {
  m_settings.setValue(QStringLiteral("ui/language"), code);
}
QByteArray AppSettings::windowGeometry() const {
  return m_settings.value(QStringLiteral("window/geometry")).toByteArray();
}
void AppSettings::setWindowGeometry(const QByteArray& g) {
  m_settings.setValue(QStringLiteral("window/geometry"), g);
}
QByteArray AppSettings::windowState() const {
  return m_settings.value(QStringLiteral("window/state")).toByteArray();
}
void AppSettings::setWindowState(const QByteArray& s) {
  m_settings.setValue(QStringLiteral("window/state"), s);
}
int AppSettings::currentPage() const {
  return m_settings.value(QStringLiteral("window/page"), 0).toInt();
}
void AppSettings::setCurrentPage(int page) {
  m_settings.setValue(QStringLiteral("window/page"), page);
}

QUrl AppSettings::effectiveUrl() const {
  if (engineMode() == EngineMode::Remote) return engineUrl();
  return QUrl(QStringLiteral("http://127.0.0.1:%1").arg(localPort()));
}

}  // namespace arc::app
