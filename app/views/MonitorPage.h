// The Monitor page: live charts of the engine's /engine/events stream (MonitorModel holds the
// data), a time window (1, 5, 15, 60 minutes), pause, hover readouts, and export of the visible
// data as CSV and of the charts as PNG. Replots are throttled to a few per second and only while
// the page is visible; every series is handed to QCustomPlot as whole vectors.
#pragma once

#include <QVector>
#include <QWidget>

#include "MonitorModel.h"

class QCheckBox;
class QComboBox;
class QCPGraph;
class QCPItemText;
class QCPItemTracer;
class QCustomPlot;
class QLabel;
class QPushButton;
class QTimer;

namespace arc::app {

class EngineSession;

class MonitorPage : public QWidget {
  Q_OBJECT
 public:
  explicit MonitorPage(EngineSession* session, QWidget* parent = nullptr);
  ~MonitorPage() override;

  MonitorModel* model() const { return m_model; }
  void setWindowMinutes(int minutes);
  int windowMinutes() const;
  void setPaused(bool paused);
  bool isPaused() const { return m_paused; }
  // Redraws now (the page does this itself on a timer; tests call it before a screenshot).
  void refresh();
  bool exportCsv(const QString& path) const;
  bool exportPng(const QString& path);
  QString readoutText() const;
  QList<QCustomPlot*> plots() const;

 protected:
  void showEvent(QShowEvent* e) override;
  void changeEvent(QEvent* e) override;  // theme change: the charts follow the palette

 private:
  struct Chart {
    QCustomPlot* plot = nullptr;
    QCPItemTracer* tracer = nullptr;
    QCPItemText* noData = nullptr;
  };
  Chart makeChart(const QString& title, const QString& yLabel);
  QCPGraph* addLine(const Chart& c, const QString& name, const QColor& color,
                    bool rightAxis = false);
  QCPGraph* addPoints(const Chart& c, const QString& name, const QColor& color);
  void setSeries(QCPGraph* g, MonitorModel::Metric m, int rank = 0);
  void onMouseMove(int chart, QMouseEvent* e);
  double windowEnd() const;
  double windowSeconds() const;

  EngineSession* m_session;
  MonitorModel* m_model;
  QComboBox* m_window = nullptr;
  QPushButton* m_pause = nullptr;
  QLabel* m_summary = nullptr;
  QLabel* m_readout = nullptr;
  QWidget* m_chartsArea = nullptr;
  QTimer* m_replotTimer = nullptr;
  QList<Chart> m_charts;
  // Graphs by chart.
  QCPGraph* m_decode = nullptr;
  QCPGraph* m_decodeRequests = nullptr;
  QCPGraph* m_ttft = nullptr;
  QCPGraph* m_ttftP50 = nullptr;
  QCPGraph* m_ttftP95 = nullptr;
  QCPGraph* m_prefill = nullptr;
  QCPGraph* m_running = nullptr;
  QCPGraph* m_waiting = nullptr;
  QCPGraph* m_kvUsed = nullptr;
  QCPGraph* m_kvCached = nullptr;
  QCPGraph* m_prefixHit = nullptr;
  QCPGraph* m_acceptance = nullptr;
  QList<QCPGraph*> m_memory;  // one per rank, made as ranks appear
  QCPGraph* m_allreduce = nullptr;
  QCPGraph* m_linkUtil = nullptr;
  bool m_paused = false;
  bool m_dirty = true;
  double m_pausedEnd = 0;
  // Reused between replots so a refresh allocates nothing once warm.
  mutable QVector<double> m_keys, m_values;
};

}  // namespace arc::app
