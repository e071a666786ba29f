#include "ClusterPage.h"

#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include "AppSettings.h"
#include "ClusterBoxModel.h"
#include "ClusterController.h"
#include "ClusterPortModel.h"
#include "EngineSession.h"
#include "Hostfile.h"
#include "NumberFormat.h"

namespace arc::app {

namespace {

// Memory, swap and page cache as a bar behind their text.
class BarDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* p, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override {
    const QVariant f = index.data(ClusterBoxModel::FractionRole);
    if (!f.isValid()) {
      QStyledItemDelegate::paint(p, option, index);
      return;
    }
    QStyleOptionProgressBar bar;
    bar.rect = option.rect.adjusted(2, 2, -2, -2);
    bar.minimum = 0;
    bar.maximum = 1000;
    bar.progress = qBound(0, int(f.toDouble() * 1000.0), 1000);
    bar.text = index.data(Qt::DisplayRole).toString();
    bar.textVisible = true;
    bar.state = option.state | QStyle::State_Horizontal;
    QApplication::style()->drawControl(QStyle::CE_ProgressBar, &bar, p);
  }
};

QTableView* makeTable(QAbstractItemModel* model, QWidget* parent) {
  auto* v = new QTableView(parent);
  v->setModel(model);
  v->verticalHeader()->hide();
  v->setSelectionMode(QAbstractItemView::NoSelection);
  v->horizontalHeader()->setStretchLastSection(true);
  v->setWordWrap(false);
  return v;
}

}  // namespace

ClusterPage::ClusterPage(EngineSession* session, QWidget* parent)
    : QWidget(parent),
      m_session(session),
      m_controller(new ClusterController(session->client(), this)),
      m_boxes(new ClusterBoxModel(this)),
      m_ports(new ClusterPortModel(this)) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  m_refresh = new QPushButton(tr("Refresh"), this);
  bar->addWidget(m_refresh);
  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  bar->addWidget(m_status, 1);
  layout->addLayout(bar);

  auto* split = new QSplitter(Qt::Vertical, this);
  m_boxView = makeTable(m_boxes, split);
  auto* bars = new BarDelegate(m_boxView);
  for (int c : {ClusterBoxModel::MemoryColumn, ClusterBoxModel::SwapColumn,
                ClusterBoxModel::PageCacheColumn})
    m_boxView->setItemDelegateForColumn(c, bars);
  m_boxView->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  // The GPU cell ("NVIDIA GB10, 98.1 GiB free of 119.7 GiB") takes the width it needs; the bars
  // share the rest.
  m_boxView->horizontalHeader()->setSectionResizeMode(ClusterBoxModel::GpuColumn,
                                                      QHeaderView::ResizeToContents);
  for (int c : {ClusterBoxModel::HostColumn, ClusterBoxModel::RankColumn})
    m_boxView->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  // A narrow window wraps a bar's text ("1.3 GiB used of 23.5 GiB") instead of cutting it.
  m_boxView->setWordWrap(true);
  m_boxView->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_boxView->horizontalHeader()->setStretchLastSection(false);
  split->addWidget(m_boxView);
  m_portView = makeTable(m_ports, split);
  m_portView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_portView->horizontalHeader()->setStretchLastSection(true);
  split->addWidget(m_portView);
  m_hints = new QLabel(split);
  m_hints->setWordWrap(true);
  m_hints->setTextFormat(Qt::PlainText);
  m_hints->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  split->addWidget(m_hints);

  auto* bottom = new QWidget(split);
  auto* bottomLayout = new QHBoxLayout(bottom);
  bottomLayout->setContentsMargins(0, 0, 0, 0);
  auto* linkBox = new QGroupBox(tr("Link test"), bottom);
  auto* linkLayout = new QVBoxLayout(linkBox);
  auto* linkRow = new QHBoxLayout;
  m_linkButton = new QPushButton(tr("Run link test"), linkBox);
  linkRow->addWidget(m_linkButton);
  m_linkStatus =
      new QLabel(tr("A timed all-reduce between the ranks, as the model uses it."), linkBox);
  m_linkStatus->setWordWrap(true);
  linkRow->addWidget(m_linkStatus, 1);
  linkLayout->addLayout(linkRow);
  m_linkTable = new QTableWidget(0, 4, linkBox);
  m_linkTable->setHorizontalHeaderLabels(
      {tr("Size"), tr("Time per all-reduce"), tr("Bus GB/s"), tr("Check")});
  m_linkTable->verticalHeader()->hide();
  m_linkTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_linkTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_linkTable->horizontalHeader()->setStretchLastSection(true);
  linkLayout->addWidget(m_linkTable);
  bottomLayout->addWidget(linkBox, 1);

  auto* hostBox = new QGroupBox(tr("Hostfile"), bottom);
  auto* hostLayout = new QVBoxLayout(hostBox);
  m_hostfile = new QPlainTextEdit(hostBox);
  m_hostfile->setPlaceholderText(
      tr("One line per box, for example:\nspark-a slots=1\nspark-b slots=1"));
  hostLayout->addWidget(m_hostfile);
  m_hostfileStatus = new QLabel(hostBox);
  m_hostfileStatus->setWordWrap(true);
  hostLayout->addWidget(m_hostfileStatus);
  auto* cmdRow = new QHBoxLayout;
  m_command = new QLineEdit(hostBox);
  m_command->setReadOnly(true);
  cmdRow->addWidget(m_command, 1);
  auto* copy = new QPushButton(tr("Copy"), hostBox);
  cmdRow->addWidget(copy);
  m_save = new QPushButton(tr("Save"), hostBox);
  cmdRow->addWidget(m_save);
  hostLayout->addLayout(cmdRow);
  bottomLayout->addWidget(hostBox, 1);
  split->addWidget(bottom);
  layout->addWidget(split, 1);

  // The saved hostfile, if there is one.
  const QString path = Hostfile::pathFor(AppSettings());
  QFile f(path);
  if (f.open(QIODevice::ReadOnly | QIODevice::Text)) {
    m_savedText = QString::fromUtf8(f.read(1 << 20));
    m_hostfile->setPlainText(m_savedText);
  }

  m_timer = new QTimer(this);
  m_timer->setInterval(10000);
  connect(m_timer, &QTimer::timeout, m_controller, &ClusterController::refresh);
  connect(m_refresh, &QPushButton::clicked, m_controller, &ClusterController::refresh);
  connect(m_linkButton, &QPushButton::clicked, m_controller, &ClusterController::runLinkTest);
  connect(m_controller, &ClusterController::changed, this, &ClusterPage::showSnapshot);
  connect(m_controller, &ClusterController::linkTestChanged, this, &ClusterPage::showLinkTest);
  connect(m_hostfile, &QPlainTextEdit::textChanged, this, &ClusterPage::validateHostfile);
  connect(m_save, &QPushButton::clicked, this, [this] { saveHostfile(); });
  connect(copy, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(m_command->text()); });
  showSnapshot();
  validateHostfile();
}

void ClusterPage::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  m_controller->refresh();
  m_timer->start();
}

void ClusterPage::hideEvent(QHideEvent* e) {
  QWidget::hideEvent(e);
  m_timer->stop();
}

void ClusterPage::showSnapshot() {
  const ClusterSnapshot& s = m_controller->snapshot();
  m_boxes->setSnapshot(s);
  m_ports->setSnapshot(s);
  QString status;
  if (!m_controller->error().isEmpty()) {
    status = tr("Cannot read the cluster: %1").arg(m_controller->error());
  } else if (!m_controller->hasSnapshot()) {
    status =
        m_controller->isRefreshing() ? tr("Asking the engine…") : tr("Not connected to an engine.");
  } else {
    status = tr("%n rank(s)", "", s.ranks);
    if (s.stale) status += tr(" — a model is loading; the other ranks' figures are from before");
  }
  m_status->setText(status);
  const QStringList hints = m_controller->hints();
  m_hints->setText(hints.isEmpty() && m_controller->hasSnapshot() ? tr("No problems found.")
                                                                  : hints.join(QLatin1Char('\n')));
  m_linkButton->setEnabled(!m_controller->isLinkTestRunning());
}

void ClusterPage::showLinkTest() {
  const LinkTestReport& r = m_controller->linkTest();
  m_linkButton->setEnabled(!m_controller->isLinkTestRunning());
  if (m_controller->isLinkTestRunning()) {
    m_linkStatus->setText(tr("Running…"));
  } else if (!m_controller->linkTestError().isEmpty()) {
    m_linkStatus->setText(m_controller->linkTestError());
  } else if (!r.rows.isEmpty()) {
    m_linkStatus->setText(
        r.modelLoaded
            ? tr("%n rank(s); a model was loaded and serving may have slowed it.", "", r.ranks)
            : tr("%n rank(s).", "", r.ranks));
  }
  m_linkTable->setRowCount(int(r.rows.size()));
  for (int i = 0; i < r.rows.size(); ++i) {
    const LinkTestRow& row = r.rows.at(i);
    const QString size = row.bytes >= (1 << 20) ? tr("%1 MiB").arg(row.bytes >> 20)
                                                : tr("%1 KiB").arg(double(row.bytes) / 1024.0);
    m_linkTable->setItem(i, 0, new QTableWidgetItem(size));
    m_linkTable->setItem(i, 1,
                         new QTableWidgetItem(tr("%1 ms").arg(decimal(row.seconds * 1000.0, 3))));
    m_linkTable->setItem(i, 2, new QTableWidgetItem(decimal(row.busbwGBs, 2)));
    m_linkTable->setItem(i, 3,
                         new QTableWidgetItem(row.correct ? tr("sums correct") : tr("WRONG SUMS")));
  }
}

QString ClusterPage::linkTestText() const {
  QStringList lines{m_linkStatus->text()};
  for (int i = 0; i < m_linkTable->rowCount(); ++i) {
    QStringList cells;
    for (int c = 0; c < m_linkTable->columnCount(); ++c)
      cells << (m_linkTable->item(i, c) ? m_linkTable->item(i, c)->text() : QString());
    lines << cells.join(QStringLiteral(" | "));
  }
  return lines.join(QLatin1Char('\n'));
}

void ClusterPage::validateHostfile() {
  const Hostfile h = Hostfile::parse(m_hostfile->toPlainText());
  AppSettings settings;
  const QString path = Hostfile::pathFor(settings);
  if (h.isValid()) {
    const bool saved = !m_savedText.isNull() && m_hostfile->toPlainText() == m_savedText;
    m_hostfileStatus->setText(
        saved ? tr("%n box(es), %1 rank(s); saved as %2", "", int(h.entries().size()))
                    .arg(h.totalSlots())
                    .arg(path)
              : tr("%n box(es), %1 rank(s); not saved yet (Save writes %2)", "",
                   int(h.entries().size()))
                    .arg(h.totalSlots())
                    .arg(path));
  } else {
    QStringList problems;
    for (const HostfileError& e : h.errors())
      problems << tr("line %1: %2").arg(e.line).arg(e.message);
    m_hostfileStatus->setText(problems.join(QLatin1Char('\n')));
  }
  m_save->setEnabled(h.isValid());
  m_command->setText(h.isValid() ? Hostfile::mpirunCommand(settings, path, h.totalSlots())
                                 : QString());
}

bool ClusterPage::saveHostfile() {
  const Hostfile h = Hostfile::parse(m_hostfile->toPlainText());
  AppSettings settings;
  const QString path = Hostfile::pathFor(settings);
  QString error;
  if (!Hostfile::save(path, m_hostfile->toPlainText(), &error)) {
    m_hostfileStatus->setText(tr("Not saved: %1").arg(error));
    return false;
  }
  m_savedText = m_hostfile->toPlainText();
  // The next local engine start runs under mpirun with this file, one rank per slot.
  settings.setHostfile(path);
  settings.setRanks(h.totalSlots());
  settings.sync();
  m_hostfileStatus->setText(tr("Saved as %1. The local engine uses it from its next start (Engine "
                               "→ Stop, then Start local engine).")
                                .arg(path));
  return true;
}

QString ClusterPage::hostfileText() const {
  return m_hostfile->toPlainText();
}
void ClusterPage::setHostfileText(const QString& text) {
  m_hostfile->setPlainText(text);
}
QString ClusterPage::hostfileStatus() const {
  return m_hostfileStatus->text();
}
QString ClusterPage::commandText() const {
  return m_command->text();
}

}  // namespace arc::app
