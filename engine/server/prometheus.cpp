#include <cmath>
#include <cstdio>
#include <sstream>

#include "arc/metrics.h"

namespace arc {
namespace {

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string label_key(const Labels& labels) {
  if (labels.empty()) return "";
  std::string s = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) s += ",";
    s += labels[i].first + "=\"" + escape_label(labels[i].second) + "\"";
  }
  return s + "}";
}

// Adds `le` to an existing label set.
std::string with_le(const std::string& key, const std::string& le) {
  std::string l = "le=\"" + le + "\"";
  if (key.empty()) return "{" + l + "}";
  return key.substr(0, key.size() - 1) + "," + l + "}";
}

std::string num(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

std::vector<double> latency_buckets_seconds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
}

MetricsRegistry::Family* MetricsRegistry::find(const std::string& name) {
  auto it = families_.find(name);
  return it == families_.end() ? nullptr : &it->second;
}
const MetricsRegistry::Family* MetricsRegistry::find(const std::string& name) const {
  auto it = families_.find(name);
  return it == families_.end() ? nullptr : &it->second;
}

void MetricsRegistry::add_counter(const std::string& name, const std::string& help) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& f = families_[name];
  f.kind = Kind::kCounter;
  f.help = help;
}

void MetricsRegistry::add_gauge(const std::string& name, const std::string& help) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& f = families_[name];
  f.kind = Kind::kGauge;
  f.help = help;
}

void MetricsRegistry::add_histogram(const std::string& name, const std::string& help,
                                    std::vector<double> buckets) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& f = families_[name];
  f.kind = Kind::kHistogram;
  f.help = help;
  f.bounds = std::move(buckets);
}

void MetricsRegistry::inc(const std::string& name, double by, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Family* f = find(name)) f->series[label_key(labels)].value += by;
}

void MetricsRegistry::set(const std::string& name, double value, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Family* f = find(name)) f->series[label_key(labels)].value = value;
}

void MetricsRegistry::observe(const std::string& name, double value, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Family* f = find(name);
  if (f == nullptr || f->kind != Kind::kHistogram) return;
  Series& s = f->series[label_key(labels)];
  if (s.buckets.size() != f->bounds.size()) s.buckets.assign(f->bounds.size(), 0);
  for (size_t i = 0; i < f->bounds.size(); ++i) {
    if (value <= f->bounds[i]) {
      s.buckets[i]++;
      break;
    }
  }
  s.count++;
  s.sum += value;
}

double MetricsRegistry::value(const std::string& name, const Labels& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Family* f = find(name);
  if (f == nullptr) return 0;
  auto it = f->series.find(label_key(labels));
  return it == f->series.end() ? 0 : it->second.value;
}

uint64_t MetricsRegistry::histogram_count(const std::string& name, const Labels& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Family* f = find(name);
  if (f == nullptr) return 0;
  auto it = f->series.find(label_key(labels));
  return it == f->series.end() ? 0 : it->second.count;
}

std::string MetricsRegistry::render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream out;
  for (const auto& [name, f] : families_) {
    const char* type = f.kind == Kind::kCounter ? "counter"
                       : f.kind == Kind::kGauge ? "gauge"
                                                : "histogram";
    out << "# HELP " << name << " " << f.help << "\n# TYPE " << name << " " << type << "\n";
    if (f.kind != Kind::kHistogram) {
      // A family with no series yet still shows a zero so dashboards have a line to draw.
      if (f.series.empty()) out << name << " 0\n";
      for (const auto& [key, s] : f.series) out << name << key << " " << num(s.value) << "\n";
      continue;
    }
    auto emit = [&](const std::string& key, const Series* s) {
      uint64_t cumulative = 0;
      for (size_t i = 0; i < f.bounds.size(); ++i) {
        if (s && i < s->buckets.size()) cumulative += s->buckets[i];
        out << name << "_bucket" << with_le(key, num(f.bounds[i])) << " " << cumulative << "\n";
      }
      uint64_t count = s ? s->count : 0;
      out << name << "_bucket" << with_le(key, "+Inf") << " " << count << "\n";
      out << name << "_sum" << key << " " << num(s ? s->sum : 0) << "\n";
      out << name << "_count" << key << " " << count << "\n";
    };
    if (f.series.empty()) emit("", nullptr);
    for (const auto& [key, s] : f.series) emit(key, &s);
  }
  return out.str();
}

}  // namespace arc
