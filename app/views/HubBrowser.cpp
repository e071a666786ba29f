#include "HubBrowser.h"

#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>

#include <memory>

#include "HubTokenStore.h"

namespace arc::app {

namespace {

QString sizeText(qint64 bytes) {
  return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

QString durationText(qint64 s) {
  if (s < 0) return HubBrowser::tr("time left unknown");
  if (s < 60) return HubBrowser::tr("%1 s left").arg(s);
  if (s < 3600) return HubBrowser::tr("%1 min left").arg((s + 30) / 60);
  return HubBrowser::tr("%1 h %2 min left").arg(s / 3600).arg((s % 3600) / 60);
}

// Letters and digits only, lower case: "unsloth/Qwen3-30B-A3B-GGUF" -> "qwen330ba3b".
QString norm(QString s) {
  s = s.section(QLatin1Char('/'), -1).toLower();
  s.remove(QRegularExpression(QStringLiteral("[-_.]?gguf$")));
  s.remove(QRegularExpression(QStringLiteral("[^a-z0-9]")));
  return s;
}

QTableWidget* makeTable(const QStringList& headers, QWidget* parent) {
  auto* t = new QTableWidget(0, int(headers.size()), parent);
  t->setHorizontalHeaderLabels(headers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setStretchLastSection(true);
  t->setWordWrap(false);
  return t;
}

}  // namespace

HubBrowser::HubBrowser(QWidget* parent)
    : QWidget(parent), m_client(new HubClient(this)), m_tokens(new HubTokenStore(this)) {
  auto* v = new QVBoxLayout(this);
  auto* searchRow = new QHBoxLayout;
  m_search = new QLineEdit(this);
  m_search->setPlaceholderText(tr("Search GGUF models on Hugging Face…"));
  m_search->setClearButtonEnabled(true);
  auto* go = new QPushButton(tr("Search"), this);
  m_token = new QPushButton(tr("Token…"), this);
  m_token->setToolTip(
      tr("A Hugging Face token for gated repositories, kept in the desktop's "
         "keyring"));
  searchRow->addWidget(m_search, 1);
  searchRow->addWidget(go);
  searchRow->addWidget(m_token);
  v->addLayout(searchRow);

  m_repos = makeTable({tr("Repository"), tr("Downloads")}, this);
  m_repos->setMaximumHeight(160);
  v->addWidget(m_repos);
  m_files = makeTable(
      {tr("File"), tr("Quant"), tr("Size"), tr("Fit (from the file's header)"), tr("Catalog")},
      this);
  v->addWidget(m_files, 1);
  m_message = new QLabel(this);
  m_message->setWordWrap(true);
  m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(m_message);

  auto* dl = new QHBoxLayout;
  m_downloadButton = new QPushButton(tr("Download"), this);
  m_pause = new QPushButton(tr("Pause"), this);
  m_cancel = new QPushButton(tr("Cancel download"), this);
  m_progress = new QProgressBar(this);
  m_progress->setRange(0, 1000);
  dl->addWidget(m_downloadButton);
  dl->addWidget(m_pause);
  dl->addWidget(m_cancel);
  dl->addWidget(m_progress, 1);
  v->addLayout(dl);
  m_progressText = new QLabel(this);
  v->addWidget(m_progressText);

  connect(go, &QPushButton::clicked, this, [this] { search(m_search->text()); });
  connect(m_search, &QLineEdit::returnPressed, this, [this] { search(m_search->text()); });
  connect(m_token, &QPushButton::clicked, this, &HubBrowser::askToken);
  connect(m_client, &HubClient::searchFinished, this, &HubBrowser::onSearch);
  connect(m_client, &HubClient::filesListed, this, &HubBrowser::onFiles);
  connect(m_repos, &QTableWidget::itemSelectionChanged, this, [this] {
    const auto rows = m_repos->selectionModel()->selectedRows();
    if (!rows.isEmpty()) openRepo(m_repos->item(rows.first().row(), 0)->text());
  });
  connect(m_files, &QTableWidget::itemSelectionChanged, this, &HubBrowser::updateDownloadControls);
  connect(m_downloadButton, &QPushButton::clicked, this, [this] {
    const auto rows = m_files->selectionModel()->selectedRows();
    if (!rows.isEmpty()) downloadRow(rows.first().row());
  });
  connect(m_pause, &QPushButton::clicked, this, [this] {
    if (!m_download) return;
    if (m_download->state() == ModelDownload::State::Running)
      m_download->pause();
    else
      m_download->start();
  });
  connect(m_cancel, &QPushButton::clicked, this, [this] {
    if (m_download) m_download->cancel();
  });
  connect(m_tokens, &HubTokenStore::changed, this, [this] {
    m_client->setToken(m_tokens->token());
    if (!m_tokens->note().isEmpty()) m_message->setText(m_tokens->note());
  });
  updateDownloadControls();
}

QString HubBrowser::message() const {
  return m_message->text();
}

void HubBrowser::setBaseUrl(const QUrl& url) {
  m_client->setBaseUrl(url);
}

void HubBrowser::askToken() {
  bool ok = false;
  const QString t = QInputDialog::getText(
      this, tr("Hugging Face token"),
      tr("Token for gated repositories (kept in the desktop keyring; empty removes it):"),
      QLineEdit::Password, m_tokens->token(), &ok);
  if (ok) m_tokens->store(t.trimmed());
}

void HubBrowser::search(const QString& text) {
  m_search->setText(text);
  m_message->setText(tr("Searching %1…").arg(m_client->baseUrl().host()));
  m_client->search(text.trimmed());
}

void HubBrowser::onSearch(const QList<HubRepoInfo>& repos, const QString& error) {
  m_repos->setRowCount(0);
  if (!error.isEmpty()) {
    m_message->setText(tr("Search failed: %1").arg(error));
    return;
  }
  m_message->setText(repos.isEmpty() ? tr("No GGUF repositories found.")
                                     : tr("Repositories found: %1").arg(repos.size()));
  for (const HubRepoInfo& r : repos) {
    const int row = m_repos->rowCount();
    m_repos->insertRow(row);
    m_repos->setItem(row, 0, new QTableWidgetItem(r.id));
    if (r.gated) m_repos->item(row, 0)->setToolTip(tr("gated: needs a token"));
    m_repos->setItem(row, 1, new QTableWidgetItem(QLocale().toString(r.downloads)));
  }
  m_repos->resizeColumnToContents(0);
}

void HubBrowser::openRepo(const QString& repo) {
  m_repo = repo;
  ++m_generation;
  m_rows.clear();
  m_files->setRowCount(0);
  m_message->setText(tr("Listing %1…").arg(repo));
  m_client->listFiles(repo);
}

void HubBrowser::onFiles(const QString& repo, const QList<HubModelFile>& files,
                         const QString& error) {
  if (repo != m_repo) return;
  if (!error.isEmpty()) {
    m_message->setText(tr("Cannot list %1: %2").arg(repo, error));
    return;
  }
  m_rows.clear();
  m_files->setRowCount(0);
  for (const HubModelFile& f : files) {
    if (f.projector) continue;  // the vision part of a model, not a model
    Row r;
    r.file = f;
    r.entry.id = f.name;
    r.entry.name = f.name.section(QLatin1Char('/'), -1);
    r.entry.quant = f.quant;
    m_rows << r;
    const int row = m_files->rowCount();
    m_files->insertRow(row);
    QString name = f.name.section(QLatin1Char('/'), -1);
    if (f.parts.size() > 1) name += tr(" (%1 parts)").arg(f.parts.size());
    m_files->setItem(row, ColFile, new QTableWidgetItem(name));
    m_files->item(row, ColFile)->setToolTip(f.name);
    m_files->setItem(row, ColQuant, new QTableWidgetItem(f.quant));
    m_files->setItem(row, ColSize, new QTableWidgetItem(sizeText(f.totalBytes())));
    m_files->setItem(
        row, ColFit,
        new QTableWidgetItem(f.complete ? tr("reading header…") : tr("parts missing")));
    m_files->setItem(row, ColCatalog, new QTableWidgetItem());
    if (!f.complete) {
      m_rows.last().fitDone = true;
      m_rows.last().fitError = tr("the listing lacks some parts of this split model");
    }
  }
  m_message->setText(m_rows.isEmpty() ? tr("%1 holds no GGUF models.").arg(repo)
                                      : tr("%1: GGUF models: %2; reading their headers (no "
                                           "weights are downloaded)…")
                                            .arg(repo)
                                            .arg(m_rows.size()));
  updateFitCells();
  startNextFit();
}

// One header at a time, off the GUI thread; answers for an older listing are dropped.
void HubBrowser::startNextFit() {
  if (m_fitRunning) return;
  int next = -1;
  for (int i = 0; i < m_rows.size(); ++i) {
    if (!m_rows[i].fitDone) {
      next = i;
      break;
    }
  }
  if (next < 0) {
    if (!m_rows.isEmpty())
      m_message->setText(tr("%1: GGUF models: %2. Each verdict comes from the file's own header; "
                            "nothing was downloaded.")
                             .arg(m_repo)
                             .arg(m_rows.size()));
    emit remoteFitsDone();
    return;
  }
  m_fitRunning = true;
  const QString url = m_client->resolveUrl(m_repo, m_rows[next].file.name).toString();
  const QString token = m_client->token();
  auto entry = std::make_shared<CatalogEntry>(m_rows[next].entry);
  auto error = std::make_shared<QString>();
  QThread* worker = QThread::create([entry, error, url, token] {
    *error = FitController::attachRemoteFitModel(*entry, url, token);
  });
  const int generation = m_generation;
  connect(worker, &QThread::finished, worker, &QObject::deleteLater);
  connect(worker, &QThread::finished, this, [this, next, generation, entry, error] {
    m_fitRunning = false;
    if (generation == m_generation && next < m_rows.size()) {
      m_rows[next].entry = *entry;
      m_rows[next].fitError = *error;
      m_rows[next].fitDone = true;
      updateFitCells();
      m_files->resizeColumnsToContents();
    }
    startNextFit();
  });
  worker->start();
}

const CatalogEntry* HubBrowser::remoteEntry(int row) const {
  return row >= 0 && row < m_rows.size() ? &m_rows[row].entry : nullptr;
}

FitSummary HubBrowser::fitOf(int row) const {
  if (row < 0 || row >= m_rows.size() || !m_rows[row].fitDone) return {};
  if (!m_rows[row].fitError.isEmpty()) {
    FitSummary s;
    s.error = m_rows[row].fitError;
    return s;
  }
  FitInputs in = m_inputs;
  in.buildIndex = 0;
  return FitController::compute(m_rows[row].entry, in);
}

void HubBrowser::setFitInputs(const FitInputs& inputs) {
  m_inputs = inputs;
  updateFitCells();
}

void HubBrowser::setCatalog(const QList<CatalogEntry>& entries) {
  m_catalog = entries;
  updateFitCells();
}

const CatalogEntry* HubBrowser::catalogMatch(const QString& repo) const {
  const QString r = norm(repo);
  if (r.size() < 4) return nullptr;
  const CatalogEntry* best = nullptr;
  for (const CatalogEntry& e : m_catalog) {
    for (const QString& key : {norm(e.id), norm(e.name)}) {
      // The repository names the model, often with more ("-Instruct-2507", "-GGUF").
      if (key.size() >= 4 && r.contains(key) && (!best || key.size() > norm(best->name).size()))
        best = &e;
    }
  }
  return best;
}

void HubBrowser::updateFitCells() {
  const CatalogEntry* cat = catalogMatch(m_repo);
  for (int row = 0; row < m_rows.size() && row < m_files->rowCount(); ++row) {
    const Row& r = m_rows[row];
    QTableWidgetItem* fit = m_files->item(row, ColFit);
    if (r.fitDone) {
      const FitSummary s = fitOf(row);
      if (s.valid) {
        fit->setText((m_inputs.boxes == 1 ? tr("%1 on 1 box · up to %2 tokens context")
                                          : tr("%1 on %3 boxes · up to %2 tokens context")
                                                .arg(QStringLiteral("%1"), QStringLiteral("%2"),
                                                     QString::number(m_inputs.boxes)))
                         .arg(s.verdict, QLocale().toString(s.maxContext)));
        fit->setToolTip(s.reason);
        fit->setForeground(s.fits ? QColor(0x2e, 0x7d, 0x32) : QColor(0xc6, 0x28, 0x28));
      } else {
        fit->setText(tr("no verdict: %1").arg(s.error));
        fit->setToolTip(s.error);
      }
    }
    QTableWidgetItem* catItem = m_files->item(row, ColCatalog);
    if (!cat) {
      catItem->setText(tr("not in the catalog"));
      continue;
    }
    // The catalog's build for this quantization: the same name, else the family of it
    // ("Q4_K_M" is a "q4_k" build, "MXFP4" an "mxfp4-official" one).
    int build = -1;
    const QString quant = r.file.quant.toLower();
    for (int b = 0; b < cat->builds.size() && !quant.isEmpty(); ++b) {
      const QString name = cat->builds[b].name.toLower();
      if (name == quant) {
        build = b;
        break;
      }
      if (build < 0 && (quant.startsWith(name + QLatin1Char('_')) || name.startsWith(quant)))
        build = b;
    }
    if (build < 0) {
      catItem->setText(tr("%1 (catalog has no %2 build)").arg(cat->name, r.file.quant));
      continue;
    }
    FitInputs in = m_inputs;
    in.buildIndex = build;
    const FitSummary cs = FitController::compute(*cat, in);
    const qint64 size = cat->builds[build].sizeBytes;
    catItem->setText(tr("%1 %2: %3%4")
                         .arg(cat->name, cat->builds[build].name,
                              cs.valid ? cs.verdict : tr("no figures"),
                              size > 0 ? QStringLiteral(" · ") + sizeText(size) : QString()));
  }
}

void HubBrowser::downloadRow(int row) {
  if (row < 0 || row >= m_rows.size()) return;
  if (m_download && (m_download->state() == ModelDownload::State::Running ||
                     m_download->state() == ModelDownload::State::Verifying)) {
    m_message->setText(tr("A download is running; pause or cancel it first."));
    return;
  }
  const HubModelFile& f = m_rows[row].file;
  if (!f.complete) {
    m_message->setText(tr("The listing lacks some parts of this model; it cannot be downloaded."));
    return;
  }
  QList<DownloadPart> parts;
  for (const HubFileInfo& p : f.parts) {
    parts << DownloadPart{m_client->resolveUrl(m_repo, p.path),
                          p.path.section(QLatin1Char('/'), -1), p.size, p.sha256};
  }
  if (m_download) m_download->deleteLater();
  m_download = new ModelDownload(parts, m_downloadDir, this);
  m_download->setToken(m_client->token());
  connect(m_download, &ModelDownload::progress, this, &HubBrowser::onDownloadProgress);
  connect(m_download, &ModelDownload::stateChanged, this, &HubBrowser::updateDownloadControls);
  ModelDownload* d = m_download;
  connect(m_download, &ModelDownload::finished, this, [this, d](bool ok, const QString& msg) {
    m_message->setText(msg);
    updateDownloadControls();
    emit downloadFinished(ok, ok ? d->finalPath(0) : msg);
  });
  m_message->setText(
      tr("Downloading %1 to %2…")
          .arg(f.name.section(QLatin1Char('/'), -1), QDir::toNativeSeparators(m_downloadDir)));
  m_download->start();
  updateDownloadControls();
}

void HubBrowser::onDownloadProgress(qint64 done, qint64 total) {
  m_progress->setValue(total > 0 ? int(1000.0 * double(done) / double(total)) : 0);
  const double rate = m_download ? m_download->bytesPerSecond() : 0;
  m_progressText->setText(tr("%1 of %2 · %3/s · %4")
                              .arg(sizeText(done), sizeText(total), sizeText(qint64(rate)),
                                   durationText(m_download ? m_download->secondsLeft() : -1)));
}

void HubBrowser::updateDownloadControls() {
  const bool selected = !m_files->selectionModel()->selectedRows().isEmpty();
  const auto state = m_download ? m_download->state() : ModelDownload::State::Idle;
  const bool active =
      state == ModelDownload::State::Running || state == ModelDownload::State::Verifying;
  m_downloadButton->setEnabled(selected && !active);
  const bool resumable =
      state == ModelDownload::State::Paused || state == ModelDownload::State::Failed;
  m_pause->setEnabled(state == ModelDownload::State::Running || resumable);
  m_pause->setText(resumable ? tr("Resume") : tr("Pause"));
  m_cancel->setEnabled(active || resumable);
  if (state == ModelDownload::State::Verifying) m_progressText->setText(tr("Checking SHA-256…"));
  if (state == ModelDownload::State::Paused) m_progressText->setText(tr("Paused."));
}

}  // namespace arc::app
