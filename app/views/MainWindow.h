// The main window: a sidebar of pages, a banner for engine problems, the status bar (engine state,
// loaded model, live tokens/s, memory per box), menus and shortcuts; its geometry is remembered.
#pragma once

#include <QMainWindow>

#include "AppSettings.h"

class QLabel;
class QListWidget;
class QStackedWidget;

namespace arc::app {

class EngineSession;
class ModelsPage;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  enum Page {
    ModelsPageIndex = 0,
    ChatPageIndex,
    MonitorPageIndex,
    BenchmarkPageIndex,
    ClusterPageIndex,
    PageCount
  };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts or attaches to the engine as the settings say.
  void startEngine(bool forceLocal = false);
  void setCurrentPage(int page);
  int currentPage() const;
  EngineSession* session() const { return m_session; }
  ModelsPage* modelsPage() const { return m_modelsPage; }
  QString bannerText() const;
  QString statusText() const;  // the status bar's labels joined, for tests

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  void buildMenus();
  void updateStatus();
  void showMessage(const QString& message);
  void openSettings();
  void applyHubSettings();  // hub URL and download folder from Settings

  AppSettings m_settings;
  EngineSession* m_session;
  QListWidget* m_sidebar = nullptr;
  QStackedWidget* m_pages = nullptr;
  ModelsPage* m_modelsPage = nullptr;
  QLabel* m_banner = nullptr;
  QLabel* m_stateLabel = nullptr;
  QLabel* m_modelLabel = nullptr;
  QLabel* m_speedLabel = nullptr;
  QLabel* m_memoryLabel = nullptr;
};

}  // namespace arc::app
