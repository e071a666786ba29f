// One scenario's result as `arclight-engine bench-serve --json` prints it (one JSON line per
// scenario on stdout):
//   {"scenario":"prose", "concurrency":1, "runs":6, "requests":6, "errors":0,
//    "ttft_ms":{"median","mean","min","max","p50","p90","p99","count"}, "tpot_ms":{...},
//    "itl_ms":{...}, "e2e_ms":{...}, "output_tokens_per_s":{...}, "total_tokens_per_s":123.4,
//    "prefill_tokens_per_s":{...} (prefill scenario), "prompt_tokens":..., "output_tokens":...,
//    "server":URL, "model":..., "profile":"seeds", "started_at":"2026-11-29T21:09:10Z",
//    "first_error":"..." (when some failed)}
// A line with "error" and no "scenario" is a fatal error of the whole run. Summaries may be null.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace arc::app {

struct BenchSummary {
  bool valid = false;  // false: the field was null or missing
  double median = 0, mean = 0, min = 0, max = 0, p90 = 0, p99 = 0;
  int count = 0;
  static BenchSummary fromJson(const QJsonValue& v);
  QJsonValue toJson() const;
};

struct BenchResult {
  QString scenario;  // "prose", "code", "json", "prefill"
  int concurrency = 1;
  int runs = 0;
  int requests = 0;
  int errors = 0;
  QString firstError;
  BenchSummary ttftMs, tpotMs, itlMs, e2eMs, outputTokensPerSec, prefillTokensPerSec;
  double totalTokensPerSec = 0;  // median aggregate of the waves (0 when absent)
  double promptTokens = 0, outputTokens = 0;
  QString server, model, profile, startedAt;
  QJsonObject raw;  // the line as read, kept for JSON export and history

  static BenchResult fromJson(const QJsonObject& o);
  QJsonObject toJson() const { return raw; }
  QString key() const;  // "prose @1": identifies the scenario for comparisons
};

// What one stdout line of bench-serve is.
struct BenchLine {
  enum class Kind { Result, FatalError, Invalid };
  Kind kind = Kind::Invalid;
  BenchResult result;  // Result
  QString error;       // FatalError: the run's message; Invalid: why the line was not understood
};
BenchLine parseBenchLine(const QByteArray& line);

}  // namespace arc::app
