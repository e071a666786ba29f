#include "MainWindow.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QStackedWidget>
#include <QStatusBar>
#include <QVBoxLayout>

#include "AboutDialog.h"
#include "Application.h"
#include "BenchmarkPage.h"
#include "ChatPage.h"
#include "ClusterPage.h"
#include "EngineSession.h"
#include "HubBrowser.h"
#include "HubTokenStore.h"
#include "LogDialog.h"
#include "ModelsPage.h"
#include "MonitorPage.h"
#include "NumberFormat.h"
#include "SettingsDialog.h"

namespace arc::app {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), m_session(new EngineSession(this)) {
  setWindowTitle(tr("Arclight"));
  setObjectName(QStringLiteral("MainWindow"));
  auto* central = new QWidget(this);
  auto* outer = new QVBoxLayout(central);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->setSpacing(0);
  m_banner = new QLabel(central);
  m_banner->setWordWrap(true);
  m_banner->setMargin(8);
  m_banner->setStyleSheet(
      QStringLiteral("background: #f8d7a8; color: #402800; border-bottom: 1px solid #d9a650;"));
  m_banner->hide();
  outer->addWidget(m_banner);
  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  m_sidebar = new QListWidget(central);
  m_sidebar->setFixedWidth(150);
  m_sidebar->setIconSize(QSize(20, 20));
  QFont f = m_sidebar->font();
  f.setPointSizeF(f.pointSizeF() * 1.15);
  m_sidebar->setFont(f);
  m_pages = new QStackedWidget(central);
  row->addWidget(m_sidebar);
  row->addWidget(m_pages, 1);
  outer->addLayout(row, 1);
  setCentralWidget(central);

  m_modelsPage = new ModelsPage(m_session, m_pages);
  auto* chatPage = new ChatPage(m_session, m_pages);
  // The chat header's model picker loads through the Models page: the same remembered load
  // settings, fit check and progress.
  connect(chatPage, &ChatPage::loadModelRequested, this, [this](const QString& path) {
    if (m_modelsPage->selectModel(path))
      m_modelsPage->loadSelected();
    else
      m_session->load(path);  // hidden by the page's filters: the engine's own defaults
  });
  applyHubSettings();
  m_modelsPage->hubBrowser()->tokens()->load();  // the hub token from the keyring
  struct PageInfo {
    QString name;
    QWidget* widget;
  };
  const PageInfo pages[PageCount] = {
      {tr("Models"), m_modelsPage},
      {tr("Chat"), chatPage},
      {tr("Monitor"), new MonitorPage(m_session, m_pages)},
      {tr("Benchmark"), new BenchmarkPage(m_session, m_pages)},
      {tr("Cluster"), new ClusterPage(m_session, m_pages)},
  };
  for (const PageInfo& p : pages) {
    m_sidebar->addItem(p.name);
    m_pages->addWidget(p.widget);
  }
  connect(m_sidebar, &QListWidget::currentRowChanged, m_pages, &QStackedWidget::setCurrentIndex);

  m_stateLabel = new QLabel(this);
  m_modelLabel = new QLabel(this);
  m_speedLabel = new QLabel(this);
  m_memoryLabel = new QLabel(this);
  statusBar()->addWidget(m_stateLabel);
  statusBar()->addWidget(m_modelLabel, 1);
  statusBar()->addPermanentWidget(m_speedLabel);
  statusBar()->addPermanentWidget(m_memoryLabel);

  buildMenus();
  connect(m_session, &EngineSession::changed, this, &MainWindow::updateStatus);
  connect(m_session, &EngineSession::messageChanged, this, &MainWindow::showMessage);
  updateStatus();

  resize(1280, 820);
  restoreGeometry(m_settings.windowGeometry());
  restoreState(m_settings.windowState());
  setCurrentPage(m_settings.currentPage());
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* settings = file->addAction(tr("&Settings…"), this, &MainWindow::openSettings);
  settings->setShortcut(QKeySequence::Preferences);
  settings->setShortcuts({QKeySequence(tr("Ctrl+,")), QKeySequence::Preferences});
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* engine = menuBar()->addMenu(tr("&Engine"));
  engine->addAction(tr("&Start local engine"), this, [this] { startEngine(true); });
  engine->addAction(tr("S&top local engine"), this, [this] { m_session->stopLocalEngine(); });
  QAction* reconnect =
      engine->addAction(tr("&Reconnect"), this, [this] { m_session->client()->connectToEngine(); });
  reconnect->setShortcut(QKeySequence(tr("Ctrl+R")));
  QAction* log = engine->addAction(tr("Engine &log…"), this, [this] {
    auto* dlg = new LogDialog(m_session, this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    dlg->show();
  });
  log->setShortcut(QKeySequence(tr("Ctrl+L")));

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (int i = 0; i < PageCount; ++i) {
    QAction* a =
        view->addAction(m_sidebar->item(i)->text(), this, [this, i] { setCurrentPage(i); });
    a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
  }
  view->addSeparator();
  QMenu* theme = view->addMenu(tr("&Theme"));
  auto* group = new QActionGroup(this);
  const std::pair<QString, AppSettings::Theme> themes[] = {
      {tr("System"), AppSettings::Theme::System},
      {tr("Light"), AppSettings::Theme::Light},
      {tr("Dark"), AppSettings::Theme::Dark}};
  for (const auto& [name, t] : themes) {
    QAction* a = theme->addAction(name, this, [this, t = t] {
      m_settings.setTheme(t);
      applyTheme(t);
    });
    a->setCheckable(true);
    a->setChecked(m_settings.theme() == t);
    group->addAction(a);
  }

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  QAction* about = help->addAction(tr("&About Arclight"), this, [this] {
    AboutDialog dlg(m_session->engineVersion(), this);
    dlg.exec();
  });
  about->setShortcut(QKeySequence::HelpContents);
}

void MainWindow::startEngine(bool forceLocal) {
  m_session->start(m_settings, forceLocal);
}

void MainWindow::setCurrentPage(int page) {
  m_sidebar->setCurrentRow(qBound(0, page, PageCount - 1));
}

int MainWindow::currentPage() const {
  return m_pages->currentIndex();
}

QString MainWindow::bannerText() const {
  return m_banner->isVisible() ? m_banner->text() : QString();
}

QString MainWindow::statusText() const {
  return QStringList{m_stateLabel->text(), m_modelLabel->text(), m_speedLabel->text(),
                     m_memoryLabel->text()}
      .join(QStringLiteral(" | "));
}

void MainWindow::showMessage(const QString& message) {
  m_banner->setText(message);
  m_banner->setVisible(!message.isEmpty());
}

void MainWindow::updateStatus() {
  const EngineClient::Connection c = m_session->client()->connection();
  QString state;
  switch (c) {
    case EngineClient::Connection::Offline:
      state = tr("Engine: offline");
      break;
    case EngineClient::Connection::Connecting:
      state = tr("Engine: connecting…");
      break;
    case EngineClient::Connection::Reconnecting:
      state = tr("Engine: reconnecting…");
      break;
    case EngineClient::Connection::Connected:
      state = tr("Engine: %1").arg(engineStateName(m_session->state()));
      if (!m_session->backendText().isEmpty())
        state += QStringLiteral(" · ") + m_session->backendText();
      break;
  }
  m_stateLabel->setText(state);
  m_stateLabel->setToolTip(m_session->backendReason());
  m_modelLabel->setText(m_session->loadedModel().isEmpty()
                            ? tr("No model loaded")
                            : tr("Model: %1").arg(m_session->loadedModel()));
  const StatsSnapshot& s = m_session->stats();
  m_speedLabel->setText(c == EngineClient::Connection::Connected
                            ? tr("%1 tok/s").arg(decimal(s.decodeTokensPerSec, 1))
                            : QString());
  QStringList mem;
  for (const RankMemory& m : s.memory)
    mem << tr("box %1: %2 / %3")
               .arg(m.host.isEmpty() ? QString::number(m.rank + 1) : m.host,
                    formatBytes(m.usedBytes), formatBytes(m.totalBytes));
  m_memoryLabel->setText(mem.join(QStringLiteral("  ")));
}

void MainWindow::applyHubSettings() {
  m_modelsPage->hubBrowser()->setBaseUrl(m_settings.hubUrl());
  m_modelsPage->hubBrowser()->setDownloadDir(m_settings.downloadDir());
}

void MainWindow::openSettings() {
  const QString language = m_settings.language();
  SettingsDialog dlg(m_settings, this);
  if (dlg.exec() != QDialog::Accepted) return;
  applyTheme(m_settings.theme());
  applyHubSettings();
  if (m_settings.language() != language)
    QMessageBox::information(this, tr("Language"),
                             tr("The new language is used when Arclight starts again."));
  m_session->stopLocalEngine();
  startEngine();
}

void MainWindow::closeEvent(QCloseEvent* e) {
  m_settings.setWindowGeometry(saveGeometry());
  m_settings.setWindowState(saveState());
  m_settings.setCurrentPage(currentPage());
  m_settings.sync();
  m_session->stopLocalEngine();
  QMainWindow::closeEvent(e);
}

}  // namespace arc::app
