// How close a build stays to a reference: published figures from the catalog (PublishedQuality)
// and the user's own measurements with `arclight-engine eval` (QualityRecord), kept per model
// file and reference in a JSON file of the app's data folder.
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace arc::app {

struct PublishedQuality {
  QString build;    // the catalog build it is about
  QString what;     // the check as published
  QString against;  // the reference ("BF16"); empty when none is named
  double kl = -1;   // mean KL divergence; -1: not published
  double top1Percent = -1;
  QString source;
};

struct QualityRecord {
  QString model;      // the measured file
  QString reference;  // the reference file (or saved logits)
  QString text;       // the evaluation text ("built-in" or a file)
  QDateTime measuredAt;
  double perplexity = 0;
  double referencePerplexity = 0;
  double klMean = -1;            // -1: no reference (perplexity only)
  double klLow = 0, klHigh = 0;  // 95% interval of the mean
  double klP99 = 0;
  double top1Percent = -1;
  qint64 tokensScored = 0;
  bool interrupted = false;  // stopped early: the figures cover what was measured

  // From `arclight-engine eval --json` output; an empty model on malformed input.
  static QualityRecord fromEvalJson(const QJsonObject& o, const QDateTime& at);
  QJsonObject toJson() const;
  static QualityRecord fromJson(const QJsonObject& o);
  // One line for the Models page: "KL 0.0123 (0.0119-0.0127) vs ref.gguf, top-1 97.1%, ...".
  QString summary() const;
};

class QualityStore {
 public:
  explicit QualityStore(QString fileName);
  static QString defaultFileName();  // <app data>/quality.json

  // Measurements of `modelPath`, newest first.
  QList<QualityRecord> forModel(const QString& modelPath) const;
  // Adds a record (replacing one of the same model, reference and text) and saves the file.
  bool add(const QualityRecord& r, QString* error = nullptr);

 private:
  void load();
  QString m_fileName;
  QList<QualityRecord> m_records;
};

}  // namespace arc::app
