#include "QualityRunner.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace arc::app {

QualityRunner::~QualityRunner() {
  if (isRunning()) {
    m_proc->kill();
    m_proc->waitForFinished(2000);
  }
}

bool QualityRunner::start(const QString& engine, const QString& model, const QString& reference,
                          int maxWindows) {
  if (isRunning()) return false;
  if (engine.isEmpty()) {
    emit failed(tr("arclight-engine was not found next to the app, so it cannot measure"));
    return false;
  }
  delete m_proc;
  m_proc = new QProcess(this);
  m_stderrTail.clear();
  connect(m_proc, &QProcess::readyReadStandardError, this, [this] {
    m_stderrTail += m_proc->readAllStandardError();
    // Progress lines end in \r or \n; the last complete one is what the user sees.
    const QList<QByteArray> lines = m_stderrTail.split('\n');
    for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
      const QByteArray line = it->split('\r').constLast().trimmed();
      if (!line.isEmpty()) {
        emit progress(QString::fromUtf8(line));
        break;
      }
    }
    if (m_stderrTail.size() > 8192) m_stderrTail = m_stderrTail.right(4096);
  });
  connect(m_proc, &QProcess::finished, this, [this](int code, QProcess::ExitStatus) {
    const QByteArray out = m_proc->readAllStandardOutput();
    const QJsonObject o = QJsonDocument::fromJson(out).object();
    const QualityRecord r = QualityRecord::fromEvalJson(o, QDateTime::currentDateTime());
    if (!r.model.isEmpty()) {
      emit finished(r);
      return;
    }
    const QString err = QString::fromUtf8(m_stderrTail).trimmed().section(QLatin1Char('\n'), -1);
    emit failed(tr("the measurement failed (exit code %1): %2").arg(code).arg(err));
  });
  connect(m_proc, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) emit failed(m_proc->errorString());
  });
  QStringList args{QStringLiteral("eval"),
                   QStringLiteral("-m"),
                   model,
                   QStringLiteral("--reference"),
                   reference,
                   QStringLiteral("--json")};
  if (maxWindows > 0) args << QStringLiteral("--max-windows") << QString::number(maxWindows);
  m_proc->start(engine, args);
  return true;
}

void QualityRunner::cancel() {
  if (isRunning()) m_proc->terminate();
}

}  // namespace arc::app
