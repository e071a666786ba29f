#include "MonitorPage.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QDateTime>
#include <QFile>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "EngineSession.h"
#include "NumberFormat.h"
#include "PlotStyle.h"

namespace arc::app {

namespace {

const QColor kBlue(0x2f, 0x6f, 0xb5);
const QColor kOrange(0xe0, 0x7b, 0x24);
const QColor kGreen(0x3a, 0x9a, 0x4a);
const QColor kRed(0xc4, 0x3c, 0x3c);
const QColor kPurple(0x7a, 0x4f, 0xb0);
const QColor kRankColors[] = {kBlue,   kOrange,      kGreen,         kRed,
                              kPurple, Qt::darkCyan, Qt::darkYellow, Qt::darkGray};

double nowSeconds() {
  return double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
}

}  // namespace

MonitorPage::MonitorPage(EngineSession* session, QWidget* parent)
    : QWidget(parent),
      m_session(session),
      m_model(new MonitorModel(MonitorModel::kDefaultCapacity, this)) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Window:"), this));
  m_window = new QComboBox(this);
  for (int minutes : {1, 5, 15, 60}) m_window->addItem(tr("%1 min").arg(minutes), minutes);
  m_window->setCurrentIndex(1);
  bar->addWidget(m_window);
  m_pause = new QPushButton(tr("Pause"), this);
  m_pause->setCheckable(true);
  bar->addWidget(m_pause);
  auto* csv = new QPushButton(tr("Export CSV…"), this);
  auto* png = new QPushButton(tr("Export PNG…"), this);
  bar->addWidget(csv);
  bar->addWidget(png);
  m_summary = new QLabel(this);
  bar->addWidget(m_summary, 1);
  layout->addLayout(bar);
  m_readout = new QLabel(tr("Hover over a chart to read its values."), this);
  layout->addWidget(m_readout);

  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  m_chartsArea = new QWidget(scroll);
  auto* grid = new QGridLayout(m_chartsArea);
  grid->setContentsMargins(0, 0, 0, 0);
  scroll->setWidget(m_chartsArea);
  layout->addWidget(scroll, 1);

  // Decode tokens/s: the engine's aggregate once a second, each finished request as a point.
  Chart c = makeChart(tr("Decode tokens/s"), tr("tokens/s"));
  m_decode = addLine(c, tr("all requests"), kBlue);
  m_decodeRequests = addPoints(c, tr("per request"), kOrange);
  // Speculative decoding: how many drafts the model accepted (gaps where nothing was drafted).
  m_acceptance = addLine(c, tr("drafts accepted (%)"), kGreen, true);
  c.plot->yAxis2->setLabel(tr("accepted %"));
  c = makeChart(tr("Time to first token per request"), tr("ms"));
  m_ttft = addPoints(c, tr("request"), kBlue);
  m_ttftP50 = addLine(c, tr("p50"), kGreen);
  m_ttftP95 = addLine(c, tr("p95"), kRed);
  m_ttftP95->setPen(QPen(kRed, 1.5, Qt::DashLine));
  c = makeChart(tr("Prefill tokens/s"), tr("tokens/s"));
  m_prefill = addLine(c, tr("prefill"), kPurple);
  c = makeChart(tr("Requests"), tr("requests"));
  m_running = addLine(c, tr("running"), kBlue);
  m_waiting = addLine(c, tr("waiting"), kOrange);
  c = makeChart(tr("KV cache"), tr("blocks"));
  m_kvUsed = addLine(c, tr("blocks in use"), kBlue);
  m_kvCached = addLine(c, tr("blocks cached"), kGreen);
  m_prefixHit = addLine(c, tr("prefix-cache hit rate (%)"), kOrange, true);
  c.plot->yAxis2->setLabel(tr("hit rate %"));
  c = makeChart(tr("Memory per box"), tr("GiB"));
  c = makeChart(tr("All-reduce traffic and link utilisation"), tr("MiB/s"));
  m_allreduce = addLine(c, tr("all-reduce"), kBlue);
  m_linkUtil = addLine(c, tr("link utilisation (%)"), kRed, true);
  c.plot->yAxis2->setLabel(tr("utilisation %"));
  for (int i = 0; i < m_charts.size(); ++i) {
    m_charts[i].plot->setMinimumHeight(210);
    grid->addWidget(m_charts[i].plot, i / 2, i % 2);
  }

  m_replotTimer = new QTimer(this);
  m_replotTimer->setInterval(250);  // at most 4 replots a second, and only with new data
  connect(m_replotTimer, &QTimer::timeout, this, [this] {
    if (m_dirty && isVisible() && !m_paused) refresh();
  });
  m_replotTimer->start();

  connect(m_window, &QComboBox::currentIndexChanged, this, [this] {
    m_dirty = true;
    refresh();
  });
  connect(m_pause, &QPushButton::toggled, this, &MonitorPage::setPaused);
  connect(csv, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export visible data"),
                                                      QStringLiteral("arclight-monitor.csv"),
                                                      tr("CSV files (*.csv)"));
    if (!path.isEmpty() && !exportCsv(path))
      QMessageBox::warning(this, tr("Export"), tr("Could not write %1.").arg(path));
  });
  connect(png, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export charts"),
                                                      QStringLiteral("arclight-monitor.png"),
                                                      tr("PNG images (*.png)"));
    if (!path.isEmpty() && !exportPng(path))
      QMessageBox::warning(this, tr("Export"), tr("Could not write %1.").arg(path));
  });
  if (m_session) {
    EngineClient* client = m_session->client();
    connect(client, &EngineClient::statsReceived, this, [this](const StatsSnapshot& s) {
      m_model->addStats(s, nowSeconds());
      m_dirty = true;
    });
    connect(client, &EngineClient::requestRecorded, this, [this](const RequestRecord& r) {
      m_model->addRequest(r, nowSeconds());
      m_dirty = true;
    });
  }
  refresh();
}

MonitorPage::~MonitorPage() = default;

QList<QCustomPlot*> MonitorPage::plots() const {
  QList<QCustomPlot*> out;
  for (const Chart& c : m_charts) out << c.plot;
  return out;
}

void MonitorPage::changeEvent(QEvent* e) {
  if (e->type() == QEvent::PaletteChange || e->type() == QEvent::ApplicationPaletteChange)
    for (const Chart& c : m_charts) {
      applyPlotPalette(c.plot, palette());
      c.plot->replot(QCustomPlot::rpQueuedReplot);
    }
  QWidget::changeEvent(e);
}

MonitorPage::Chart MonitorPage::makeChart(const QString& title, const QString& yLabel) {
  Chart c;
  c.plot = new QCustomPlot(m_chartsArea);
  c.plot->setNoAntialiasingOnDrag(true);
  c.plot->setPlottingHint(QCP::phFastPolylines, true);
  c.plot->plotLayout()->insertRow(0);
  auto* titleElement = new QCPTextElement(c.plot, title, QFont(font().family(), 10, QFont::Bold));
  c.plot->plotLayout()->addElement(0, 0, titleElement);
  QSharedPointer<QCPAxisTickerDateTime> ticker(new QCPAxisTickerDateTime);
  ticker->setDateTimeFormat(QStringLiteral("HH:mm:ss"));
  ticker->setTickCount(5);
  c.plot->xAxis->setTicker(ticker);
  c.plot->yAxis->setLabel(yLabel);
  c.plot->legend->setVisible(true);
  c.plot->legend->setFont(QFont(font().family(), 8));
  placeLegendBelow(c.plot);  // under the plot: it never covers a line
  applyPlotPalette(c.plot, palette());
  c.tracer = new QCPItemTracer(c.plot);
  c.tracer->setStyle(QCPItemTracer::tsCircle);
  c.tracer->setSize(7);
  c.tracer->setVisible(false);
  c.noData = new QCPItemText(c.plot);
  c.noData->position->setType(QCPItemPosition::ptAxisRectRatio);
  c.noData->position->setCoords(0.5, 0.5);
  c.noData->setText(tr("no data"));
  c.noData->setColor(Qt::gray);
  c.noData->setFont(QFont(font().family(), 12));
  const int index = int(m_charts.size());
  connect(c.plot, &QCustomPlot::mouseMove, this,
          [this, index](QMouseEvent* e) { onMouseMove(index, e); });
  m_charts.append(c);
  return c;
}

QCPGraph* MonitorPage::addLine(const Chart& c, const QString& name, const QColor& color,
                               bool rightAxis) {
  QCPGraph* g = rightAxis ? c.plot->addGraph(c.plot->xAxis, c.plot->yAxis2) : c.plot->addGraph();
  if (rightAxis) c.plot->yAxis2->setVisible(true);
  g->setName(name);
  g->setPen(QPen(color, 1.5));
  g->setAdaptiveSampling(true);
  return g;
}

QCPGraph* MonitorPage::addPoints(const Chart& c, const QString& name, const QColor& color) {
  QCPGraph* g = c.plot->addGraph();
  g->setName(name);
  g->setLineStyle(QCPGraph::lsNone);
  g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, 5));
  g->setPen(QPen(color));
  return g;
}

void MonitorPage::setSeries(QCPGraph* g, MonitorModel::Metric m, int rank) {
  m_model->series(m, windowEnd(), windowSeconds(), m_keys, m_values, rank);
  g->setData(m_keys, m_values, true);
}

double MonitorPage::windowSeconds() const {
  return 60.0 * windowMinutes();
}

double MonitorPage::windowEnd() const {
  if (m_paused) return m_pausedEnd;
  const double latest = m_model->latestTime();
  return latest > 0 ? latest : nowSeconds();
}

int MonitorPage::windowMinutes() const {
  return m_window->currentData().toInt();
}

void MonitorPage::setWindowMinutes(int minutes) {
  const int i = m_window->findData(minutes);
  if (i >= 0) m_window->setCurrentIndex(i);
}

void MonitorPage::setPaused(bool paused) {
  if (paused && !m_paused) m_pausedEnd = windowEnd();
  m_paused = paused;
  m_pause->setChecked(paused);
  m_pause->setText(paused ? tr("Resume") : tr("Pause"));
  if (!paused) refresh();
}

void MonitorPage::refresh() {
  using M = MonitorModel::Metric;
  const double end = windowEnd();
  const double span = windowSeconds();
  setSeries(m_decode, M::DecodeTokensPerSec);
  m_model->requestDecode(end, span, m_keys, m_values);
  m_decodeRequests->setData(m_keys, m_values, true);
  m_model->requestTtft(end, span, m_keys, m_values);
  m_ttft->setData(m_keys, m_values, true);
  const double p50 = m_model->ttftPercentile(50, end, span);
  const double p95 = m_model->ttftPercentile(95, end, span);
  const int ttftCount = int(m_keys.size());
  const bool haveTtft = ttftCount > 0;
  // Percentile lines span the window: two points each.
  // Keys and values must have the same length: no TTFT yet means no line at all.
  const QVector<double> lineKeys = haveTtft ? QVector<double>{end - span, end} : QVector<double>{};
  m_ttftP50->setData(lineKeys, haveTtft ? QVector<double>{p50, p50} : QVector<double>{}, true);
  m_ttftP95->setData(lineKeys, haveTtft ? QVector<double>{p95, p95} : QVector<double>{}, true);
  if (!haveTtft) {
    m_ttftP50->data()->clear();
    m_ttftP95->data()->clear();
  }
  m_ttftP50->setName(haveTtft ? tr("p50 %1 ms").arg(decimal(p50, 0)) : tr("p50"));
  m_ttftP95->setName(haveTtft ? tr("p95 %1 ms").arg(decimal(p95, 0)) : tr("p95"));
  setSeries(m_prefill, M::PrefillTokensPerSec);
  setSeries(m_running, M::Running);
  setSeries(m_waiting, M::Waiting);
  setSeries(m_kvUsed, M::KvBlocksUsed);
  setSeries(m_kvCached, M::KvBlocksCached);
  setSeries(m_prefixHit, M::PrefixHitRatePercent);
  setSeries(m_acceptance, M::AcceptancePercent);
  const Chart& memChart = m_charts[5];
  while (m_memory.size() < m_model->rankCount()) {
    const int rank = int(m_memory.size());
    m_memory.append(addLine(memChart, tr("box %1").arg(rank + 1),
                            kRankColors[rank % int(std::size(kRankColors))]));
  }
  for (int r = 0; r < m_memory.size(); ++r) setSeries(m_memory[r], M::MemoryUsedGiB, r);
  setSeries(m_allreduce, M::AllreduceMiBPerSec);
  setSeries(m_linkUtil, M::LinkUtilizationPercent);

  for (const Chart& c : m_charts) {
    bool any = false;
    for (int i = 0; i < c.plot->graphCount(); ++i)
      any = any || !c.plot->graph(i)->data()->isEmpty();
    c.noData->setVisible(!any);
    c.plot->legend->setVisible(c.plot->graphCount() > 0);
    c.plot->xAxis->setRange(end - span, end);
    for (QCPAxis* axis : {c.plot->yAxis, c.plot->yAxis2}) {
      bool found = false;
      QCPRange range(0, 1);
      for (int i = 0; i < c.plot->graphCount(); ++i) {
        QCPGraph* g = c.plot->graph(i);
        if (g->valueAxis() != axis) continue;
        bool ok = false;
        const QCPRange r = g->getValueRange(ok, QCP::sdBoth, QCPRange(end - span, end));
        if (!ok) continue;
        range = found ? QCPRange(qMin(range.lower, r.lower), qMax(range.upper, r.upper)) : r;
        found = true;
      }
      // Counts and rates start at zero; a little headroom keeps the top line visible.
      axis->setRange(0, found && range.upper > 0 ? range.upper * 1.1 : 1);
    }
    c.plot->replot(QCustomPlot::rpQueuedReplot);
  }
  m_summary->setText(haveTtft
                         ? tr("TTFT p50 %1 ms, p95 %2 ms over %n request(s)", nullptr, ttftCount)
                               .arg(decimal(p50, 0))
                               .arg(decimal(p95, 0))
                         : tr("No finished requests in this window."));
  m_dirty = false;
}

void MonitorPage::onMouseMove(int chart, QMouseEvent* e) {
  const Chart& c = m_charts[chart];
  const double key = c.plot->xAxis->pixelToCoord(e->position().x());
  QStringList parts;
  QCPGraph* first = nullptr;
  for (int i = 0; i < c.plot->graphCount(); ++i) {
    QCPGraph* g = c.plot->graph(i);
    if (g->data()->isEmpty()) continue;
    auto it = g->data()->findBegin(key, true);
    if (it == g->data()->constEnd()) continue;
    if (!first) first = g;
    parts << QStringLiteral("%1 %2").arg(g->name()).arg(decimal(it->value, 1));
  }
  if (!first) {
    c.tracer->setVisible(false);
    m_readout->setText(tr("No data at this time."));
  } else {
    c.tracer->setGraph(first);
    c.tracer->setGraphKey(key);
    c.tracer->setInterpolating(false);
    c.tracer->setVisible(true);
    const QString time =
        QDateTime::fromMSecsSinceEpoch(qint64(key * 1000)).toString(QStringLiteral("HH:mm:ss"));
    m_readout->setText(tr("%1 — %2").arg(time, parts.join(QStringLiteral(", "))));
  }
  c.plot->replot(QCustomPlot::rpQueuedReplot);
}

QString MonitorPage::readoutText() const {
  return m_readout->text();
}

bool MonitorPage::exportCsv(const QString& path) const {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  return f.write(m_model->toCsv(windowEnd(), windowSeconds())) >= 0;
}

bool MonitorPage::exportPng(const QString& path) {
  refresh();
  for (const Chart& c : m_charts) c.plot->replot(QCustomPlot::rpImmediateRefresh);
  return m_chartsArea->grab().save(path, "PNG");
}

void MonitorPage::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (m_dirty && !m_paused) refresh();
}

}  // namespace arc::app
