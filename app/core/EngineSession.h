// The one engine connection the pages share: starts a local engine (or attaches to a URL), keeps
// the EngineClient connected, and holds what the status bar and pages show (state, loaded model,
// live tokens/s, memory per box, load progress, the last failure as a plain message).
#pragma once

#include <QElapsedTimer>
#include <QObject>

#include "AppSettings.h"
#include "EngineClient.h"
#include "EngineProcess.h"
#include "LoadProgressTracker.h"

namespace arc::app {

class EngineSession : public QObject {
  Q_OBJECT
 public:
  explicit EngineSession(QObject* parent = nullptr);
  ~EngineSession() override;

  EngineClient* client() { return &m_client; }
  EngineProcess* process() { return &m_process; }

  // Reads the settings and starts: a local engine (when the mode is Local and startLocal is on,
  // or `forceLocal`) or a connection to the remote URL.
  void start(const AppSettings& settings, bool forceLocal = false);
  void stopLocalEngine();

  EngineState state() const { return m_state; }
  QString loadedModel() const { return m_loadedModel; }
  QString loadedPath() const { return m_loadedPath; }
  QString engineVersion() const { return m_version; }
  // "CUDA (device 0)", "CPU" or empty before the engine said; the reason of --backend auto.
  QString backendText() const;
  QString backendReason() const { return m_backendReason; }
  const StatsSnapshot& stats() const { return m_stats; }
  const LoadProgressTracker& loadTracker() const { return m_load; }
  bool isLoading() const { return m_loading; }
  QString message() const { return m_message; }  // the last problem, plain text; empty when fine

  void load(const QString& path, qint64 contextSize = 0);
  void load(const QString& path, const LoadSettings& settings);
  void cancelLoad();  // the engine stops reading weights; loadFinished(false, "cancelled")
  void unload();
  // Runs `arclight-engine make-test-model --out FILE`; demoModelReady or demoModelFailed follow.
  void makeDemoModel(const QString& outFile);

 signals:
  void changed();  // state, model, stats or connection changed: refresh what shows them
  void messageChanged(const QString& message);
  void loadProgressChanged();
  void loadFinished(bool ok, const QString& message);
  void demoModelReady(const QString& path);
  void demoModelFailed(const QString& reason);

 private:
  void setMessage(const QString& m);
  void setLoaded(const QString& model, const QString& path);

  EngineClient m_client;
  EngineProcess m_process;
  EngineState m_state = EngineState::Unknown;
  QString m_loadedModel;
  QString m_loadedPath;
  QString m_version;
  QString m_backend;
  QString m_backendReason;
  int m_device = -1;
  StatsSnapshot m_stats;
  LoadProgressTracker m_load;
  QElapsedTimer m_clock;
  bool m_loading = false;
  QString m_message;
};

}  // namespace arc::app
