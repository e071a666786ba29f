// The local engine's log, live.
#pragma once

#include <QDialog>

class QPlainTextEdit;

namespace arc::app {

class EngineProcess;

class LogDialog : public QDialog {
  Q_OBJECT
 public:
  explicit LogDialog(EngineProcess* process, QWidget* parent = nullptr);

 private:
  QPlainTextEdit* m_text = nullptr;
};

}  // namespace arc::app
