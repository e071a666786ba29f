#include "PlotStyle.h"

#include <qcustomplot.h>

namespace arc::app {

void applyPlotPalette(QCustomPlot* plot, const QPalette& pal) {
  const QColor fg = pal.color(QPalette::WindowText);
  const QColor bg = pal.color(QPalette::Base);
  QColor grid = pal.color(QPalette::Mid);
  plot->setBackground(bg);
  plot->setLocale(QLocale());  // tick labels with the language's decimal comma
  plot->legend->setBrush(bg);
  plot->legend->setTextColor(fg);
  plot->legend->setBorderPen(Qt::NoPen);
  for (QCPAxisRect* r : plot->axisRects())
    for (QCPAxis* a : r->axes()) {
      a->setBasePen(QPen(fg));
      a->setTickPen(QPen(fg));
      a->setSubTickPen(QPen(fg));
      a->setTickLabelColor(fg);
      a->setLabelColor(fg);
      a->grid()->setPen(QPen(grid, 0, Qt::DotLine));
      a->grid()->setZeroLinePen(QPen(grid, 0, Qt::SolidLine));
    }
  for (int i = 0; i < plot->plotLayout()->elementCount(); ++i)
    if (auto* t = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)))
      t->setTextColor(fg);
}

void placeLegendBelow(QCustomPlot* plot, int columns) {
  QCPLegend* legend = plot->legend;
  if (legend->layout() == plot->plotLayout()) return;  // already there
  if (QCPLayoutInset* inset = plot->axisRect()->insetLayout(); inset->take(legend))
    inset->simplify();
  QCPLayoutGrid* layout = plot->plotLayout();
  const int row = layout->rowCount();
  layout->insertRow(row);
  layout->addElement(row, 0, legend);
  layout->setRowStretchFactor(row, 0.001);  // as tall as its items, no more
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(columns);
  legend->setMargins(QMargins(4, 0, 4, 2));
}

}  // namespace arc::app
