// Runs `arclight-engine bench-serve --json` as a child process: stderr lines are progress, stdout
// lines are results (BenchResult) as each scenario finishes. Cancelling terminates the process.
// A missing binary or a failed run is reported through finished(false, message), never fatal.
#pragma once

#include <QObject>
#include <QProcess>

#include "BenchHistory.h"

namespace arc::app {

class BenchRunner : public QObject {
  Q_OBJECT
 public:
  explicit BenchRunner(QObject* parent = nullptr);
  ~BenchRunner() override;

  // The program to run; default: arclight-engine next to the app (EngineProcess::findEngineBinary).
  void setProgram(const QString& program) { m_program = program; }
  QString program() const { return m_program; }

  bool start(const BenchSettings& settings);
  void cancel();
  bool isRunning() const { return m_process.state() != QProcess::NotRunning; }
  // The run so far (settings, date, results, error); complete after finished().
  const BenchRun& run() const { return m_run; }

 signals:
  void progress(const QString& line);
  void resultReady(const arc::app::BenchResult& result);
  void finished(bool ok, const QString& message);

 private:
  void readStdout(bool flush);
  void readStderr(bool flush);
  void onFinished(int code, QProcess::ExitStatus status);

  QProcess m_process;
  QString m_program;
  BenchRun m_run;
  QByteArray m_out;
  QByteArray m_err;
  QString m_lastErrLine;
  bool m_cancelled = false;
};

}  // namespace arc::app
