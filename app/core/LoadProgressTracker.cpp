#include "LoadProgressTracker.h"

#include <QCoreApplication>

namespace arc::app {

void LoadProgressTracker::reset() {
  m_ranks.clear();
  m_startMs = -1;
  m_startBytes = 0;
  m_lastMs = -1;
}

void LoadProgressTracker::update(const LoadProgress& p, qint64 nowMs) {
  m_ranks.insert(p.rank, p);
  if (m_startMs < 0) {
    m_startMs = nowMs;
    m_startBytes = bytesDone();
  }
  m_lastMs = nowMs;
}

qint64 LoadProgressTracker::bytesDone() const {
  qint64 s = 0;
  for (const LoadProgress& p : m_ranks) s += qMin(p.bytesDone, p.bytesTotal);
  return s;
}

qint64 LoadProgressTracker::bytesTotal() const {
  qint64 s = 0;
  for (const LoadProgress& p : m_ranks) s += p.bytesTotal;
  return s;
}

double LoadProgressTracker::fraction() const {
  const qint64 total = bytesTotal();
  return total > 0 ? double(bytesDone()) / double(total) : 0.0;
}

double LoadProgressTracker::bytesPerSecond() const {
  if (m_startMs < 0 || m_lastMs <= m_startMs) return 0;
  return double(bytesDone() - m_startBytes) * 1000.0 / double(m_lastMs - m_startMs);
}

double LoadProgressTracker::secondsLeft() const {
  const double rate = bytesPerSecond();
  if (rate <= 0) return -1;
  return double(bytesTotal() - bytesDone()) / rate;
}

QString LoadProgressTracker::describe() const {
  QString text = QCoreApplication::translate("LoadProgressTracker", "%1 of %2")
                     .arg(formatBytes(bytesDone()), formatBytes(bytesTotal()));
  const double left = secondsLeft();
  if (left >= 0)
    text +=
        QCoreApplication::translate("LoadProgressTracker", ", %1 left").arg(formatDuration(left));
  return text;
}

QString formatDuration(double seconds) {
  const qint64 s = qint64(seconds + 0.5);
  if (s >= 3600)
    return QCoreApplication::translate("LoadProgressTracker", "%1 h %2 min")
        .arg(s / 3600)
        .arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
  if (s >= 60)
    return QCoreApplication::translate("LoadProgressTracker", "%1 min %2 s")
        .arg(s / 60)
        .arg(s % 60, 2, 10, QLatin1Char('0'));
  return QCoreApplication::translate("LoadProgressTracker", "%1 s").arg(s);
}

}  // namespace arc::app
