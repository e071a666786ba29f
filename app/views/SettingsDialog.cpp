#include "SettingsDialog.h"

#include "EngineClient.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace arc::app {

SettingsDialog::SettingsDialog(AppSettings& settings, QWidget* parent)
    : QDialog(parent), m_settings(settings) {
  setWindowTitle(tr("Settings"));
  auto* layout = new QVBoxLayout(this);

  auto* engineBox = new QGroupBox(tr("Engine"), this);
  auto* form = new QFormLayout(engineBox);
  m_local = new QRadioButton(tr("Run a local engine"), engineBox);
  m_remote = new QRadioButton(tr("Attach to a running engine"), engineBox);
  form->addRow(m_local);
  m_startLocal = new QCheckBox(tr("Start it when the app starts"), engineBox);
  form->addRow(QString(), m_startLocal);
  m_port = new QSpinBox(engineBox);
  m_port->setRange(1, 65535);
  form->addRow(tr("Port:"), m_port);
  auto* hostRow = new QHBoxLayout;
  m_hostfile = new QLineEdit(engineBox);
  m_hostfile->setPlaceholderText(tr("none: one box"));
  auto* browse = new QPushButton(tr("Browse…"), engineBox);
  hostRow->addWidget(m_hostfile);
  hostRow->addWidget(browse);
  form->addRow(tr("MPI hostfile:"), hostRow);
  m_ranks = new QSpinBox(engineBox);
  m_ranks->setRange(1, 64);
  form->addRow(tr("Processes (boxes):"), m_ranks);
  m_backend = new QComboBox(engineBox);
  m_backend->addItem(tr("Automatic (GPU when there is one)"), QStringLiteral("auto"));
  m_backend->addItem(tr("CUDA GPU"), QStringLiteral("cuda"));
  m_backend->addItem(tr("CPU"), QStringLiteral("cpu"));
  form->addRow(tr("Compute:"), m_backend);
  form->addRow(m_remote);
  m_url = new QLineEdit(engineBox);
  m_url->setPlaceholderText(QStringLiteral("http://spark-1:8080"));
  form->addRow(tr("URL:"), m_url);
  m_apiKey = new QLineEdit(engineBox);
  m_apiKey->setEchoMode(QLineEdit::Password);
  form->addRow(tr("API key:"), m_apiKey);
  m_modelDirs = new QPlainTextEdit(engineBox);
  m_modelDirs->setPlaceholderText(tr("One folder per line"));
  m_modelDirs->setMaximumHeight(70);
  form->addRow(tr("Model folders:"), m_modelDirs);
  m_test = new QPushButton(tr("Test connection"), engineBox);
  m_testResult = new QLabel(engineBox);
  m_testResult->setWordWrap(true);
  m_testResult->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* testRow = new QHBoxLayout;
  testRow->addWidget(m_test);
  testRow->addWidget(m_testResult, 1);
  form->addRow(QString(), testRow);
  connect(m_test, &QPushButton::clicked, this, &SettingsDialog::testConnection);
  layout->addWidget(engineBox);

  auto* uiBox = new QGroupBox(tr("Appearance"), this);
  auto* uiForm = new QFormLayout(uiBox);
  m_theme = new QComboBox(uiBox);
  m_theme->addItem(tr("System"), int(AppSettings::Theme::System));
  m_theme->addItem(tr("Light"), int(AppSettings::Theme::Light));
  m_theme->addItem(tr("Dark"), int(AppSettings::Theme::Dark));
  uiForm->addRow(tr("Theme:"), m_theme);
  m_language = new QComboBox(uiBox);
  m_language->addItem(tr("System language"), QString());
  m_language->addItem(QStringLiteral("English"), QStringLiteral("en"));
  m_language->addItem(QStringLiteral("Deutsch"), QStringLiteral("de"));
  uiForm->addRow(tr("Language:"), m_language);
  layout->addWidget(uiBox);

  auto* hubBox = new QGroupBox(tr("Hugging Face"), this);
  auto* hubForm = new QFormLayout(hubBox);
  m_hubUrl = new QLineEdit(hubBox);
  m_hubUrl->setObjectName(QStringLiteral("hubUrl"));  // always filled: the default shows as text
  hubForm->addRow(tr("Hub URL:"), m_hubUrl);
  layout->addWidget(hubBox);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  // Named here, not by Qt: the labels are translated even without Qt's own translations.
  buttons->button(QDialogButtonBox::Ok)->setText(tr("OK"));
  buttons->button(QDialogButtonBox::Cancel)->setText(tr("Cancel"));
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, [this] {
    save();
    accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("MPI hostfile"));
    if (!f.isEmpty()) m_hostfile->setText(f);
  });
  connect(m_local, &QRadioButton::toggled, this, &SettingsDialog::updateEnabled);

  const bool local = settings.engineMode() == AppSettings::EngineMode::Local;
  m_local->setChecked(local);
  m_remote->setChecked(!local);
  m_startLocal->setChecked(settings.startLocalEngine());
  m_port->setValue(settings.localPort());
  m_hostfile->setText(settings.hostfile());
  m_ranks->setValue(settings.ranks());
  m_backend->setCurrentIndex(qMax(0, m_backend->findData(settings.localBackend())));
  m_url->setText(settings.engineUrl().toString());
  m_apiKey->setText(settings.apiKey());
  m_modelDirs->setPlainText(settings.modelDirs().join(QLatin1Char('\n')));
  m_theme->setCurrentIndex(m_theme->findData(int(settings.theme())));
  m_language->setCurrentIndex(qMax(0, m_language->findData(settings.language())));
  m_hubUrl->setText(settings.hubUrl().toString());
  updateEnabled();
}

void SettingsDialog::updateEnabled() {
  const bool local = m_local->isChecked();
  for (QWidget* w : {static_cast<QWidget*>(m_startLocal), static_cast<QWidget*>(m_port),
                     static_cast<QWidget*>(m_hostfile), static_cast<QWidget*>(m_ranks),
                     static_cast<QWidget*>(m_backend), static_cast<QWidget*>(m_modelDirs)})
    w->setEnabled(local);
  m_url->setEnabled(!local);
  m_modelDirs->setToolTip(local ? QString()
                                : tr("An attached engine reads the model folders it was started "
                                     "with; set them where it runs."));
}

void SettingsDialog::testConnection() {
  const QUrl url = m_local->isChecked()
                       ? QUrl(QStringLiteral("http://127.0.0.1:%1").arg(m_port->value()))
                       : QUrl::fromUserInput(m_url->text().trimmed());
  if (!url.isValid() || url.host().isEmpty()) {
    m_testResult->setText(tr("Enter the engine's URL, e.g. http://spark-1:8080"));
    return;
  }
  // A client of its own: the app's connection is left alone until OK.
  auto* probe = new EngineClient(this);
  probe->setBaseUrl(url);
  probe->setApiKey(m_apiKey->text());
  probe->setRequestTimeout(5000);
  m_test->setEnabled(false);
  m_testResult->setText(tr("Asking %1…").arg(url.toString()));
  connect(probe, &EngineClient::statusReceived, this, [this, probe](const EngineStatus& s) {
    const QString model =
        s.model.id.isEmpty() ? tr("no model loaded") : tr("serving %1").arg(s.model.id);
    m_testResult->setText(tr("Connected: engine %1, %2, %3.")
                              .arg(s.version.isEmpty() ? tr("(version unknown)") : s.version,
                                   engineStateName(s.state), model));
    m_test->setEnabled(true);
    probe->deleteLater();
  });
  connect(probe, &EngineClient::requestFailed, this,
          [this, probe](const QString&, const QString& message) {
            m_testResult->setText(tr("Not connected: %1").arg(message));
            m_test->setEnabled(true);
            probe->deleteLater();
          });
  probe->fetchStatus();
}

QString SettingsDialog::testResult() const {
  return m_testResult->text();
}

void SettingsDialog::save() {
  m_settings.setEngineMode(m_local->isChecked() ? AppSettings::EngineMode::Local
                                                : AppSettings::EngineMode::Remote);
  m_settings.setStartLocalEngine(m_startLocal->isChecked());
  m_settings.setLocalPort(m_port->value());
  m_settings.setHostfile(m_hostfile->text().trimmed());
  m_settings.setRanks(m_ranks->value());
  m_settings.setLocalBackend(m_backend->currentData().toString());
  m_settings.setEngineUrl(QUrl::fromUserInput(m_url->text().trimmed()));
  m_settings.setApiKey(m_apiKey->text());
  QStringList dirs;
  for (const QString& l : m_modelDirs->toPlainText().split(QLatin1Char('\n')))
    if (!l.trimmed().isEmpty()) dirs << l.trimmed();
  m_settings.setModelDirs(dirs);
  m_settings.setTheme(AppSettings::Theme(m_theme->currentData().toInt()));
  m_settings.setLanguage(m_language->currentData().toString());
  const QString hub = m_hubUrl->text().trimmed();
  m_settings.setHubUrl(hub.isEmpty() ? QUrl() : QUrl::fromUserInput(hub));
  m_settings.sync();
}

}  // namespace arc::app
