// Settings: the local engine's backend round-trips, and attach mode disables what only a local
// engine uses (model folders, backend, port, hostfile).
#include <gtest/gtest.h>

#include <QComboBox>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRadioButton>
#include <QTemporaryDir>

#include "SettingsDialog.h"

using namespace arc::app;

TEST(SettingsDialog, BackendRoundTripsAndAttachModeDisablesLocalFields) {
  QTemporaryDir dir;
  AppSettings settings(dir.filePath(QStringLiteral("s.ini")));
  EXPECT_EQ(settings.localBackend(), QStringLiteral("auto"));  // the default: GPU when present
  settings.setEngineMode(AppSettings::EngineMode::Local);
  settings.setLocalBackend(QStringLiteral("cpu"));
  SettingsDialog dlg(settings);

  QComboBox* backend = nullptr;
  for (QComboBox* c : dlg.findChildren<QComboBox*>())
    if (c->findData(QStringLiteral("cuda")) >= 0) backend = c;
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->currentData().toString(), QStringLiteral("cpu"));
  auto* folders = dlg.findChild<QPlainTextEdit*>();
  ASSERT_NE(folders, nullptr);
  EXPECT_TRUE(folders->isEnabled());

  QRadioButton* remote = nullptr;
  for (QRadioButton* r : dlg.findChildren<QRadioButton*>())
    if (r->text().contains(QStringLiteral("Attach"))) remote = r;
  ASSERT_NE(remote, nullptr);
  remote->setChecked(true);
  EXPECT_FALSE(folders->isEnabled());
  EXPECT_FALSE(backend->isEnabled());

  backend->setCurrentIndex(backend->findData(QStringLiteral("cuda")));
  dlg.save();
  EXPECT_EQ(settings.localBackend(), QStringLiteral("cuda"));
  EXPECT_EQ(settings.engineMode(), AppSettings::EngineMode::Remote);
}

// "Test connection" asks the engine at the typed URL with the typed key and says what it found,
// or why not, without touching the app's own connection or the saved settings.
#include <QTest>

#include "fake_engine.h"

TEST(SettingsDialog, TestConnectionReportsTheEngineOrWhyNot) {
  QTemporaryDir dir;
  AppSettings settings(dir.filePath(QStringLiteral("s.ini")));
  settings.setEngineMode(AppSettings::EngineMode::Remote);
  FakeEngine engine;
  ASSERT_TRUE(engine.listen());
  engine.setRequiredKey("right-key");
  engine.setResponse(
      "GET", "/engine/status", 200,
      R"({"state":"ready","version":"9.9.9","model":{"id":"tiny","path":"/m/t.gguf"}})");
  SettingsDialog dlg(settings);
  QLineEdit* url = nullptr;
  QLineEdit* key = nullptr;
  for (QLineEdit* e : dlg.findChildren<QLineEdit*>()) {
    if (e->placeholderText().startsWith(QStringLiteral("http"))) url = e;
    if (e->echoMode() == QLineEdit::Password) key = e;
  }
  ASSERT_NE(url, nullptr);
  ASSERT_NE(key, nullptr);
  url->setText(QStringLiteral("http://127.0.0.1:%1").arg(engine.port()));
  key->setText(QStringLiteral("right-key"));
  dlg.testConnection();
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return dlg.testResult().startsWith(QStringLiteral("Connected")); }, 5000))
      << dlg.testResult().toStdString();
  EXPECT_TRUE(dlg.testResult().contains(QStringLiteral("9.9.9")));
  EXPECT_TRUE(dlg.testResult().contains(QStringLiteral("tiny")));
  // A wrong key: said so, in words.
  key->setText(QStringLiteral("wrong"));
  dlg.testConnection();
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return dlg.testResult().startsWith(QStringLiteral("Not connected")); }, 5000))
      << dlg.testResult().toStdString();
  EXPECT_TRUE(dlg.testResult().contains(QStringLiteral("API key")))
      << dlg.testResult().toStdString();
  // Nothing listening: said so too.
  const quint16 port = engine.port();
  engine.close();
  url->setText(QStringLiteral("http://127.0.0.1:%1").arg(port));
  dlg.testConnection();
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return dlg.testResult().startsWith(QStringLiteral("Not connected")); }, 5000));
  EXPECT_TRUE(dlg.testResult().contains(QStringLiteral("not reachable")))
      << dlg.testResult().toStdString();
  // The saved settings did not change.
  EXPECT_TRUE(settings.apiKey().isEmpty());
}
