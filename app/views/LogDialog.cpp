#include "LogDialog.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QVBoxLayout>

#include "EngineProcess.h"

namespace arc::app {

LogDialog::LogDialog(EngineProcess* process, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Engine log"));
  resize(800, 500);
  auto* layout = new QVBoxLayout(this);
  m_text = new QPlainTextEdit(this);
  m_text->setReadOnly(true);
  m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_text->setMaximumBlockCount(5000);
  const QString log = process->log();
  m_text->setPlainText(log.isEmpty() ? tr("(the local engine has not written anything)") : log);
  layout->addWidget(m_text);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  connect(process, &EngineProcess::logAppended, this,
          [this](const QString& lines) { m_text->appendPlainText(lines); });
}

}  // namespace arc::app
