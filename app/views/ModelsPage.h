// The Models page: catalog and local GGUF files side by side (search, filters), a detail pane, the
// fit view with its controls and the 1–4 box table, and Load/Unload with progress.
#pragma once

#include <QWidget>

#include "FitController.h"
#include "LoadSettings.h"
#include "QualityRunner.h"
#include "QualityStore.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;

namespace arc::app {

class BoxTableModel;
class EngineSession;
class FitView;
class HubBrowser;
class ModelFilterProxy;
class ModelListModel;

class ModelsPage : public QWidget {
  Q_OBJECT
 public:
  explicit ModelsPage(EngineSession* session, QWidget* parent = nullptr);

  // Reads the catalog (the embedded one by default); returns false with a visible message if bad.
  bool loadCatalog(const QString& path = QStringLiteral(":/catalog/models.json"));

  FitController* fitController() { return &m_fit; }
  FitView* fitView() const { return m_fitView; }
  ModelListModel* catalogModel() const { return m_catalog; }
  ModelListModel* localModel() const { return m_local; }
  HubBrowser* hubBrowser() const { return m_hub; }
  // Selects a model by id in the catalog (or path among local files); false when absent.
  bool selectModel(const QString& id);
  void setInputs(const FitInputs& inputs);  // also updates the controls
  // What Load sends for the selected file: the planner's context, concurrency (parallel
  // sequences), KV type (when the engine keeps that type) and reserve.
  LoadSettings loadSettings() const;
  void loadSelected();  // the Load button

 private:
  QWidget* buildListPane();
  QWidget* buildDetailPane();
  void onSelectionChanged();
  void onInputsEdited();
  void updateFitDisplay();
  void updateFitsColumn();
  void updateLoadControls();
  void updateFamilies();
  void showDetails(const CatalogEntry& e);
  void onLocalModels(const QJsonArray& models);
  void makeDemoModel();
  void measureQuality();  // asks for a reference file, runs eval, keeps the result
  // A local file's inputs: its remembered load settings, else its own maximum context capped
  // by what fits.
  void applyLocalDefaults(const CatalogEntry& e);

  EngineSession* m_session;
  FitController m_fit;
  ModelListModel* m_catalog;
  ModelListModel* m_local;
  ModelFilterProxy* m_catalogProxy;
  ModelFilterProxy* m_localProxy;
  BoxTableModel* m_boxTable;
  bool m_updatingControls = false;

  QLineEdit* m_search = nullptr;
  QComboBox* m_family = nullptr;
  QComboBox* m_size = nullptr;
  QCheckBox* m_fitsOnly = nullptr;
  QTabWidget* m_tabs = nullptr;
  QTableView* m_catalogView = nullptr;
  QTableView* m_localView = nullptr;
  QLabel* m_localMessage = nullptr;
  QPushButton* m_refresh = nullptr;
  QPushButton* m_demo = nullptr;
  QLabel* m_catalogMessage = nullptr;
  HubBrowser* m_hub = nullptr;

  QLabel* m_details = nullptr;
  QComboBox* m_build = nullptr;
  QSpinBox* m_boxes = nullptr;
  QSpinBox* m_context = nullptr;
  QSpinBox* m_concurrency = nullptr;
  QComboBox* m_kvDtype = nullptr;
  QDoubleSpinBox* m_reserve = nullptr;
  QDoubleSpinBox* m_usable = nullptr;
  QLabel* m_verdict = nullptr;
  QLabel* m_numbers = nullptr;
  FitView* m_fitView = nullptr;
  QTableView* m_boxTableView = nullptr;
  QPushButton* m_load = nullptr;
  QPushButton* m_unload = nullptr;
  QPushButton* m_cancelLoad = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_loadMessage = nullptr;
  QPushButton* m_measure = nullptr;
  QPushButton* m_measureCancel = nullptr;
  QLabel* m_measureMessage = nullptr;
  QualityStore m_quality{QualityStore::defaultFileName()};
  LoadSettingsStore m_loadSettings{LoadSettingsStore::defaultFileName()};
  QualityRunner* m_qualityRunner = nullptr;
};

}  // namespace arc::app
