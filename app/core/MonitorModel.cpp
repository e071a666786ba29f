#include "MonitorModel.h"

#include <QDateTime>

#include <algorithm>
#include <cmath>
#include <limits>

namespace arc::app {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

QString num(double v) {
  return std::isnan(v) ? QString() : QString::number(v, 'g', 10);
}
}  // namespace

MonitorModel::MonitorModel(int capacity, QObject* parent)
    : QObject(parent), m_capacity(qMax(1, capacity)) {
  m_ring.resize(size_t(m_capacity));
}

void MonitorModel::addStats(const StatsSnapshot& s, double time) {
  // The ring overwrites the oldest sample once full: memory stays fixed, no per-sample allocation.
  const int slot = (m_head + m_count) % m_capacity;
  Sample& out = m_ring[size_t(slot)];
  if (m_count < m_capacity)
    ++m_count;
  else
    m_head = (m_head + 1) % m_capacity;
  out.time = time;
  out.decodeTokensPerSec = s.decodeTokensPerSec;
  out.prefillTokensPerSec = s.prefillTokensPerSec;
  out.running = s.running;
  out.waiting = s.waiting;
  out.kvBlocksUsed = double(s.kvBlocksUsed);
  out.kvBlocksCached = double(s.kvBlocksCached);
  out.kvBlocksTotal = double(s.kvBlocksTotal);
  out.prefixHitRate = s.prefixHitRate;
  out.allreduceBytesPerSec = s.allreduceBytesPerSec >= 0 ? s.allreduceBytesPerSec : kNaN;
  out.linkUtilization = s.linkUtilization >= 0 ? s.linkUtilization : kNaN;
  out.acceptanceRate = s.acceptanceRate >= 0 ? s.acceptanceRate : kNaN;
  if (s.allreduceBytesPerSec >= 0 || s.linkUtilization >= 0) m_hasAllreduce = true;
  out.memoryUsedBytes.fill(kNaN);
  for (const RankMemory& m : s.memory) {
    if (m.rank < 0 || m.rank >= kMaxRanks) continue;
    out.memoryUsedBytes[size_t(m.rank)] = double(m.usedBytes);
    m_ranks = qMax(m_ranks, m.rank + 1);
  }
  while (!m_requests.empty() && m_requests.front().time <= time - m_capacity)
    m_requests.pop_front();
  emit sampleAdded();
}

void MonitorModel::addRequest(const RequestRecord& r, double time) {
  RequestPoint p;
  p.time = time;
  p.ttftMs = r.ttftMs;
  p.decodeTokensPerSec = r.decodeTokensPerSec;
  p.prefillTokensPerSec = r.prefillTokensPerSec;
  p.totalMs = r.totalMs;
  p.promptTokens = r.promptTokens;
  p.completionTokens = r.completionTokens;
  m_requests.push_back(p);
  while (int(m_requests.size()) > kMaxRequests) m_requests.pop_front();
  emit requestAdded();
}

void MonitorModel::clear() {
  m_head = 0;
  m_count = 0;
  m_ranks = 0;
  m_hasAllreduce = false;
  m_requests.clear();
}

const MonitorModel::Sample& MonitorModel::sample(int i) const {
  return m_ring[size_t((m_head + i) % m_capacity)];
}

double MonitorModel::latestTime() const {
  double t = m_count > 0 ? sample(m_count - 1).time : 0;
  if (!m_requests.empty()) t = qMax(t, m_requests.back().time);
  return t;
}

double MonitorModel::value(const Sample& s, Metric m, int rank) {
  switch (m) {
    case Metric::DecodeTokensPerSec:
      return s.decodeTokensPerSec;
    case Metric::PrefillTokensPerSec:
      return s.prefillTokensPerSec;
    case Metric::Running:
      return s.running;
    case Metric::Waiting:
      return s.waiting;
    case Metric::KvBlocksUsed:
      return s.kvBlocksUsed;
    case Metric::KvBlocksCached:
      return s.kvBlocksCached;
    case Metric::KvBlocksTotal:
      return s.kvBlocksTotal;
    case Metric::PrefixHitRatePercent:
      return s.prefixHitRate * 100.0;
    case Metric::AllreduceMiBPerSec:
      return s.allreduceBytesPerSec / double(1 << 20);
    case Metric::LinkUtilizationPercent:
      return s.linkUtilization * 100.0;
    case Metric::AcceptancePercent:
      return s.acceptanceRate * 100.0;
    case Metric::MemoryUsedGiB:
      return rank >= 0 && rank < kMaxRanks ? s.memoryUsedBytes[size_t(rank)] / double(1ll << 30)
                                           : kNaN;
  }
  return kNaN;
}

int MonitorModel::firstInWindow(double end, double windowSeconds) const {
  // Samples are in time order: binary search the first one inside the window.
  int lo = 0, hi = m_count;
  const double start = end - windowSeconds;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (sample(mid).time <= start)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

void MonitorModel::series(Metric m, double end, double windowSeconds, QVector<double>& keys,
                          QVector<double>& values, int rank) const {
  keys.clear();
  values.clear();
  for (int i = firstInWindow(end, windowSeconds); i < m_count; ++i) {
    const Sample& s = sample(i);
    if (s.time > end) break;
    const double v = value(s, m, rank);
    if (std::isnan(v)) continue;
    keys.append(s.time);
    values.append(v);
  }
}

void MonitorModel::requestTtft(double end, double windowSeconds, QVector<double>& keys,
                               QVector<double>& values) const {
  keys.clear();
  values.clear();
  for (const RequestPoint& r : m_requests) {
    // A request stopped before its first token has no TTFT (0); one stopped after it does.
    if (r.time <= end - windowSeconds || r.time > end || !(r.ttftMs > 0)) continue;
    keys.append(r.time);
    values.append(r.ttftMs);
  }
}

void MonitorModel::requestDecode(double end, double windowSeconds, QVector<double>& keys,
                                 QVector<double>& values) const {
  keys.clear();
  values.clear();
  for (const RequestPoint& r : m_requests) {
    // A stopped request may not have decoded long enough to have a rate.
    if (r.time <= end - windowSeconds || r.time > end || !(r.decodeTokensPerSec > 0)) continue;
    keys.append(r.time);
    values.append(r.decodeTokensPerSec);
  }
}

double MonitorModel::ttftPercentile(double p, double end, double windowSeconds) const {
  std::vector<double> v;
  for (const RequestPoint& r : m_requests)
    if (r.time > end - windowSeconds && r.time <= end && r.ttftMs > 0) v.push_back(r.ttftMs);
  return percentile(std::move(v), p);
}

double MonitorModel::percentile(std::vector<double> values, double p) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const double h = (double(values.size()) - 1.0) * std::clamp(p, 0.0, 100.0) / 100.0;
  const size_t lo = size_t(std::floor(h));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (h - double(lo)) * (values[hi] - values[lo]);
}

QByteArray MonitorModel::toCsv(double end, double windowSeconds) const {
  QByteArray out =
      "time,decode_tokens_per_s,prefill_tokens_per_s,running,waiting,kv_blocks_used,"
      "kv_blocks_cached,kv_blocks_total,prefix_hit_rate,allreduce_bytes_per_s,link_utilization,"
      "spec_acceptance_rate";
  for (int r = 0; r < m_ranks; ++r) out += ",memory_used_bytes_rank" + QByteArray::number(r);
  out += '\n';
  auto iso = [](double t) {
    return QDateTime::fromMSecsSinceEpoch(qint64(t * 1000.0), Qt::UTC)
        .toString(Qt::ISODateWithMs)
        .toUtf8();
  };
  for (int i = firstInWindow(end, windowSeconds); i < m_count; ++i) {
    const Sample& s = sample(i);
    if (s.time > end) break;
    QStringList f{num(s.decodeTokensPerSec),
                  num(s.prefillTokensPerSec),
                  num(s.running),
                  num(s.waiting),
                  num(s.kvBlocksUsed),
                  num(s.kvBlocksCached),
                  num(s.kvBlocksTotal),
                  num(s.prefixHitRate),
                  num(s.allreduceBytesPerSec),
                  num(s.linkUtilization),
                  num(s.acceptanceRate)};
    for (int r = 0; r < m_ranks; ++r) f << num(s.memoryUsedBytes[size_t(r)]);
    out += iso(s.time) + ',' + f.join(QLatin1Char(',')).toUtf8() + '\n';
  }
  out +=
      "\nrequest_time,ttft_ms,decode_tokens_per_s,prefill_tokens_per_s,total_ms,prompt_tokens,"
      "completion_tokens\n";
  for (const RequestPoint& r : m_requests) {
    if (r.time <= end - windowSeconds || r.time > end) continue;
    out += iso(r.time) + ',' +
           QStringList{
               num(r.ttftMs),  num(r.decodeTokensPerSec),       num(r.prefillTokensPerSec),
               num(r.totalMs), QString::number(r.promptTokens), QString::number(r.completionTokens)}
               .join(QLatin1Char(','))
               .toUtf8() +
           '\n';
  }
  return out;
}

}  // namespace arc::app
