// Runs a local `arclight-engine serve` (or `mpirun -np N --hostfile F arclight-engine serve` when a
// hostfile is configured) as a child process, keeps its log, and stops it cleanly: SIGTERM first,
// a kill after a timeout. A missing or failing binary is reported, never fatal.
#pragma once

#include <QObject>
#include <QProcess>
#include <QStringList>

namespace arc::app {

struct EngineLaunch {
  QString enginePath;  // the arclight-engine binary
  QString host = QStringLiteral("127.0.0.1");
  int port = 8080;
  QString apiKey;
  QStringList modelDirs;
  QString hostfile;  // non-empty: start under mpirun
  int ranks = 1;
  QString backend = QStringLiteral("auto");  // --backend: auto (GPU when there is one), cuda, cpu
  QString mpirunPath = QStringLiteral("mpirun");
};

class EngineProcess : public QObject {
  Q_OBJECT
 public:
  explicit EngineProcess(QObject* parent = nullptr);
  ~EngineProcess() override;

  // The engine binary next to the app binary, or empty when there is none.
  static QString findEngineBinary();
  // The program and arguments a launch runs (exposed for tests and the log dialog).
  static QStringList commandLine(const EngineLaunch& launch);

  // Starts the engine; false (and failed() emitted) when it cannot even be started.
  bool start(const EngineLaunch& launch);
  // SIGTERM, then kill after timeoutMs. Blocks at most timeoutMs + a little.
  void stop(int timeoutMs = 5000);
  bool isRunning() const;

  QString log() const { return m_log.join(QLatin1Char('\n')); }
  QString lastError() const { return m_lastError; }
  void setMaxLogLines(int n) { m_maxLogLines = n; }

 signals:
  void started();
  void logAppended(const QString& lines);
  // The engine could not start or died; the message says why ("engine not available: ...").
  void failed(const QString& message);
  void stopped();

 private:
  void appendLog(const QByteArray& bytes);

  QProcess m_process;
  QStringList m_log;
  QByteArray m_partialLine;
  QString m_lastError;
  int m_maxLogLines = 5000;
  bool m_stopping = false;
};

}  // namespace arc::app
