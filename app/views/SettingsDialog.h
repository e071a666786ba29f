// Engine (local or remote), model folders, appearance and language.
#pragma once

#include <QDialog>

#include "AppSettings.h"

class QCheckBox;
class QLabel;
class QPushButton;
class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QRadioButton;
class QSpinBox;

namespace arc::app {

class SettingsDialog : public QDialog {
  Q_OBJECT
 public:
  explicit SettingsDialog(AppSettings& settings, QWidget* parent = nullptr);
  // Writes the fields to the settings (called on OK).
  void save();
  // Asks the engine at the URL (or the local port) for its status with the key as typed, and
  // shows the answer under the fields: version, state and model, or why it failed.
  void testConnection();
  QString testResult() const;

 private:
  void updateEnabled();

  AppSettings& m_settings;
  QRadioButton* m_local = nullptr;
  QRadioButton* m_remote = nullptr;
  QCheckBox* m_startLocal = nullptr;
  QSpinBox* m_port = nullptr;
  QLineEdit* m_hostfile = nullptr;
  QSpinBox* m_ranks = nullptr;
  QComboBox* m_backend = nullptr;
  QLineEdit* m_url = nullptr;
  QLineEdit* m_apiKey = nullptr;
  QPushButton* m_test = nullptr;
  QLabel* m_testResult = nullptr;
  QPlainTextEdit* m_modelDirs = nullptr;
  QComboBox* m_theme = nullptr;
  QComboBox* m_language = nullptr;
  QLineEdit* m_hubUrl = nullptr;
};

}  // namespace arc::app
