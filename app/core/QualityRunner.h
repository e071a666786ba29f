// Runs `arclight-engine eval` for the Models page: a model file against a reference file, with
// progress, cancel (the engine keeps what it measured) and the result as a QualityRecord.
#pragma once

#include <QObject>
#include <QProcess>

#include "QualityStore.h"

namespace arc::app {

class QualityRunner : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;
  ~QualityRunner() override;

  // Windows of the built-in text to score (0: all of it, several minutes on a big model).
  bool start(const QString& engine, const QString& model, const QString& reference,
             int maxWindows = 32);
  void cancel();  // SIGTERM: eval stops after the window it is in and reports it
  bool isRunning() const { return m_proc && m_proc->state() != QProcess::NotRunning; }

 signals:
  void progress(const QString& line);  // eval's own progress line (windows, time left)
  void finished(const arc::app::QualityRecord& record);
  void failed(const QString& message);

 private:
  QProcess* m_proc = nullptr;
  QByteArray m_stderrTail;
};

}  // namespace arc::app
