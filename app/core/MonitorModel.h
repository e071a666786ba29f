// The Monitor page's data: a bounded time window of the engine's once-a-second `stats` samples (a
// ring buffer, one hour at most) and the finished requests (`request` events) over the same
// window, with TTFT percentiles. No widgets: the page asks for a metric's visible points and plots
// them. Times are seconds since the epoch, given by the caller so tests are deterministic.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QVector>

#include <array>
#include <deque>
#include <vector>

#include "EngineEvents.h"

namespace arc::app {

class MonitorModel : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMaxRanks = 8;            // memory series kept per sample
  static constexpr int kDefaultCapacity = 3600;  // one hour of 1-second samples
  static constexpr int kMaxRequests = 20000;

  enum class Metric {
    DecodeTokensPerSec = 0,
    PrefillTokensPerSec = 1,
    Running = 2,
    Waiting = 3,
    KvBlocksUsed = 4,
    KvBlocksCached = 5,
    KvBlocksTotal = 6,
    PrefixHitRatePercent = 7,
    AllreduceMiBPerSec = 8,  // absent (NaN) unless the engine sends it
    LinkUtilizationPercent = 9,
    MemoryUsedGiB = 10,      // per rank: pass the rank to series()
    AcceptancePercent = 11,  // speculative decoding; NaN in seconds without drafts
  };

  struct Sample {
    double time = 0;  // seconds since the epoch
    double decodeTokensPerSec = 0;
    double prefillTokensPerSec = 0;
    double running = 0;
    double waiting = 0;
    double kvBlocksUsed = 0;
    double kvBlocksCached = 0;
    double kvBlocksTotal = 0;
    double prefixHitRate = 0;                         // 0..1
    double allreduceBytesPerSec = 0;                  // NaN: not reported
    double linkUtilization = 0;                       // NaN: not reported
    double acceptanceRate = 0;                        // 0..1; NaN: nothing drafted
    std::array<double, kMaxRanks> memoryUsedBytes{};  // NaN: no such rank
  };

  struct RequestPoint {
    double time = 0;  // when the event arrived
    double ttftMs = 0;
    double decodeTokensPerSec = 0;
    double prefillTokensPerSec = 0;
    double totalMs = 0;
    qint64 promptTokens = 0;
    qint64 completionTokens = 0;
  };

  explicit MonitorModel(int capacity = kDefaultCapacity, QObject* parent = nullptr);

  void addStats(const StatsSnapshot& s, double time);
  void addRequest(const RequestRecord& r, double time);
  void clear();

  int capacity() const { return m_capacity; }
  int sampleCount() const { return m_count; }
  int requestCount() const { return int(m_requests.size()); }
  // i-th sample, oldest first (0 <= i < sampleCount()).
  const Sample& sample(int i) const;
  double latestTime() const;                 // 0 when empty
  int rankCount() const { return m_ranks; }  // the most ranks any sample reported
  bool hasAllreduce() const { return m_hasAllreduce; }

  // Fills keys/values (cleared first, capacity kept) with the metric's samples whose time is in
  // (end - windowSeconds, end]. NaN values (not reported) are skipped.
  void series(Metric m, double end, double windowSeconds, QVector<double>& keys,
              QVector<double>& values, int rank = 0) const;
  // Requests in the same window: their TTFT (ms) or decode tokens/s.
  void requestTtft(double end, double windowSeconds, QVector<double>& keys,
                   QVector<double>& values) const;
  void requestDecode(double end, double windowSeconds, QVector<double>& keys,
                     QVector<double>& values) const;
  // The p-th percentile (0..100) of the TTFTs in the window; NaN when there are none.
  double ttftPercentile(double p, double end, double windowSeconds) const;

  // The visible samples as CSV (one row per second, ISO time first), and the requests after them.
  QByteArray toCsv(double end, double windowSeconds) const;

  // The p-th percentile (0..100) of values, linear between closest ranks (the definition of NumPy's
  // default and of common serving benchmarks): h = (n-1)*p/100, x[floor h] + frac(h)*(next - it).
  static double percentile(std::vector<double> values, double p);

 signals:
  void sampleAdded();
  void requestAdded();

 private:
  static double value(const Sample& s, Metric m, int rank);
  int firstInWindow(double end, double windowSeconds) const;

  int m_capacity;
  std::vector<Sample> m_ring;
  int m_head = 0;  // index of the oldest sample
  int m_count = 0;
  int m_ranks = 0;
  bool m_hasAllreduce = false;
  // Time order; bounded like the samples: older than capacity seconds, or beyond kMaxRequests, go.
  std::deque<RequestPoint> m_requests;
};

}  // namespace arc::app
