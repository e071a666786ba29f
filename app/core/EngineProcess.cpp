#include "EngineProcess.h"

#include <signal.h>
#include <sys/prctl.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace arc::app {

EngineProcess::EngineProcess(QObject* parent) : QObject(parent) {
  m_process.setProcessChannelMode(QProcess::MergedChannels);
  // If the app dies without stopping it (crash, kill), the engine goes too instead of holding the
  // port and gigabytes of memory.
  m_process.setChildProcessModifier([] { prctl(PR_SET_PDEATHSIG, SIGTERM); });
  connect(&m_process, &QProcess::readyRead, this, [this] { appendLog(m_process.readAll()); });
  connect(&m_process, &QProcess::started, this, &EngineProcess::started);
  connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError err) {
    if (err != QProcess::FailedToStart) return;  // crashes arrive through finished()
    m_lastError = tr("engine not available: %1 could not be started (%2)")
                      .arg(m_process.program(), m_process.errorString());
    emit failed(m_lastError);
  });
  connect(&m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    appendLog(m_process.readAll());
    if (!m_partialLine.isEmpty()) appendLog("\n");
    if (m_stopping) {
      emit stopped();
      return;
    }
    // Any exit we did not ask for is a failure the user must see, with the last log line.
    QString last;
    for (auto it = m_log.crbegin(); it != m_log.crend() && last.isEmpty(); ++it)
      last = it->trimmed();
    m_lastError = status == QProcess::CrashExit
                      ? tr("engine not available: it crashed")
                      : tr("engine not available: it exited with code %1").arg(code);
    if (!last.isEmpty()) m_lastError += QStringLiteral(": ") + last;
    emit failed(m_lastError);
  });
}

EngineProcess::~EngineProcess() {
  stop(3000);
}

QString EngineProcess::findEngineBinary() {
  const QString path =
      QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("arclight-engine"));
  const QFileInfo fi(path);
  return fi.isFile() && fi.isExecutable() ? fi.absoluteFilePath() : QString();
}

QStringList EngineProcess::commandLine(const EngineLaunch& l) {
  QStringList serve{l.enginePath, QStringLiteral("serve"),  QStringLiteral("--host"),
                    l.host,       QStringLiteral("--port"), QString::number(l.port)};
  if (!l.apiKey.isEmpty()) serve << QStringLiteral("--api-key") << l.apiKey;
  if (!l.backend.isEmpty()) serve << QStringLiteral("--backend") << l.backend;
  for (const QString& d : l.modelDirs) serve << QStringLiteral("--model-dir") << d;
  if (l.hostfile.isEmpty()) return serve;
  // Every rank must be told it is one of N, or each would serve alone.
  serve << QStringLiteral("--tp") << QString::number(qMax(1, l.ranks));
  return QStringList{l.mpirunPath, QStringLiteral("-np"), QString::number(qMax(1, l.ranks)),
                     QStringLiteral("--hostfile"), l.hostfile} +
         serve;
}

bool EngineProcess::start(const EngineLaunch& launch) {
  if (isRunning()) return true;
  m_stopping = false;
  if (launch.enginePath.isEmpty() || !QFileInfo(launch.enginePath).isExecutable()) {
    m_lastError = tr("engine not available: arclight-engine was not found next to the app (%1)")
                      .arg(QCoreApplication::applicationDirPath());
    emit failed(m_lastError);
    return false;
  }
  if (!launch.hostfile.isEmpty() && !QFileInfo(launch.hostfile).isReadable()) {
    m_lastError = tr("engine not available: the hostfile %1 cannot be read").arg(launch.hostfile);
    emit failed(m_lastError);
    return false;
  }
  const QStringList cmd = commandLine(launch);
  m_log << tr("$ %1").arg(cmd.join(QLatin1Char(' ')));
  emit logAppended(m_log.last());
  m_process.start(cmd.first(), cmd.mid(1));
  return true;  // FailedToStart arrives asynchronously through failed()
}

void EngineProcess::stop(int timeoutMs) {
  if (m_process.state() == QProcess::NotRunning) return;
  m_stopping = true;
  m_process.terminate();  // SIGTERM: the engine finishes requests and frees memory
  if (!m_process.waitForFinished(timeoutMs)) {
    m_process.kill();
    m_process.waitForFinished(1000);
  }
}

bool EngineProcess::isRunning() const {
  return m_process.state() != QProcess::NotRunning;
}

void EngineProcess::appendLog(const QByteArray& bytes) {
  m_partialLine += bytes;
  const qsizetype cut = m_partialLine.lastIndexOf('\n');
  if (cut < 0) return;
  const QString text = QString::fromUtf8(m_partialLine.left(cut));
  m_partialLine.remove(0, cut + 1);
  const QStringList lines = text.split(QLatin1Char('\n'));
  m_log += lines;
  if (m_log.size() > m_maxLogLines) m_log.erase(m_log.begin(), m_log.end() - m_maxLogLines);
  emit logAppended(text);
}

}  // namespace arc::app
