#include "LogDialog.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "EngineSession.h"

namespace arc::app {

LogDialog::LogDialog(EngineSession* session, QWidget* parent)
    : QDialog(parent), m_session(session) {
  setWindowTitle(tr("Engine log"));
  resize(800, 500);
  auto* layout = new QVBoxLayout(this);
  m_text = new QPlainTextEdit(this);
  m_text->setReadOnly(true);
  m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_text->setMaximumBlockCount(5000);
  layout->addWidget(m_text);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  // Named here, not by Qt: the labels are translated even without Qt's own translations.
  buttons->button(QDialogButtonBox::Close)->setText(tr("Close"));
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);

  EngineProcess* process = session->process();
  if (process->isRunning() || !process->log().isEmpty()) {
    // The engine this app started: its whole output, as it comes.
    const QString log = process->log();
    m_text->setPlainText(log.isEmpty() ? tr("(the local engine has not written anything)") : log);
    connect(process, &EngineProcess::logAppended, this,
            [this](const QString& lines) { m_text->appendPlainText(lines); });
    return;
  }
  // An engine this app attached to: its recent lines, asked for (with the API key).
  auto* refresh = buttons->addButton(tr("Refresh"), QDialogButtonBox::ActionRole);
  connect(refresh, &QPushButton::clicked, this, &LogDialog::fetchRemote);
  connect(session->client(), &EngineClient::logReceived, this, [this](const QStringList& lines) {
    m_text->setPlainText(lines.isEmpty() ? tr("(the engine has not logged anything yet)")
                                         : lines.join(QLatin1Char('\n')));
    m_text->moveCursor(QTextCursor::End);
  });
  connect(session->client(), &EngineClient::requestFailed, this,
          [this](const QString& route, const QString& message) {
            if (route == QLatin1String("/engine/log"))
              m_text->setPlainText(tr("The engine's log is not available: %1").arg(message));
          });
  fetchRemote();
}

void LogDialog::fetchRemote() {
  if (m_session->client()->connection() != EngineClient::Connection::Connected) {
    m_text->setPlainText(tr("No engine connected."));
    return;
  }
  m_text->setPlainText(tr("Asking the engine for its recent log…"));
  m_session->client()->fetchLog(1000);
}

QString LogDialog::text() const {
  return m_text->toPlainText();
}

}  // namespace arc::app
