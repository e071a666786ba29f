// Settings: the local engine's backend round-trips, and attach mode disables what only a local
// engine uses (model folders, backend, port, hostfile).
#include <gtest/gtest.h>

#include <QComboBox>
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
