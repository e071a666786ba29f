// The planning state of the Models page: the chosen model and build, the cluster settings (boxes,
// context, concurrency, KV dtype, reserve, usable memory per box) and the fit library's answer for
// them, recomputed whenever an input changes. All arithmetic is the fit library's (arc_fit).
#pragma once

#include <QObject>
#include <QStringList>

#include "CatalogEntry.h"
#include "FitSummary.h"

namespace arc::app {

struct FitInputs {
  int boxes = 1;                 // 1..4
  qint64 contextTokens = 32768;  // per sequence
  int concurrency = 1;           // sequences at full context at once
  QString kvDtype = QStringLiteral("f16");
  double reserveGiB = 4.0;   // kept free per box for the OS and other apps
  double usableGiB = 121.6;  // per box (GB10 default)
  int buildIndex = 0;        // which catalog build (quantization)
};

class FitController : public QObject {
  Q_OBJECT
 public:
  explicit FitController(QObject* parent = nullptr);

  static QStringList kvDtypes();  // the KV dtypes the fit library knows
  static bool available();        // false when the app was built without arc_fit

  void setEntry(const CatalogEntry& entry);
  const CatalogEntry& entry() const { return m_entry; }
  bool hasEntry() const { return !m_entry.id.isEmpty(); }
  void setInputs(const FitInputs& inputs);
  const FitInputs& inputs() const { return m_inputs; }

  const FitSummary& summary() const { return m_summary; }
  const QList<FitSummary>& boxTable() const { return m_table; }  // 1..4 boxes

  // The fit library's answer for any entry and inputs (used for the list's "fits" column).
  // The entry needs its fitModel (attachFitModels); without it the summary says why.
  static FitSummary compute(const CatalogEntry& entry, const FitInputs& inputs);
  // Reads the catalog with the fit library and gives each entry its model specs. Returns an
  // error message for a catalog the fit library refuses ("" when fine).
  static QString attachFitModels(QList<CatalogEntry>& entries, const QByteArray& catalogJson);
  // For a local GGUF file readable from this machine: exact tensor bytes from the file.
  static QString attachFitModel(CatalogEntry& localEntry);
  // For a GGUF file on a web server (the hub's resolve URL; split files: any part): the same
  // spec from the remote header, read through HTTP range requests (arc/fit_remote.h). Blocks
  // for the requests: call it off the GUI thread. Returns "" or why not; *bytesRead: header bytes.
  static QString attachRemoteFitModel(CatalogEntry& entry, const QString& url, const QString& token,
                                      qint64* bytesRead = nullptr);

 signals:
  void changed();

 private:
  void recompute();

  CatalogEntry m_entry;
  FitInputs m_inputs;
  FitSummary m_summary;
  QList<FitSummary> m_table;
};

}  // namespace arc::app
