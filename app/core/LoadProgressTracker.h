// Combines load-progress events of every rank into one fraction, a rate and the time left.
// Each rank reports its own bytes_done/bytes_total; the load is as far as the sum of all ranks.
#pragma once

#include <QHash>

#include "EngineEvents.h"

namespace arc::app {

class LoadProgressTracker {
 public:
  void reset();
  // nowMs: a monotonic clock in milliseconds (injected so tests can drive time).
  void update(const LoadProgress& p, qint64 nowMs);

  qint64 bytesDone() const;
  qint64 bytesTotal() const;
  double fraction() const;        // 0..1
  double bytesPerSecond() const;  // since the first event; 0 until there is a rate
  double secondsLeft() const;     // -1 when unknown
  QString describe() const;       // "12.3 GiB of 60.0 GiB, 1 min 20 s left"

 private:
  QHash<int, LoadProgress> m_ranks;
  qint64 m_startMs = -1;
  qint64 m_startBytes = 0;
  qint64 m_lastMs = -1;
};

QString formatDuration(double seconds);  // "1 h 02 min", "3 min 05 s", "42 s"

}  // namespace arc::app
