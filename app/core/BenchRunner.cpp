#include "BenchRunner.h"

#include <QFileInfo>

#include "EngineProcess.h"

namespace arc::app {

BenchRunner::BenchRunner(QObject* parent)
    : QObject(parent), m_program(EngineProcess::findEngineBinary()) {
  connect(&m_process, &QProcess::readyReadStandardOutput, this, [this] { readStdout(false); });
  connect(&m_process, &QProcess::readyReadStandardError, this, [this] { readStderr(false); });
  connect(&m_process, &QProcess::finished, this, &BenchRunner::onFinished);
  connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError err) {
    if (err != QProcess::FailedToStart) return;
    m_run.error = tr("bench-serve could not be started: %1 (%2)")
                      .arg(m_process.program(), m_process.errorString());
    emit finished(false, m_run.error);
  });
}

BenchRunner::~BenchRunner() {
  if (isRunning()) {
    m_process.kill();
    m_process.waitForFinished(2000);
  }
}

bool BenchRunner::start(const BenchSettings& settings) {
  if (isRunning()) return false;
  m_run = BenchRun{};
  m_run.date = QDateTime::currentDateTimeUtc();
  m_run.id = m_run.date.toString(Qt::ISODateWithMs);
  m_run.settings = settings;
  m_run.model = settings.model;
  m_out.clear();
  m_err.clear();
  m_lastErrLine.clear();
  m_cancelled = false;
  if (m_program.isEmpty() || !QFileInfo(m_program).isExecutable()) {
    m_run.error = tr("bench-serve is not available: arclight-engine was not found next to the app");
    emit finished(false, m_run.error);
    return false;
  }
  if (settings.url.isEmpty()) {
    m_run.error = tr("no server URL to benchmark");
    emit finished(false, m_run.error);
    return false;
  }
  m_process.start(m_program, settings.arguments());
  return true;
}

void BenchRunner::cancel() {
  if (!isRunning()) return;
  m_cancelled = true;
  m_process.terminate();
  if (!m_process.waitForFinished(3000)) m_process.kill();
}

void BenchRunner::readStdout(bool flush) {
  m_out += m_process.readAllStandardOutput();
  if (flush && !m_out.isEmpty() && !m_out.endsWith('\n')) m_out += '\n';
  qsizetype nl;
  while ((nl = m_out.indexOf('\n')) >= 0) {
    const QByteArray line = m_out.left(nl);
    m_out.remove(0, nl + 1);
    if (line.trimmed().isEmpty()) continue;
    const BenchLine bl = parseBenchLine(line);
    switch (bl.kind) {
      case BenchLine::Kind::Result:
        m_run.results.append(bl.result);
        if (!bl.result.model.isEmpty()) m_run.model = bl.result.model;
        emit resultReady(bl.result);
        break;
      case BenchLine::Kind::FatalError:
        m_run.error = bl.error;
        emit progress(tr("error: %1").arg(bl.error));
        break;
      case BenchLine::Kind::Invalid:
        // Not ours (a stray print): show it rather than lose it.
        emit progress(QString::fromUtf8(line));
        break;
    }
  }
}

void BenchRunner::readStderr(bool flush) {
  m_err += m_process.readAllStandardError();
  if (flush && !m_err.isEmpty() && !m_err.endsWith('\n')) m_err += '\n';
  qsizetype nl;
  while ((nl = m_err.indexOf('\n')) >= 0) {
    const QString line = QString::fromUtf8(m_err.left(nl)).trimmed();
    m_err.remove(0, nl + 1);
    if (line.isEmpty()) continue;
    m_lastErrLine = line;
    emit progress(line);
  }
}

void BenchRunner::onFinished(int code, QProcess::ExitStatus status) {
  readStdout(true);
  readStderr(true);
  if (m_cancelled) {
    m_run.error = tr("cancelled");
    emit finished(false, m_run.error);
    return;
  }
  if (status == QProcess::CrashExit) {
    m_run.error = tr("bench-serve crashed");
  } else if (code != 0 && m_run.error.isEmpty()) {
    // Exit 1 with results: some requests failed (the results say how many).
    m_run.error = m_run.results.isEmpty()
                      ? tr("bench-serve exited with code %1: %2").arg(code).arg(m_lastErrLine)
                      : tr("some requests failed (exit code %1)").arg(code);
  }
  const bool ok = m_run.error.isEmpty();
  emit finished(
      ok, ok ? tr("%n scenario(s) measured", nullptr, int(m_run.results.size())) : m_run.error);
}

}  // namespace arc::app
