// Benchmark runs the user made, kept as one JSON file under the XDG data folder
// (~/.local/share/<org>/<app>/benchmarks.json): each run's model, engine URL, settings, date and
// results, so two runs can be compared later. A damaged file is reported, never fatal.
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include "BenchResult.h"

namespace arc::app {

// What the Benchmark page asks bench-serve to do.
struct BenchSettings {
  QString url;                                // the server, e.g. http://127.0.0.1:8080
  QString apiKey;                             // never saved in the history
  QString model;                              // empty: the server's first
  QString profile = QStringLiteral("seeds");  // "seeds" or "custom"
  QStringList prompts{QStringLiteral("prose"), QStringLiteral("code"), QStringLiteral("json")};
  QList<int> concurrency{1, 4, 6, 8};  // custom only
  int runs = 6;                        // custom only
  int maxTokens = 450;                 // custom only
  int longPromptTokens = 32768;        // 0 skips the prefill scenario

  // bench-serve's arguments (without the program); the seeds profile passes no method flags.
  QStringList arguments() const;
  QJsonObject toJson() const;  // without the API key
  static BenchSettings fromJson(const QJsonObject& o);
};

struct BenchRun {
  QString id;  // unique, from the start time
  QDateTime date;
  QString model;  // as the server reported it (from the results), else as asked
  QString build;  // the engine's version, when known
  BenchSettings settings;
  QList<BenchResult> results;
  QString error;  // a fatal error, when the run stopped

  QJsonObject toJson() const;
  static BenchRun fromJson(const QJsonObject& o);
  QString title() const;  // "2026-11-29 21:09 · model · URL", for lists
  // Exports: CSV (one row per scenario) and JSON (the run with its result lines).
  QByteArray toCsv() const;
  QByteArray toJsonBytes() const;
};

class BenchHistory {
 public:
  // The default file: QStandardPaths::AppDataLocation/benchmarks.json.
  static QString defaultPath();

  bool load(const QString& path, QString* error = nullptr);  // a missing file is an empty history
  bool save(const QString& path, QString* error = nullptr) const;

  const QList<BenchRun>& runs() const { return m_runs; }
  void add(const BenchRun& run);  // newest first
  void remove(int index);
  void setMaxRuns(int n) { m_maxRuns = n; }

 private:
  QList<BenchRun> m_runs;
  int m_maxRuns = 200;
};

}  // namespace arc::app
