#include "FitView.h"

#include <qcustomplot.h>
#include <QEvent>
#include <QVBoxLayout>

#include "PlotStyle.h"

namespace arc::app {

namespace {
constexpr double kGiB = double(1ll << 30);
const QColor kPartColors[FitView::PartCount] = {
    QColor(0x3b, 0x6e, 0xd0),  // weights
    QColor(0xf5, 0xa6, 0x23),  // KV
    QColor(0x8e, 0x5b, 0xc8),  // runtime
    QColor(0x8a, 0x8f, 0x98),  // reserve
    QColor(0x4c, 0xb0, 0x6a),  // headroom
};
}  // namespace

FitView::FitView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  m_plot = new QCustomPlot(this);
  m_plot->setMinimumHeight(220);
  layout->addWidget(m_plot);
  QCPBars* below = nullptr;
  for (int p = 0; p < PartCount; ++p) {
    m_bars[p] = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars[p]->setWidth(0.55);
    m_bars[p]->setPen(Qt::NoPen);
    m_bars[p]->setBrush(kPartColors[p]);
    if (below) m_bars[p]->moveAbove(below);
    below = m_bars[p];
  }
  m_usableLine = new QCPItemStraightLine(m_plot);
  m_usableLine->setPen(QPen(QColor(0xd0, 0x3b, 0x3b), 1.5, Qt::DashLine));
  m_plot->legend->setVisible(true);
  // Its own row under the plot, so the legend never hides a bar or the usable-memory line.
  placeLegendBelow(m_plot, PartCount);
  m_plot->xAxis->grid()->setVisible(false);
  retranslate();
  applyColors();
  setSummary({});
}

void FitView::retranslate() {
  const QString names[PartCount] = {tr("Weights"), tr("KV cache"), tr("Runtime"), tr("Reserve"),
                                    tr("Headroom")};
  for (int p = 0; p < PartCount; ++p) m_bars[p]->setName(names[p]);
  m_plot->yAxis->setLabel(tr("GiB per box"));
}

void FitView::applyColors() {
  applyPlotPalette(m_plot, palette());
  m_plot->xAxis->grid()->setVisible(false);
}

void FitView::changeEvent(QEvent* e) {
  if (e->type() == QEvent::PaletteChange) {
    applyColors();
    m_plot->replot();
  } else if (e->type() == QEvent::LanguageChange) {
    retranslate();
    setSummary(m_summary);
  }
  QWidget::changeEvent(e);
}

void FitView::setSummary(const FitSummary& summary) {
  m_summary = summary;
  QVector<double> keys;
  QVector<double> values[PartCount];
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  double top = 0, usable = 0;
  for (int b = 0; b < summary.perBox.size(); ++b) {
    const BoxUsage& u = summary.perBox[b];
    keys << b + 1;
    values[Weights] << u.weightsBytes / kGiB;
    values[Kv] << u.kvBytes / kGiB;
    values[Runtime] << u.runtimeBytes / kGiB;
    values[Reserve] << u.reserveBytes / kGiB;
    values[Headroom] << qMax(0.0, u.headroomBytes()) / kGiB;
    ticker->addTick(b + 1, tr("Box %1").arg(b + 1));
    top = qMax(
        top,
        qMax(u.usableBytes, u.weightsBytes + u.kvBytes + u.runtimeBytes + u.reserveBytes) / kGiB);
    usable = qMax(usable, u.usableBytes / kGiB);
  }
  for (int p = 0; p < PartCount; ++p) m_bars[p]->setData(keys, values[p], true);
  m_plot->xAxis->setTicker(ticker);
  m_plot->xAxis->setRange(0.4, qMax<qsizetype>(1, summary.perBox.size()) + 0.6);
  m_plot->yAxis->setRange(0, top > 0 ? top * 1.08 : 128);
  m_usableLine->setVisible(usable > 0);
  m_usableLine->point1->setCoords(0, usable);
  m_usableLine->point2->setCoords(1, usable);
  m_plot->replot();
}

double FitView::plottedGiB(Part part, int box) const {
  const auto data = m_bars[part]->data();
  const auto it = data->findBegin(box + 1, false);
  return it != data->constEnd() && qFuzzyCompare(it->key, double(box + 1)) ? it->value : -1;
}

double FitView::usableLineGiB() const {
  return m_usableLine->visible() ? m_usableLine->point1->coords().y() : 0;
}

}  // namespace arc::app
