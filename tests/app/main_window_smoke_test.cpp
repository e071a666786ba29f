// Opens the main window offscreen with no engine, switches every page, and saves a screenshot of
// each under the build tree (ARC_APP_SCREENSHOT_DIR) so a person can look at them.
#include <gtest/gtest.h>

#include <QDir>
#include <QStandardPaths>
#include <QTest>

#include "Application.h"
#include "BenchResultModel.h"
#include "BenchRunner.h"
#include "BenchmarkPage.h"
#include "ChatController.h"
#include "ChatPage.h"
#include "ClusterPage.h"
#include "ConversationExport.h"
#include "ConversationListModel.h"
#include "EngineClient.h"
#include "EngineSession.h"
#include "FitController.h"
#include "MainWindow.h"
#include "MessageWidget.h"
#include "ModelListModel.h"
#include "ModelsPage.h"
#include "MonitorPage.h"
#include "SettingsDialog.h"

using namespace arc::app;

TEST(MainWindowSmoke, OpensSwitchesPagesAndSavesScreenshots) {
  QStandardPaths::setTestModeEnabled(true);  // settings go to a test location
  const QString dir = QStringLiteral(ARC_APP_SCREENSHOT_DIR);
  ASSERT_TRUE(QDir().mkpath(dir));
  MainWindow w;
  w.resize(1400, 900);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  // No engine binary next to the test: the app says so and keeps working offline.
  w.startEngine(/*forceLocal=*/true);
  QTest::qWait(50);
  EXPECT_TRUE(w.bannerText().startsWith(QStringLiteral("engine not available")))
      << w.bannerText().toStdString();
  EXPECT_TRUE(w.statusText().contains(QStringLiteral("offline"))) << w.statusText().toStdString();
  for (int page = 0; page < MainWindow::PageCount; ++page) {
    QTest::keyClick(&w, Qt::Key(Qt::Key_1 + page), Qt::ControlModifier);
    QTest::qWait(30);
    EXPECT_EQ(w.currentPage(), page);
    const QString path = QDir(dir).filePath(QStringLiteral("page_%1.png").arg(page));
    EXPECT_TRUE(w.grab().save(path)) << path.toStdString();
  }
}

TEST(MainWindowSmoke, GermanTranslationIsCompleteForEveryContext) {
  ASSERT_EQ(installLanguage(QStringLiteral("de")), QStringLiteral("de"));
  // One string per class context: the contexts tr() uses must match the .ts file's.
  EXPECT_EQ(MainWindow::tr("Models"), QStringLiteral("Modelle"));
  EXPECT_EQ(ModelsPage::tr("Load"), QStringLiteral("Laden"));
  EXPECT_EQ(ModelListModel::tr("Family"), QStringLiteral("Familie"));
  EXPECT_EQ(EngineClient::tr("HTTP %1"), QStringLiteral("HTTP %1"));
  EXPECT_EQ(FitController::tr("tight"), QStringLiteral("knapp"));
  EXPECT_EQ(ModelsPage::tr("Fits on %n box(es)", nullptr, 2), QStringLiteral("Passt auf 2 Boxen"));
  EXPECT_EQ(engineStateName(EngineState::Ready), QStringLiteral("bereit"));
  EXPECT_EQ(ChatPage::tr("Send"), QStringLiteral("Senden"));
  EXPECT_EQ(MessageWidget::tr("Regenerate"), QStringLiteral("Neu erzeugen"));
  EXPECT_EQ(ChatController::tr("The engine stopped with an error: %1"),
            QStringLiteral("Die Engine hat mit einem Fehler abgebrochen: %1"));
  EXPECT_EQ(ConversationListModel::tr("New conversation"), QStringLiteral("Neue Unterhaltung"));
  EXPECT_EQ(MonitorPage::tr("Resume"), QStringLiteral("Fortsetzen"));
  EXPECT_EQ(MonitorPage::tr("TTFT p50 %1 ms, p95 %2 ms over %n request(s)", nullptr, 5),
            QStringLiteral("TTFT p50 %1 ms, p95 %2 ms über 5 Anfragen"));
  EXPECT_EQ(BenchmarkPage::tr("Run benchmark"), QStringLiteral("Benchmark starten"));
  EXPECT_EQ(BenchResultModel::tr("Scenario"), QStringLiteral("Szenario"));
  EXPECT_EQ(BenchRunner::tr("cancelled"), QStringLiteral("abgebrochen"));
  EXPECT_EQ(SettingsDialog::tr("Compute:"), QStringLiteral("Rechnen auf:"));
  EXPECT_EQ(ModelsPage::tr("Measure quality…"), QStringLiteral("Qualität messen…"));
  EXPECT_EQ(EngineSession::tr("CUDA (device %1)"), QStringLiteral("CUDA (Gerät %1)"));
  EXPECT_EQ(SettingsDialog::tr("Cancel"), QStringLiteral("Abbrechen"));
  EXPECT_EQ(ChatPage::tr("Export…"), QStringLiteral("Exportieren…"));
  EXPECT_EQ(ConversationExport::tr("%n image(s) attached", nullptr, 2),
            QStringLiteral("2 Bilder angehängt"));
  EXPECT_EQ(EngineClient::describeRoute(QStringLiteral("/engine/load")),
            QStringLiteral("das Laden des Modells"));
  EXPECT_EQ(ClusterPage::tr("%n box(es), %1 rank(s); not saved yet (Save writes %2)", "", 1),
            QStringLiteral("1 Box, %1 Rang/Ränge; noch nicht gespeichert (Speichern schreibt %2)"));
  EXPECT_EQ(QLocale().toString(41.5, 'f', 1), QStringLiteral("41,5"));  // numbers follow too
  // The fit's reason, said by the app (the library's is English only).
  EXPECT_EQ(FitController::tr("on each of %1 boxes").arg(2),
            QStringLiteral("auf jeder von 2 Boxen"));
  {
    MainWindow w;
    EXPECT_TRUE(w.statusText().contains(QStringLiteral("Kein Modell geladen")))
        << w.statusText().toStdString();
  }
  EXPECT_EQ(installLanguage(QStringLiteral("en")), QString());
  EXPECT_EQ(MainWindow::tr("Models"), QStringLiteral("Models"));
  // English plural forms come from arclight_en.ts.
  EXPECT_EQ(ModelsPage::tr("Fits on %n box(es)", nullptr, 1), QStringLiteral("Fits on 1 box"));
  EXPECT_EQ(ModelsPage::tr("Fits on %n box(es)", nullptr, 3), QStringLiteral("Fits on 3 boxes"));
  EXPECT_EQ(MonitorPage::tr("TTFT p50 %1 ms, p95 %2 ms over %n request(s)", nullptr, 1),
            QStringLiteral("TTFT p50 %1 ms, p95 %2 ms over 1 request"));
}

TEST(MainWindowSmoke, DarkThemeModelsPageScreenshot) {
  applyTheme(AppSettings::Theme::Dark);
  MainWindow w;
  w.resize(1400, 900);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  w.setCurrentPage(MainWindow::ModelsPageIndex);
  ASSERT_TRUE(w.modelsPage()->selectModel(QStringLiteral("qwen3-235b-a22b")));
  FitInputs in = w.modelsPage()->fitController()->inputs();
  in.boxes = 2;
  in.buildIndex = 2;
  w.modelsPage()->setInputs(in);
  QTest::qWait(50);
  EXPECT_TRUE(w.grab().save(
      QDir(QStringLiteral(ARC_APP_SCREENSHOT_DIR)).filePath(QStringLiteral("models_dark.png"))));
  applyTheme(AppSettings::Theme::Light);
}
