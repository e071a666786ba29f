// The fit chart: one stacked bar per box (weights, KV, runtime, reserve, headroom) in GiB, with a
// dashed line at the usable memory. Parts past the usable line show the overcommit plainly.
#pragma once

#include <QWidget>

#include "FitSummary.h"

class QCustomPlot;
class QCPBars;
class QCPItemStraightLine;

namespace arc::app {

class FitView : public QWidget {
  Q_OBJECT
 public:
  enum Part { Weights = 0, Kv, Runtime, Reserve, Headroom, PartCount };

  explicit FitView(QWidget* parent = nullptr);
  void setSummary(const FitSummary& summary);
  const FitSummary& summary() const { return m_summary; }

  // What the chart plots, read back from the plot's own data (for tests): GiB.
  double plottedGiB(Part part, int box) const;
  double usableLineGiB() const;
  QCustomPlot* plot() const { return m_plot; }

 protected:
  void changeEvent(QEvent* e) override;

 private:
  void applyColors();
  void retranslate();

  QCustomPlot* m_plot = nullptr;
  QCPBars* m_bars[PartCount] = {};
  QCPItemStraightLine* m_usableLine = nullptr;
  FitSummary m_summary;
};

}  // namespace arc::app
