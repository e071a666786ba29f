// Typed access to the app's QSettings, so keys and defaults are written once.
#pragma once

#include <QSettings>
#include <QStringList>
#include <QUrl>

namespace arc::app {

class AppSettings {
 public:
  enum class EngineMode { Local = 0, Remote = 1 };
  enum class Theme { System = 0, Light = 1, Dark = 2 };

  AppSettings() = default;
  explicit AppSettings(const QString& fileName) : m_settings(fileName, QSettings::IniFormat) {}

  EngineMode engineMode() const;
  void setEngineMode(EngineMode m);
  bool startLocalEngine() const;  // spawn a local engine at startup (Local mode)
  void setStartLocalEngine(bool on);
  QUrl engineUrl() const;  // Remote mode
  void setEngineUrl(const QUrl& url);
  QString apiKey() const;
  void setApiKey(const QString& key);
  int localPort() const;
  void setLocalPort(int port);
  QString hostfile() const;  // non-empty: local engine under mpirun
  void setHostfile(const QString& path);
  int ranks() const;
  void setRanks(int n);
  // The local engine's --backend: "auto" (the default: CUDA when a GPU is visible), "cuda", "cpu".
  QString localBackend() const;
  void setLocalBackend(const QString& backend);
  QStringList modelDirs() const;
  void setModelDirs(const QStringList& dirs);
  // Where "Make a demo model" writes its file (in the app's data folder).
  static QString demoModelDir();
  // The folders a local engine serves (--model-dir): the user's, and the demo model's, since the
  // engine loads only files inside its model folders.
  QStringList engineModelDirs() const;
  Theme theme() const;
  void setTheme(Theme t);
  QString language() const;  // empty: follow the system; "en", "de"
  void setLanguage(const QString& code);
  // The Hugging Face hub the Models page browses (tests point it at a local hub).
  QUrl hubUrl() const;
  void setHubUrl(const QUrl& url);
  // Where downloads land: the first model folder, else "models" in the app's data folder.
  QString downloadDir() const;

  QByteArray windowGeometry() const;
  void setWindowGeometry(const QByteArray& g);
  QByteArray windowState() const;
  void setWindowState(const QByteArray& s);
  int currentPage() const;
  void setCurrentPage(int page);

  // The URL the app talks to: the local engine's or the configured remote one.
  QUrl effectiveUrl() const;
  void sync() { m_settings.sync(); }

 private:
  mutable QSettings m_settings;
};

}  // namespace arc::app
