// The Benchmark page: runs `arclight-engine bench-serve` (BenchRunner) against the local engine or
// any URL, shows progress and results as they arrive (table and a tokens/s chart), keeps a history
// of runs (BenchHistory, saved under the XDG data folder), compares two runs side by side, exports
// CSV/JSON, and shows the catalog's published figures for the same model next to the measured ones.
#pragma once

#include <QWidget>

#include "BenchHistory.h"
#include "CatalogEntry.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTableView;
class QTabWidget;

namespace arc::app {

class BenchCompareModel;
class BenchHistoryModel;
class BenchResultModel;
class BenchRunner;
class EngineSession;

class BenchmarkPage : public QWidget {
  Q_OBJECT
 public:
  explicit BenchmarkPage(EngineSession* session, QWidget* parent = nullptr);
  ~BenchmarkPage() override;

  BenchRunner* runner() const { return m_runner; }
  BenchResultModel* resultModel() const { return m_results; }
  BenchHistoryModel* historyModel() const { return m_historyModel; }
  BenchCompareModel* compareModel() const { return m_compare; }
  // Where the history lives (tests point it at a temporary file) and the catalog to match.
  void setHistoryPath(const QString& path);
  void setCatalog(const QList<CatalogEntry>& catalog);
  // The settings the form shows now.
  BenchSettings settings() const;
  void setUrl(const QString& url);  // switches the target to "URL"
  void startRun();
  void showRun(const BenchRun& run);
  bool compareRows(int a, int b);
  QString progressText() const;
  QString publishedText() const;
  QCustomPlot* chart() const { return m_chart; }
  // The prefill prompt size for a served context of `contextTokens` (0: unknown): 32k, capped
  // so the prompt and its answer fit, as the engine's bench-serve caps it.
  static int defaultPrefillTokens(qint64 contextTokens);

 protected:
  void changeEvent(QEvent* e) override;  // theme change: the chart follows the palette

 private:
  void onEngineChanged();
  void updateChart();
  void updatePublished(const QString& model);
  void updateEnabled();
  void onFinished(bool ok, const QString& message);
  void exportCurrent(bool json);

  EngineSession* m_session;
  BenchRunner* m_runner;
  BenchResultModel* m_results;
  BenchHistoryModel* m_historyModel;
  BenchCompareModel* m_compare;
  BenchHistory m_history;
  QString m_historyPath;
  BenchRun m_shown;  // the run the table shows (current or from history)
  QList<CatalogEntry> m_catalog;

  QRadioButton* m_local = nullptr;
  QRadioButton* m_remote = nullptr;
  QLineEdit* m_url = nullptr;
  QLineEdit* m_apiKey = nullptr;
  QLineEdit* m_model = nullptr;
  QComboBox* m_profile = nullptr;
  QCheckBox* m_prose = nullptr;
  QCheckBox* m_code = nullptr;
  QCheckBox* m_json = nullptr;
  QLineEdit* m_concurrency = nullptr;
  QSpinBox* m_runs = nullptr;
  QSpinBox* m_maxTokens = nullptr;
  QSpinBox* m_longPrompt = nullptr;
  bool m_longPromptEdited = false;  // the user chose a size: the loaded context no longer sets it
  qint64 m_servedContext = 0;
  QPushButton* m_run = nullptr;
  QPushButton* m_cancel = nullptr;
  QLabel* m_status = nullptr;
  QTabWidget* m_tabs = nullptr;
  QTableView* m_table = nullptr;
  QCustomPlot* m_chart = nullptr;
  QLabel* m_published = nullptr;
  QPlainTextEdit* m_progress = nullptr;
  QTableView* m_historyView = nullptr;
  QTableView* m_compareView = nullptr;
};

}  // namespace arc::app
