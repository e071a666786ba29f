// The Cluster page: the boxes (memory, swap and page cache as bars, GPU), every RDMA port with
// its state and a hint, the probe's findings, the link test, and the hostfile editor with the
// mpirun command it gives. State lives in ClusterController and the item models; this only
// shows it.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableView;
class QTableWidget;
class QTimer;

namespace arc::app {

class ClusterBoxModel;
class ClusterController;
class ClusterPortModel;
class EngineSession;

class ClusterPage : public QWidget {
  Q_OBJECT
 public:
  explicit ClusterPage(EngineSession* session, QWidget* parent = nullptr);

  ClusterController* controller() const { return m_controller; }
  ClusterBoxModel* boxModel() const { return m_boxes; }
  ClusterPortModel* portModel() const { return m_ports; }
  QString hostfileText() const;
  void setHostfileText(const QString& text);
  QString hostfileStatus() const;
  QString commandText() const;
  QString linkTestText() const;
  // Saves the editor's text where the settings say (see Hostfile::pathFor); false when invalid.
  bool saveHostfile();

 protected:
  void showEvent(QShowEvent* e) override;
  void hideEvent(QHideEvent* e) override;

 private:
  void showSnapshot();
  void showLinkTest();
  void validateHostfile();

  EngineSession* m_session;
  ClusterController* m_controller;
  ClusterBoxModel* m_boxes;
  ClusterPortModel* m_ports;
  QLabel* m_status = nullptr;
  QLabel* m_hints = nullptr;
  QTableView* m_boxView = nullptr;
  QTableView* m_portView = nullptr;
  QPushButton* m_refresh = nullptr;
  QPushButton* m_linkButton = nullptr;
  QLabel* m_linkStatus = nullptr;
  QTableWidget* m_linkTable = nullptr;
  QPlainTextEdit* m_hostfile = nullptr;
  QLabel* m_hostfileStatus = nullptr;
  QPushButton* m_save = nullptr;
  QString
      m_savedText;  // what the hostfile on disk holds (null: none); the note says "saved" only then
  QLineEdit* m_command = nullptr;
  QTimer* m_timer = nullptr;
};

}  // namespace arc::app
