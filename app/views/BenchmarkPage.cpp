#include "BenchmarkPage.h"

#include <qcustomplot.h>
#include <QButtonGroup>

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "BenchCompareModel.h"
#include "BenchHistoryModel.h"
#include "BenchPublished.h"
#include "BenchResultModel.h"
#include "BenchRunner.h"
#include "EngineSession.h"
#include "NumberFormat.h"
#include "PlotStyle.h"

namespace arc::app {

namespace {
QTableView* makeTable(QAbstractItemModel* model, QWidget* parent) {
  auto* t = new QTableView(parent);
  t->setModel(model);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setStretchLastSection(true);
  t->setAlternatingRowColors(true);
  return t;
}
}  // namespace

BenchmarkPage::BenchmarkPage(EngineSession* session, QWidget* parent)
    : QWidget(parent),
      m_session(session),
      m_runner(new BenchRunner(this)),
      m_results(new BenchResultModel(this)),
      m_historyModel(new BenchHistoryModel(this)),
      m_compare(new BenchCompareModel(this)) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;

  auto* target = new QGroupBox(tr("Server"), this);
  auto* tf = new QFormLayout(target);
  m_local = new QRadioButton(tr("The engine this app is connected to"), target);
  m_remote = new QRadioButton(tr("Another server (vLLM, llama-server, …)"), target);
  m_local->setChecked(true);
  auto* group = new QButtonGroup(this);
  group->addButton(m_local);
  group->addButton(m_remote);
  tf->addRow(m_local);
  tf->addRow(m_remote);
  m_url = new QLineEdit(target);
  m_url->setPlaceholderText(QStringLiteral("http://127.0.0.1:8000"));
  tf->addRow(tr("URL:"), m_url);
  m_apiKey = new QLineEdit(target);
  m_apiKey->setEchoMode(QLineEdit::Password);
  tf->addRow(tr("API key:"), m_apiKey);
  m_model = new QLineEdit(target);
  m_model->setPlaceholderText(tr("the server's first model"));
  tf->addRow(tr("Model:"), m_model);
  top->addWidget(target, 1);

  auto* method = new QGroupBox(tr("Method"), this);
  auto* mf = new QFormLayout(method);
  m_profile = new QComboBox(method);
  m_profile->addItem(tr("Seeds (3 warm-ups, 6 runs, 450 tokens, 1/4/6/8 streams)"),
                     QStringLiteral("seeds"));
  m_profile->addItem(tr("Custom"), QStringLiteral("custom"));
  mf->addRow(tr("Profile:"), m_profile);
  auto* prompts = new QHBoxLayout;
  m_prose = new QCheckBox(tr("prose"), method);
  m_code = new QCheckBox(tr("code"), method);
  m_json = new QCheckBox(tr("JSON"), method);
  for (QCheckBox* b : {m_prose, m_code, m_json}) {
    b->setChecked(true);
    prompts->addWidget(b);
  }
  mf->addRow(tr("Prompts:"), prompts);
  m_concurrency = new QLineEdit(QStringLiteral("1,4,6,8"), method);
  mf->addRow(tr("Streams:"), m_concurrency);
  m_runs = new QSpinBox(method);
  m_runs->setRange(1, 100);
  m_runs->setValue(6);
  mf->addRow(tr("Measured runs:"), m_runs);
  m_maxTokens = new QSpinBox(method);
  m_maxTokens->setRange(16, 32768);
  m_maxTokens->setValue(450);
  mf->addRow(tr("Answer tokens:"), m_maxTokens);
  m_longPrompt = new QSpinBox(method);
  m_longPrompt->setRange(0, 1 << 20);
  m_longPrompt->setSingleStep(1024);
  m_longPrompt->setValue(defaultPrefillTokens(0));
  m_longPrompt->setSpecialValueText(tr("skip"));
  connect(m_longPrompt, &QSpinBox::valueChanged, this, [this] {
    if (m_longPrompt->hasFocus()) m_longPromptEdited = true;
  });
  mf->addRow(tr("Prefill prompt tokens:"), m_longPrompt);
  top->addWidget(method, 1);
  layout->addLayout(top);

  auto* buttons = new QHBoxLayout;
  m_run = new QPushButton(tr("Run benchmark"), this);
  m_cancel = new QPushButton(tr("Cancel"), this);
  auto* exportCsv = new QPushButton(tr("Export CSV…"), this);
  auto* exportJson = new QPushButton(tr("Export JSON…"), this);
  m_status = new QLabel(this);
  buttons->addWidget(m_run);
  buttons->addWidget(m_cancel);
  buttons->addWidget(exportCsv);
  buttons->addWidget(exportJson);
  buttons->addWidget(m_status, 1);
  layout->addLayout(buttons);

  m_tabs = new QTabWidget(this);
  auto* resultsTab = new QSplitter(Qt::Vertical, m_tabs);
  m_table = makeTable(m_results, resultsTab);
  auto* chartRow = new QSplitter(Qt::Horizontal, resultsTab);
  m_chart = new QCustomPlot(chartRow);
  m_chart->setMinimumHeight(220);
  // Decode (tens of tokens/s) and prefill (thousands) on their own axes, so both read.
  m_chart->yAxis->setLabel(tr("decode tokens/s"));
  m_chart->yAxis2->setLabel(tr("prefill tokens/s"));
  m_chart->legend->setVisible(true);
  placeLegendBelow(m_chart);
  applyPlotPalette(m_chart, palette());
  m_published = new QLabel(chartRow);
  m_published->setWordWrap(true);
  m_published->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  m_published->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_published->setMinimumWidth(260);
  chartRow->setStretchFactor(0, 3);
  chartRow->setStretchFactor(1, 1);
  chartRow->setSizes({700, 300});
  resultsTab->setStretchFactor(0, 1);
  resultsTab->setStretchFactor(1, 2);
  m_tabs->addTab(resultsTab, tr("Results"));
  m_progress = new QPlainTextEdit(m_tabs);
  m_progress->setReadOnly(true);
  m_progress->setMaximumBlockCount(5000);
  m_tabs->addTab(m_progress, tr("Progress"));
  auto* historyTab = new QWidget(m_tabs);
  auto* hl = new QVBoxLayout(historyTab);
  m_historyView = makeTable(m_historyModel, historyTab);
  m_historyView->setSelectionMode(QAbstractItemView::ExtendedSelection);
  hl->addWidget(m_historyView, 1);
  auto* hb = new QHBoxLayout;
  auto* show = new QPushButton(tr("Show"), historyTab);
  auto* compare = new QPushButton(tr("Compare two"), historyTab);
  auto* remove = new QPushButton(tr("Delete"), historyTab);
  hb->addWidget(show);
  hb->addWidget(compare);
  hb->addWidget(remove);
  hb->addStretch(1);
  hl->addLayout(hb);
  m_compareView = makeTable(m_compare, historyTab);
  hl->addWidget(m_compareView, 1);
  m_tabs->addTab(historyTab, tr("History"));
  layout->addWidget(m_tabs, 1);

  connect(m_profile, &QComboBox::currentIndexChanged, this, &BenchmarkPage::updateEnabled);
  connect(m_local, &QRadioButton::toggled, this, &BenchmarkPage::updateEnabled);
  connect(m_run, &QPushButton::clicked, this, &BenchmarkPage::startRun);
  connect(m_cancel, &QPushButton::clicked, m_runner, &BenchRunner::cancel);
  connect(exportCsv, &QPushButton::clicked, this, [this] { exportCurrent(false); });
  connect(exportJson, &QPushButton::clicked, this, [this] { exportCurrent(true); });
  connect(m_runner, &BenchRunner::progress, this,
          [this](const QString& line) { m_progress->appendPlainText(line); });
  connect(m_runner, &BenchRunner::resultReady, this, [this](const BenchResult& r) {
    m_results->append(r);
    m_table->resizeColumnsToContents();
    m_shown.results.append(r);
    if (m_shown.model.isEmpty() && !r.model.isEmpty()) {
      m_shown.model = r.model;
      updatePublished(r.model);
    }
    updateChart();
  });
  connect(m_runner, &BenchRunner::finished, this, &BenchmarkPage::onFinished);
  connect(show, &QPushButton::clicked, this, [this] {
    const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
    if (!rows.isEmpty()) showRun(*m_historyModel->runAt(rows.first().row()));
  });
  connect(compare, &QPushButton::clicked, this, [this] {
    const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
    if (rows.size() != 2 || !compareRows(rows[1].row(), rows[0].row()))
      m_status->setText(tr("Select two runs to compare."));
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
    if (rows.isEmpty()) return;
    m_history.remove(rows.first().row());
    m_history.save(m_historyPath);
    m_historyModel->setRuns(m_history.runs());
  });
  setHistoryPath(BenchHistory::defaultPath());
  QFile catalog(QStringLiteral(":/catalog/models.json"));
  if (catalog.open(QIODevice::ReadOnly)) setCatalog(parseCatalog(catalog.readAll()));
  if (m_session) {
    connect(m_session, &EngineSession::changed, this, &BenchmarkPage::onEngineChanged);
    onEngineChanged();
  }
  updateEnabled();
  updateChart();
  updatePublished(QString());
  m_table->resizeColumnsToContents();
}

int BenchmarkPage::defaultPrefillTokens(qint64 contextTokens) {
  constexpr int kDefault = 32768;
  // bench-serve's own margin: the template (256 tokens) and the prefill answer (16 tokens).
  constexpr qint64 kMargin = 256 + 16;
  if (contextTokens <= 0) return kDefault;
  return int(std::clamp<qint64>(contextTokens - kMargin, 0, kDefault));
}

void BenchmarkPage::onEngineChanged() {
  const qint64 ctx = m_session->client()->lastStatus().model.contextLength;
  if (ctx == m_servedContext) return;
  m_servedContext = ctx;
  m_longPrompt->setToolTip(
      ctx > 0
          ? tr("The loaded model's context holds %L1 tokens; the prompt is capped to fit.").arg(ctx)
          : QString());
  if (!m_longPromptEdited) m_longPrompt->setValue(defaultPrefillTokens(ctx));
}

void BenchmarkPage::changeEvent(QEvent* e) {
  if (e->type() == QEvent::PaletteChange || e->type() == QEvent::ApplicationPaletteChange) {
    applyPlotPalette(m_chart, palette());
    m_chart->replot(QCustomPlot::rpQueuedReplot);
  }
  QWidget::changeEvent(e);
}

BenchmarkPage::~BenchmarkPage() = default;

void BenchmarkPage::setHistoryPath(const QString& path) {
  m_historyPath = path;
  QString error;
  if (!m_history.load(path, &error))
    m_status->setText(tr("The benchmark history cannot be read: %1").arg(error));
  m_historyModel->setRuns(m_history.runs());
  // Opening the page shows the newest run, not an empty table, until a run is started.
  if (m_shown.results.isEmpty() && !m_history.runs().isEmpty()) showRun(m_history.runs().first());
}

void BenchmarkPage::setCatalog(const QList<CatalogEntry>& catalog) {
  m_catalog = catalog;
  updatePublished(m_shown.model);
}

void BenchmarkPage::setUrl(const QString& url) {
  m_remote->setChecked(true);
  m_url->setText(url);
}

BenchSettings BenchmarkPage::settings() const {
  BenchSettings s;
  if (m_local->isChecked() && m_session) {
    s.url = m_session->client()->baseUrl().toString();
    s.apiKey = AppSettings().apiKey();
  } else {
    s.url = m_url->text().trimmed();
    s.apiKey = m_apiKey->text();
  }
  s.model = m_model->text().trimmed();
  s.profile = m_profile->currentData().toString();
  s.prompts.clear();
  if (m_prose->isChecked()) s.prompts << QStringLiteral("prose");
  if (m_code->isChecked()) s.prompts << QStringLiteral("code");
  if (m_json->isChecked()) s.prompts << QStringLiteral("json");
  s.concurrency.clear();
  for (const QString& part : m_concurrency->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    bool ok = false;
    const int c = part.trimmed().toInt(&ok);
    if (ok && c > 0) s.concurrency << c;
  }
  s.runs = m_runs->value();
  s.maxTokens = m_maxTokens->value();
  s.longPromptTokens = m_longPrompt->value();
  return s;
}

void BenchmarkPage::updateEnabled() {
  const bool custom = m_profile->currentData().toString() == QLatin1String("custom");
  for (QWidget* w : std::initializer_list<QWidget*>{m_concurrency, m_runs, m_maxTokens})
    w->setEnabled(custom);
  m_url->setEnabled(m_remote->isChecked());
  m_apiKey->setEnabled(m_remote->isChecked());
  const bool running = m_runner->isRunning();
  m_run->setEnabled(!running);
  m_cancel->setEnabled(running);
}

void BenchmarkPage::startRun() {
  const BenchSettings s = settings();
  if (s.prompts.isEmpty()) {
    m_status->setText(tr("Choose at least one prompt set."));
    return;
  }
  m_results->clear();
  m_progress->clear();
  m_shown = BenchRun{};
  m_shown.settings = s;
  m_shown.model = s.model;
  updateChart();
  updatePublished(s.model);
  if (m_runner->start(s)) {
    m_status->setText(tr("Running against %1…").arg(s.url));
    m_tabs->setCurrentIndex(0);
  }
  updateEnabled();
}

void BenchmarkPage::onFinished(bool ok, const QString& message) {
  m_status->setText(ok ? tr("Done: %1").arg(message) : tr("Stopped: %1").arg(message));
  BenchRun run = m_runner->run();
  if (m_session) run.build = m_session->engineVersion();
  if (!run.results.isEmpty()) {
    m_history.add(run);
    QString error;
    if (!m_history.save(m_historyPath, &error))
      m_status->setText(tr("The run could not be saved: %1").arg(error));
    m_historyModel->setRuns(m_history.runs());
  }
  m_shown = run;
  updateEnabled();
}

void BenchmarkPage::showRun(const BenchRun& run) {
  m_shown = run;
  m_results->setResults(run.results);
  m_table->resizeColumnsToContents();
  updateChart();
  updatePublished(run.model);
  m_tabs->setCurrentIndex(0);
}

bool BenchmarkPage::compareRows(int a, int b) {
  const BenchRun* ra = m_historyModel->runAt(a);
  const BenchRun* rb = m_historyModel->runAt(b);
  if (!ra || !rb || a == b) return false;
  m_compare->setRuns(*ra, *rb);
  m_compareView->resizeColumnsToContents();
  return true;
}

QString BenchmarkPage::progressText() const {
  return m_progress->toPlainText();
}

QString BenchmarkPage::publishedText() const {
  return m_published->text();
}

void BenchmarkPage::updatePublished(const QString& model) {
  const CatalogEntry* e = matchCatalogEntry(m_catalog, model);
  if (!e) {
    m_published->setText(model.isEmpty()
                             ? tr("Published figures for the model appear here once it is known.")
                             : tr("No published figures for %1 in the catalog.").arg(model));
    updateChart();
    return;
  }
  QString html =
      tr("<b>Published figures for %1</b> (decode tokens/s):").arg(e->name.toHtmlEscaped());
  html += QStringLiteral("<ul>");
  for (const PublishedSpeed& s : e->speeds)
    html += QStringLiteral("<li>%1: <b>%2</b><br/><small>%3</small></li>")
                .arg(s.what.toHtmlEscaped())
                .arg(decimal(s.tokensPerSec, 1))
                .arg(s.source.toHtmlEscaped());
  html += QStringLiteral("</ul>");
  if (e->speeds.isEmpty()) html = tr("The catalog has no published figures for %1.").arg(e->name);
  m_published->setText(html);
  updateChart();
}

void BenchmarkPage::updateChart() {
  m_chart->clearPlottables();
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  QVector<double> keys, values, prefillKeys, prefillValues, pubKeys, pubValues;
  double key = 1;
  for (const BenchResult& r : m_shown.results) {
    const bool prefill = r.scenario == QLatin1String("prefill");
    (prefill ? prefillKeys : keys) << key;
    (prefill ? prefillValues : values) << BenchCompareModel::rateOf(r);
    ticker->addTick(key, prefill ? tr("prefill")
                                 : tr("%1\n%n stream(s)", nullptr, r.concurrency).arg(r.scenario));
    key += 1;
  }
  if (const CatalogEntry* e = matchCatalogEntry(m_catalog, m_shown.model)) {
    for (const PublishedSpeed& s : e->speeds) {
      pubKeys << key;
      pubValues << s.tokensPerSec;
      ticker->addTick(key, tr("published\n%1").arg(s.what.section(QLatin1Char(','), 0, 1)));
      key += 1;
    }
  }
  auto bars = [this](QCPAxis* valueAxis, const QString& name, const QColor& color,
                     const QVector<double>& k, const QVector<double>& v) {
    auto* b = new QCPBars(m_chart->xAxis, valueAxis);
    b->setName(name);
    b->setBrush(color);
    b->setPen(Qt::NoPen);
    b->setWidth(0.6);
    b->setData(k, v, true);
    return b;
  };
  bars(m_chart->yAxis, tr("decode, measured (median)"), QColor(0x2f, 0x6f, 0xb5), keys, values);
  QCPBars* published =
      bars(m_chart->yAxis, tr("decode, published"), QColor(0x9a, 0x9a, 0x9a), pubKeys, pubValues);
  published->removeFromLegend();
  if (!pubValues.isEmpty()) published->addToLegend();
  QCPBars* prefill = bars(m_chart->yAxis2, tr("prefill, measured (median, right axis)"),
                          QColor(0xe0, 0x7b, 0x24), prefillKeys, prefillValues);
  const bool hasPrefill = !prefillValues.isEmpty();
  if (!hasPrefill) prefill->removeFromLegend();
  m_chart->yAxis2->setVisible(hasPrefill);
  m_chart->xAxis->setTicker(ticker);
  m_chart->xAxis->setRange(0.4, qMax(key - 0.4, 1.6));
  double top = 1, prefillTop = 1;
  for (double v : values + pubValues) top = qMax(top, v);
  for (double v : prefillValues) prefillTop = qMax(prefillTop, v);
  m_chart->yAxis->setRange(0, top * 1.1);
  m_chart->yAxis2->setRange(0, prefillTop * 1.1);
  applyPlotPalette(m_chart, palette());  // the new axis and bars in the theme's colours
  m_chart->replot(QCustomPlot::rpQueuedReplot);
}

void BenchmarkPage::exportCurrent(bool json) {
  if (m_shown.results.isEmpty()) {
    m_status->setText(tr("No results to export."));
    return;
  }
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export results"),
      json ? QStringLiteral("arclight-bench.json") : QStringLiteral("arclight-bench.csv"),
      json ? tr("JSON files (*.json)") : tr("CSV files (*.csv)"));
  if (path.isEmpty()) return;
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
      f.write(json ? m_shown.toJsonBytes() : m_shown.toCsv()) < 0)
    QMessageBox::warning(this, tr("Export"), tr("Could not write %1.").arg(path));
}

}  // namespace arc::app
