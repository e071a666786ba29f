#include "ModelsPage.h"

#include <QFileInfo>

#include <QFileDialog>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "BoxTableModel.h"
#include "EngineProcess.h"
#include "EngineSession.h"
#include "FitView.h"
#include "HubBrowser.h"
#include "ModelFilterProxy.h"
#include "ModelListModel.h"
#include "NumberFormat.h"

namespace arc::app {

namespace {
QTableView* makeTable(QAbstractItemModel* model, QWidget* parent) {
  auto* view = new QTableView(parent);
  view->setModel(model);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setSelectionMode(QAbstractItemView::SingleSelection);
  view->setSortingEnabled(true);
  view->verticalHeader()->hide();
  view->setWordWrap(false);
  view->horizontalHeader()->setStretchLastSection(true);
  view->sortByColumn(0, Qt::AscendingOrder);
  view->setAlternatingRowColors(true);
  view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  return view;
}
}  // namespace

ModelsPage::ModelsPage(EngineSession* session, QWidget* parent)
    : QWidget(parent),
      m_session(session),
      m_catalog(new ModelListModel(this)),
      m_local(new ModelListModel(this)),
      m_catalogProxy(new ModelFilterProxy(this)),
      m_localProxy(new ModelFilterProxy(this)),
      m_boxTable(new BoxTableModel(this)) {
  m_catalogProxy->setSourceModel(m_catalog);
  m_localProxy->setSourceModel(m_local);
  auto* layout = new QHBoxLayout(this);
  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(buildListPane());
  splitter->addWidget(buildDetailPane());
  splitter->setStretchFactor(0, 2);
  splitter->setStretchFactor(1, 3);
  splitter->setSizes({560, 720});  // the list wide enough for its figures (params, size, fit)
  layout->addWidget(splitter);

  connect(&m_fit, &FitController::changed, this, &ModelsPage::updateFitDisplay);
  connect(m_session, &EngineSession::changed, this, &ModelsPage::updateLoadControls);
  connect(m_session, &EngineSession::loadProgressChanged, this, &ModelsPage::updateLoadControls);
  connect(m_session, &EngineSession::loadFinished, this, [this](bool ok, const QString& msg) {
    m_loadMessage->setText(ok ? tr("Loaded.") : msg);
    updateLoadControls();
  });
  connect(m_session->client(), &EngineClient::connectionChanged, this,
          [this](EngineClient::Connection c) {
            if (c == EngineClient::Connection::Connected) m_session->client()->fetchLocalModels();
            updateLoadControls();
          });
  connect(m_session->client(), &EngineClient::localModelsReceived, this,
          &ModelsPage::onLocalModels);
  connect(m_session, &EngineSession::demoModelReady, this, [this](const QString& path) {
    m_localMessage->setText(tr("Demo model written to %1 (random weights: its answers are "
                               "noise).")
                                .arg(QDir::toNativeSeparators(path)));
    m_demo->setEnabled(true);
    if (m_session->client()->connection() != EngineClient::Connection::Connected) return;
    m_session->client()->fetchLocalModels();  // the demo file shows in Local files
    const QString loaded = m_session->loadedModel();
    if (!loaded.isEmpty() &&
        QMessageBox::question(this, tr("Load the demo model?"),
                              tr("%1 is loaded. Replace it with the demo model (random weights, "
                                 "for trying the app)?")
                                  .arg(loaded)) != QMessageBox::Yes)
      return;
    m_session->load(path);
  });
  connect(m_session, &EngineSession::demoModelFailed, this, [this](const QString& reason) {
    m_localMessage->setText(tr("Demo model unavailable: %1").arg(reason));
    m_demo->setEnabled(true);
  });

  setInputs(FitInputs{});
  updateLoadControls();
  loadCatalog();
}

QWidget* ModelsPage::buildListPane() {
  auto* pane = new QWidget(this);
  auto* v = new QVBoxLayout(pane);
  v->setContentsMargins(0, 0, 0, 0);
  m_search = new QLineEdit(pane);
  m_search->setPlaceholderText(tr("Search models…"));
  m_search->setClearButtonEnabled(true);
  v->addWidget(m_search);
  auto* filters = new QHBoxLayout;
  m_family = new QComboBox(pane);
  m_size = new QComboBox(pane);
  m_size->addItem(tr("Any size"), int(SizeClass::Any));
  m_size->addItem(tr("Under 30 B"), int(SizeClass::Small));
  m_size->addItem(tr("30–150 B"), int(SizeClass::Medium));
  m_size->addItem(tr("Over 150 B"), int(SizeClass::Large));
  m_fitsOnly = new QCheckBox(tr("Fits only"), pane);
  filters->addWidget(m_family, 1);
  filters->addWidget(m_size, 1);
  filters->addWidget(m_fitsOnly);
  v->addLayout(filters);

  m_tabs = new QTabWidget(pane);
  auto* catalogTab = new QWidget(m_tabs);
  auto* cv = new QVBoxLayout(catalogTab);
  m_catalogView = makeTable(m_catalogProxy, catalogTab);
  cv->addWidget(m_catalogView);
  m_catalogMessage = new QLabel(catalogTab);
  m_catalogMessage->setWordWrap(true);
  m_catalogMessage->hide();
  cv->addWidget(m_catalogMessage);
  m_tabs->addTab(catalogTab, tr("Catalog"));

  auto* localTab = new QWidget(m_tabs);
  auto* lv = new QVBoxLayout(localTab);
  m_localView = makeTable(m_localProxy, localTab);
  lv->addWidget(m_localView);
  m_localMessage = new QLabel(localTab);
  m_localMessage->setWordWrap(true);
  lv->addWidget(m_localMessage);
  auto* localButtons = new QHBoxLayout;
  m_refresh = new QPushButton(tr("Refresh"), localTab);
  m_demo = new QPushButton(tr("Make a demo model (random weights)"), localTab);
  m_demo->setToolTip(
      tr("Writes a small model with random weights so loading, chat and the "
         "charts can be tried at once. Its answers are noise."));
  localButtons->addWidget(m_refresh);
  localButtons->addStretch(1);
  localButtons->addWidget(m_demo);
  lv->addLayout(localButtons);
  m_tabs->addTab(localTab, tr("Local files"));
  m_hub = new HubBrowser(m_tabs);
  m_tabs->addTab(m_hub, tr("Hugging Face"));
  connect(m_hub, &HubBrowser::downloadFinished, this, [this](bool ok, const QString&) {
    if (ok && m_session->client()->connection() == EngineClient::Connection::Connected)
      m_session->client()->fetchLocalModels();  // the new file shows in Local files
  });
  v->addWidget(m_tabs, 1);

  connect(m_search, &QLineEdit::textChanged, this, [this](const QString& t) {
    m_catalogProxy->setSearchText(t);
    m_localProxy->setSearchText(t);
  });
  connect(m_family, &QComboBox::currentIndexChanged, this, [this] {
    m_catalogProxy->setFamily(m_family->currentData().toString());
    m_localProxy->setFamily(m_family->currentData().toString());
  });
  connect(m_size, &QComboBox::currentIndexChanged, this, [this] {
    m_catalogProxy->setSizeClass(SizeClass(m_size->currentData().toInt()));
    m_localProxy->setSizeClass(SizeClass(m_size->currentData().toInt()));
  });
  connect(m_fitsOnly, &QCheckBox::toggled, this, [this](bool on) {
    m_catalogProxy->setFitsOnly(on);
    m_localProxy->setFitsOnly(on);
  });
  for (QTableView* view : {m_catalogView, m_localView})
    connect(view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &ModelsPage::onSelectionChanged);
  connect(m_tabs, &QTabWidget::currentChanged, this, &ModelsPage::onSelectionChanged);
  connect(m_refresh, &QPushButton::clicked, this, [this] {
    if (m_session->client()->connection() == EngineClient::Connection::Connected)
      m_session->client()->fetchLocalModels();
    else
      m_localMessage->setText(tr("No engine connected: local files are listed by the engine."));
  });
  connect(m_demo, &QPushButton::clicked, this, &ModelsPage::makeDemoModel);
  updateFamilies();
  return pane;
}

QWidget* ModelsPage::buildDetailPane() {
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* pane = new QWidget(scroll);
  auto* v = new QVBoxLayout(pane);
  m_details = new QLabel(pane);
  m_details->setWordWrap(true);
  m_details->setTextFormat(Qt::RichText);
  m_details->setOpenExternalLinks(true);
  m_details->setTextInteractionFlags(Qt::TextBrowserInteraction);
  v->addWidget(m_details);

  auto* controls = new QGroupBox(tr("Cluster and workload"), pane);
  auto* form = new QFormLayout(controls);
  m_build = new QComboBox(controls);
  form->addRow(tr("Build:"), m_build);
  m_boxes = new QSpinBox(controls);
  m_boxes->setRange(1, 4);
  form->addRow(tr("Boxes:"), m_boxes);
  m_context = new QSpinBox(controls);
  m_context->setRange(512, 1 << 21);
  m_context->setSingleStep(4096);
  m_context->setSuffix(tr(" tokens"));
  form->addRow(tr("Context:"), m_context);
  m_concurrency = new QSpinBox(controls);
  m_concurrency->setRange(1, 256);
  form->addRow(tr("Concurrent sequences:"), m_concurrency);
  m_kvDtype = new QComboBox(controls);
  m_kvDtype->addItems(FitController::kvDtypes());
  form->addRow(tr("KV cache type:"), m_kvDtype);
  m_reserve = new QDoubleSpinBox(controls);
  m_reserve->setRange(0, 64);
  m_reserve->setDecimals(1);
  m_reserve->setSuffix(tr(" GiB"));
  form->addRow(tr("Reserve per box (OS, apps):"), m_reserve);
  m_usable = new QDoubleSpinBox(controls);
  m_usable->setRange(1, 2048);
  m_usable->setDecimals(1);
  m_usable->setSuffix(tr(" GiB"));
  form->addRow(tr("Usable memory per box:"), m_usable);
  v->addWidget(controls);

  m_verdict = new QLabel(pane);
  QFont big = m_verdict->font();
  big.setPointSizeF(big.pointSizeF() * 1.3);
  big.setBold(true);
  m_verdict->setFont(big);
  m_verdict->setWordWrap(true);
  v->addWidget(m_verdict);
  m_numbers = new QLabel(pane);
  m_numbers->setWordWrap(true);
  v->addWidget(m_numbers);
  m_fitView = new FitView(pane);
  v->addWidget(m_fitView, 1);
  m_boxTableView = makeTable(m_boxTable, pane);
  m_boxTableView->setSortingEnabled(false);
  m_boxTableView->setSelectionMode(QAbstractItemView::NoSelection);
  m_boxTableView->setMaximumHeight(150);
  // Columns as wide as their figures ("135.1 GiB of 121.6 GiB"); the last takes the rest.
  m_boxTableView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_boxTableView->horizontalHeader()->setStretchLastSection(true);
  v->addWidget(m_boxTableView);

  auto* loadRow = new QHBoxLayout;
  m_load = new QPushButton(tr("Load"), pane);
  m_unload = new QPushButton(tr("Unload"), pane);
  m_cancelLoad = new QPushButton(tr("Cancel load"), pane);
  m_cancelLoad->setToolTip(
      tr("Stop reading the weights; the model that was loaded before "
         "comes back"));
  m_cancelLoad->setVisible(false);
  m_progress = new QProgressBar(pane);
  m_progress->setRange(0, 1000);
  m_progress->setTextVisible(false);
  loadRow->addWidget(m_load);
  loadRow->addWidget(m_unload);
  loadRow->addWidget(m_cancelLoad);
  loadRow->addWidget(m_progress, 1);
  v->addLayout(loadRow);
  m_loadMessage = new QLabel(pane);
  m_loadMessage->setWordWrap(true);
  v->addWidget(m_loadMessage);

  // Quality: this file against a reference build of the same model (arclight-engine eval).
  auto* measureRow = new QHBoxLayout;
  m_measure = new QPushButton(tr("Measure quality…"), pane);
  m_measure->setToolTip(
      tr("KL divergence, top-1 agreement and perplexity of this file against "
         "a reference file of the same model, on the built-in text"));
  m_measureCancel = new QPushButton(tr("Stop"), pane);
  m_measureCancel->setVisible(false);
  measureRow->addWidget(m_measure);
  measureRow->addWidget(m_measureCancel);
  measureRow->addStretch(1);
  v->addLayout(measureRow);
  m_measureMessage = new QLabel(pane);
  m_measureMessage->setWordWrap(true);
  v->addWidget(m_measureMessage);
  m_qualityRunner = new QualityRunner(this);
  connect(m_measure, &QPushButton::clicked, this, &ModelsPage::measureQuality);
  connect(m_measureCancel, &QPushButton::clicked, m_qualityRunner, &QualityRunner::cancel);
  connect(m_qualityRunner, &QualityRunner::progress, m_measureMessage, &QLabel::setText);
  connect(m_qualityRunner, &QualityRunner::failed, this, [this](const QString& m) {
    m_measureMessage->setText(m);
    m_measureCancel->setVisible(false);
    updateLoadControls();
  });
  connect(m_qualityRunner, &QualityRunner::finished, this, [this](const QualityRecord& r) {
    QString error;
    m_measureMessage->setText(m_quality.add(r, &error)
                                  ? tr("Measured: %1").arg(r.summary())
                                  : tr("Measured, but not saved (%1): %2").arg(error, r.summary()));
    m_measureCancel->setVisible(false);
    showDetails(m_fit.entry());
    updateLoadControls();
  });

  for (QSpinBox* s : {m_boxes, m_context, m_concurrency})
    connect(s, &QSpinBox::valueChanged, this, &ModelsPage::onInputsEdited);
  for (QDoubleSpinBox* s : {m_reserve, m_usable})
    connect(s, &QDoubleSpinBox::valueChanged, this, &ModelsPage::onInputsEdited);
  for (QComboBox* c : {m_kvDtype, m_build})
    connect(c, &QComboBox::currentIndexChanged, this, &ModelsPage::onInputsEdited);
  connect(m_load, &QPushButton::clicked, this, &ModelsPage::loadSelected);
  connect(m_cancelLoad, &QPushButton::clicked, this, [this] {
    m_cancelLoad->setEnabled(false);
    m_loadMessage->setText(tr("Cancelling…"));
    m_session->cancelLoad();
  });
  connect(m_unload, &QPushButton::clicked, this, [this] { m_session->unload(); });
  scroll->setWidget(pane);
  return scroll;
}

bool ModelsPage::loadCatalog(const QString& path) {
  QFile f(path);
  QString error;
  QList<CatalogEntry> entries;
  if (!f.open(QIODevice::ReadOnly)) {
    error = tr("The model catalog is not part of this build (%1).").arg(path);
  } else {
    const QByteArray json = f.readAll();
    entries = parseCatalog(json, &error);
    if (error.isEmpty()) {
      const QString fitError = FitController::attachFitModels(entries, json);
      if (!fitError.isEmpty())
        error = tr("The fit calculator cannot read the catalog: %1").arg(fitError);
    }
  }
  m_catalog->setEntries(entries);
  m_hub->setCatalog(entries);
  m_catalogMessage->setVisible(!error.isEmpty());
  m_catalogMessage->setText(error);
  updateFamilies();
  updateFitsColumn();
  m_catalogView->resizeColumnsToContents();
  if (!entries.isEmpty() && !m_fit.hasEntry()) selectModel(entries.first().id);
  return error.isEmpty();
}

bool ModelsPage::selectModel(const QString& id) {
  for (auto [view, model, proxy, tab] : {std::tuple{m_catalogView, m_catalog, m_catalogProxy, 0},
                                         std::tuple{m_localView, m_local, m_localProxy, 1}}) {
    const int row = model->rowOf(id);
    if (row < 0) continue;
    const QModelIndex idx = proxy->mapFromSource(model->index(row, 0));
    if (!idx.isValid()) continue;
    m_tabs->setCurrentIndex(tab);
    view->setCurrentIndex(idx);
    onSelectionChanged();
    return true;
  }
  return false;
}

void ModelsPage::setInputs(const FitInputs& in) {
  m_updatingControls = true;
  m_boxes->setValue(in.boxes);
  m_context->setValue(int(qMin<qint64>(in.contextTokens, m_context->maximum())));
  m_concurrency->setValue(in.concurrency);
  m_kvDtype->setCurrentIndex(qMax(0, m_kvDtype->findText(in.kvDtype)));
  m_reserve->setValue(in.reserveGiB);
  m_usable->setValue(in.usableGiB);
  if (in.buildIndex < m_build->count()) m_build->setCurrentIndex(in.buildIndex);
  m_updatingControls = false;
  m_fit.setInputs(in);
  updateFitsColumn();
}

void ModelsPage::onInputsEdited() {
  if (m_updatingControls) return;
  FitInputs in = m_fit.inputs();
  in.boxes = m_boxes->value();
  in.contextTokens = m_context->value();
  in.concurrency = m_concurrency->value();
  in.kvDtype = m_kvDtype->currentText();
  in.reserveGiB = m_reserve->value();
  in.usableGiB = m_usable->value();
  in.buildIndex = qMax(0, m_build->currentIndex());
  m_fit.setInputs(in);
  updateFitsColumn();
}

void ModelsPage::onSelectionChanged() {
  const bool local = m_tabs->currentIndex() == 1;
  QTableView* view = local ? m_localView : m_catalogView;
  ModelFilterProxy* proxy = local ? m_localProxy : m_catalogProxy;
  ModelListModel* model = local ? m_local : m_catalog;
  const QModelIndex idx = proxy->mapToSource(view->currentIndex());
  const CatalogEntry* e = model->entryAt(idx.row());
  if (!e) return;
  m_updatingControls = true;
  m_build->clear();
  for (const CatalogBuild& b : e->builds) m_build->addItem(b.name);
  if (e->isLocal()) m_build->addItem(e->quant.isEmpty() ? tr("this file") : e->quant);
  m_build->setEnabled(m_build->count() > 1);
  m_updatingControls = false;
  FitInputs in = m_fit.inputs();
  in.buildIndex = 0;
  m_fit.setInputs(in);
  m_fit.setEntry(*e);
  // A file cannot run past its own context length; catalog entries are plans of any size.
  m_context->setMaximum(e->isLocal() && e->contextLength > 0
                            ? int(qMin<qint64>(e->contextLength, 1 << 21))
                            : 1 << 21);
  if (e->isLocal()) applyLocalDefaults(*e);
  showDetails(*e);
  updateLoadControls();
}

void ModelsPage::applyLocalDefaults(const CatalogEntry& e) {
  FitInputs in = m_fit.inputs();
  LoadSettings s;
  if (m_loadSettings.find(e.path, &s)) {
    if (s.contextTokens > 0) in.contextTokens = s.contextTokens;
    if (s.parallel > 0) in.concurrency = s.parallel;
    if (!s.kvType.isEmpty()) in.kvDtype = s.kvType;
    if (s.reserveGiB >= 0) in.reserveGiB = s.reserveGiB;
  } else {
    // The model's own maximum, capped by the largest context that fits at this concurrency.
    qint64 ctx = e.contextLength > 0 ? e.contextLength : in.contextTokens;
    in.contextTokens = ctx;
    m_fit.setInputs(in);
    const qint64 fits = m_fit.summary().maxContext;
    if (fits > 0 && fits < ctx) ctx = qMax<qint64>(512, fits / 256 * 256);
    in.contextTokens = ctx;
  }
  in.contextTokens = qMin<qint64>(in.contextTokens, m_context->maximum());
  setInputs(in);
}

LoadSettings ModelsPage::loadSettings() const {
  const FitInputs& in = m_fit.inputs();
  LoadSettings s;
  s.contextTokens = in.contextTokens;
  s.parallel = in.concurrency;
  s.kvType = LoadSettings::engineKvType(in.kvDtype) ? in.kvDtype : QStringLiteral("f16");
  s.reserveGiB = in.reserveGiB;
  return s;
}

void ModelsPage::loadSelected() {
  const CatalogEntry& e = m_fit.entry();
  if (!e.isLocal()) return;
  const LoadSettings s = loadSettings();
  QString note;
  if (s.kvType != m_fit.inputs().kvDtype)
    note = tr(" The engine keeps the KV cache in f16 or f32: loading with f16 (the plan used %1).")
               .arg(m_fit.inputs().kvDtype);
  QString error;
  if (!m_loadSettings.remember(e.path, s, &error))
    note += tr(" (The settings could not be remembered: %1.)").arg(error);
  m_loadMessage->setText(tr("Asking the engine to load %1 with %2 tokens of context, %3 "
                            "parallel sequences…")
                             .arg(e.name, QLocale().toString(s.contextTokens))
                             .arg(s.parallel) +
                         note);
  m_session->load(e.path, s);
}

void ModelsPage::showDetails(const CatalogEntry& e) {
  QString html = QStringLiteral("<h3>%1</h3><table>").arg(e.name.toHtmlEscaped());
  auto row = [&html](const QString& k, const QString& v) {
    if (!v.isEmpty())
      html +=
          QStringLiteral("<tr><td><b>%1</b>&nbsp;</td><td>%2</td></tr>").arg(k, v.toHtmlEscaped());
  };
  row(tr("Architecture"), e.architecture.isEmpty() ? e.family : e.architecture);
  row(tr("Parameters"), ModelListModel::paramsText(e.paramsB));
  row(tr("Active parameters"), ModelListModel::paramsText(e.activeParamsB));
  if (e.contextLength > 0) row(tr("Context length"), QLocale().toString(e.contextLength));
  QStringList builds;
  for (const CatalogBuild& b : e.builds)
    builds << (b.sizeBytes > 0 ? QStringLiteral("%1 (%2)").arg(b.name, formatBytes(b.sizeBytes))
                               : b.name);
  row(tr("Builds"), builds.join(QStringLiteral(", ")));
  row(tr("License"), e.license.isEmpty() && !e.isLocal() ? tr("not recorded") : e.license);
  if (e.isLocal()) row(tr("File"), QDir::toNativeSeparators(e.path));
  if (e.visionModel)
    row(tr("Vision"), e.visionProjector.isEmpty()
                          ? tr("no projector made for this model beside it (put its mmproj file "
                               "in the same folder)")
                          : tr("projector %1").arg(QFileInfo(e.visionProjector).fileName()));
  html += QStringLiteral("</table>");
  if (!e.quality.isEmpty()) {
    html += QStringLiteral("<p><b>%1</b></p><ul>").arg(tr("Published quality"));
    for (const PublishedQuality& q : e.quality)
      html += QStringLiteral("<li>%1: %2 <i>(%3)</i></li>")
                  .arg(q.build.toHtmlEscaped(), q.what.toHtmlEscaped(),
                       q.source.isEmpty() ? tr("source not recorded") : q.source.toHtmlEscaped());
    html += QStringLiteral("</ul>");
  }
  if (e.isLocal()) {
    const QList<QualityRecord> measured = m_quality.forModel(e.path);
    if (!measured.isEmpty()) {
      html += QStringLiteral("<p><b>%1</b></p><ul>").arg(tr("Measured quality"));
      for (const QualityRecord& r : measured)
        html += QStringLiteral("<li>%1</li>").arg(r.summary().toHtmlEscaped());
      html += QStringLiteral("</ul>");
    }
  }
  if (!e.speeds.isEmpty()) {
    html += QStringLiteral("<p><b>%1</b></p><ul>").arg(tr("Published speeds"));
    for (const PublishedSpeed& s : e.speeds)
      html += QStringLiteral("<li>%1 — %2 <i>(%3)</i></li>")
                  .arg(tr("%1 tok/s").arg(decimal(s.tokensPerSec, 1)), s.what.toHtmlEscaped(),
                       s.source.isEmpty() ? tr("source not recorded") : s.source.toHtmlEscaped());
    html += QStringLiteral("</ul>");
  }
  m_details->setText(html);
}

void ModelsPage::updateFitDisplay() {
  m_hub->setFitInputs(m_fit.inputs());  // the browser's verdicts follow the planner's boxes
  const FitSummary& s = m_fit.summary();
  m_fitView->setSummary(s);
  m_boxTable->setSummaries(m_fit.boxTable());
  if (!s.valid) {
    m_verdict->setText(tr("No fit report"));
    m_verdict->setStyleSheet(QString());
    m_numbers->setText(s.error);
    return;
  }
  m_verdict->setText(s.fits ? tr("Fits on %n box(es)", nullptr, s.boxes)
                            : tr("Does not fit on %n box(es)", nullptr, s.boxes));
  m_verdict->setStyleSheet(s.fits ? QStringLiteral("color: #2e9d4f")
                                  : QStringLiteral("color: #d03b3b"));
  QStringList lines;
  if (!s.reason.isEmpty()) lines << s.reason;
  lines << tr("Largest context at %n concurrent sequence(s): %1 tokens", nullptr,
              m_fit.inputs().concurrency)
               .arg(QLocale().toString(s.maxContext));
  lines << tr("Decode ceiling: %1 tokens/s (memory bandwidth bound)")
               .arg(decimal(s.decodeCeilingTokensPerSec, 1));
  m_numbers->setText(lines.join(QLatin1Char('\n')));
}

// "Fits" in the lists means: some build of the model fits with the current settings.
void ModelsPage::updateFitsColumn() {
  const FitInputs in = m_fit.inputs();
  for (ModelListModel* model : {m_catalog, m_local}) {
    for (const CatalogEntry& e : model->entries()) {
      ModelListModel::Fit fit = ModelListModel::Fit::Unknown;
      const int builds = qMax(1, int(e.builds.size()));
      for (int b = 0; b < builds && fit != ModelListModel::Fit::Yes; ++b) {
        FitInputs each = in;
        each.buildIndex = b;
        const FitSummary s = FitController::compute(e, each);
        if (s.valid) fit = s.fits ? ModelListModel::Fit::Yes : ModelListModel::Fit::No;
      }
      model->setFit(e.id, fit);
    }
  }
}

void ModelsPage::updateFamilies() {
  const QString current = m_family->currentData().toString();
  QStringList families = m_catalog->families();
  for (const QString& f : m_local->families())
    if (!families.contains(f)) families << f;
  families.sort();
  const QSignalBlocker block(m_family);
  m_family->clear();
  m_family->addItem(tr("All families"), QString());
  for (const QString& f : families) m_family->addItem(f, f);
  m_family->setCurrentIndex(qMax(0, m_family->findData(current)));
}

void ModelsPage::onLocalModels(const QJsonArray& models) {
  QList<CatalogEntry> entries;
  for (const QJsonValue& v : models)
    if (v.isObject()) {
      CatalogEntry e = CatalogEntry::fromLocalJson(v.toObject());
      if (e.projector) continue;  // shown as the vision part of its model, not as a model
      entries << e;
      FitController::attachFitModel(entries.last());  // exact bytes when the file is readable here
    }
  m_local->setEntries(entries);
  m_local->setLoaded(m_session->loadedPath());
  updateFamilies();
  updateFitsColumn();
  m_localView->resizeColumnsToContents();
  m_localMessage->setText(
      entries.isEmpty() ? tr("No GGUF files in the model folders. Add a folder in Settings, "
                             "or try the demo model.")
                        : tr("%n file(s) found by the engine.", nullptr, int(entries.size())));
}

void ModelsPage::makeDemoModel() {
  m_demo->setEnabled(false);
  m_localMessage->setText(tr("Making a demo model with random weights…"));
  m_session->makeDemoModel(
      QDir(AppSettings::demoModelDir()).filePath(QStringLiteral("arclight-demo.gguf")));
}

void ModelsPage::updateLoadControls() {
  const bool connected = m_session->client()->connection() == EngineClient::Connection::Connected;
  const bool loading = m_session->isLoading();
  const CatalogEntry& e = m_fit.entry();
  m_load->setEnabled(connected && !loading && e.isLocal());
  m_load->setToolTip(!connected     ? tr("No engine connected.")
                     : !e.isLocal() ? tr("Catalog entries are plans: put the GGUF file in a model "
                                         "folder and load it from Local files.")
                                    : QString());
  m_unload->setEnabled(connected && !loading && !m_session->loadedModel().isEmpty());
  if (!loading) m_cancelLoad->setEnabled(true);
  m_cancelLoad->setVisible(loading);
  // eval runs its own engine process: no connection needed, only a file.
  m_measure->setEnabled(e.isLocal() && !m_qualityRunner->isRunning());
  m_progress->setVisible(loading);
  if (loading) {
    const LoadProgressTracker& t = m_session->loadTracker();
    m_progress->setValue(int(t.fraction() * 1000));
    if (t.bytesTotal() > 0) m_loadMessage->setText(tr("Loading: %1").arg(t.describe()));
  }
  m_catalog->setLoaded(m_session->loadedModel());
  m_local->setLoaded(m_session->loadedPath());
  if (!connected && m_localMessage->text().isEmpty())
    m_localMessage->setText(tr("No engine connected: local files are listed by the engine."));
}

void ModelsPage::measureQuality() {
  const CatalogEntry& e = m_fit.entry();
  if (!e.isLocal()) return;
  const QString reference = QFileDialog::getOpenFileName(
      this, tr("Reference build of %1 (e.g. BF16 or Q8_0)").arg(e.name),
      QFileInfo(e.path).absolutePath(), tr("GGUF models (*.gguf)"));
  if (reference.isEmpty()) return;
  if (QFileInfo(reference).absoluteFilePath() == QFileInfo(e.path).absoluteFilePath()) {
    m_measureMessage->setText(tr("Choose another build as the reference, not the file itself."));
    return;
  }
  m_measureMessage->setText(
      tr("Measuring %1 against %2…")
          .arg(QFileInfo(e.path).fileName(), QFileInfo(reference).fileName()));
  if (m_qualityRunner->start(EngineProcess::findEngineBinary(), e.path, reference)) {
    m_measureCancel->setVisible(true);
    m_measure->setEnabled(false);
  }
}

}  // namespace arc::app
