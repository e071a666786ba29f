// Prometheus metrics (text exposition format 0.0.4): counters, gauges and histograms, each
// optionally split by labels. Thread-safe; rendering takes a consistent snapshot per family.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace arc {

using Labels = std::vector<std::pair<std::string, std::string>>;

class MetricsRegistry {
 public:
  enum class Kind { kCounter, kGauge, kHistogram };

  // Declares a family (idempotent). Histogram buckets are upper bounds, ascending.
  void add_counter(const std::string& name, const std::string& help);
  void add_gauge(const std::string& name, const std::string& help);
  void add_histogram(const std::string& name, const std::string& help, std::vector<double> buckets);

  void inc(const std::string& name, double by = 1.0, const Labels& labels = {});
  void set(const std::string& name, double value, const Labels& labels = {});
  void observe(const std::string& name, double value, const Labels& labels = {});

  // Current value of a counter or gauge (0 when never set), for tests and snapshots.
  double value(const std::string& name, const Labels& labels = {}) const;
  uint64_t histogram_count(const std::string& name, const Labels& labels = {}) const;

  std::string render() const;

 private:
  struct Series {
    double value = 0;               // counter / gauge
    std::vector<uint64_t> buckets;  // histogram: cumulative counts rendered, raw counts stored
    uint64_t count = 0;
    double sum = 0;
  };
  struct Family {
    Kind kind = Kind::kCounter;
    std::string help;
    std::vector<double> bounds;
    std::map<std::string, Series> series;  // key: rendered label set "{a=\"b\"}"
  };
  Family* find(const std::string& name);
  const Family* find(const std::string& name) const;

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

// Default latency buckets in seconds (1 ms .. 120 s).
std::vector<double> latency_buckets_seconds();

}  // namespace arc
