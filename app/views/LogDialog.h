// The engine's log: the local engine's output, live, or an attached engine's recent lines.
#pragma once

#include <QDialog>

class QPlainTextEdit;

namespace arc::app {

class EngineSession;

class LogDialog : public QDialog {
  Q_OBJECT
 public:
  // The local engine's output when this app started it; otherwise the attached engine's recent
  // log (GET /engine/log), with Refresh.
  explicit LogDialog(EngineSession* session, QWidget* parent = nullptr);
  QString text() const;

 private:
  void fetchRemote();
  EngineSession* m_session;
  QPlainTextEdit* m_text = nullptr;
};

}  // namespace arc::app
