// Opens the main window offscreen with no engine, switches every page, and saves a screenshot of
// each under the build tree (ARC_APP_SCREENSHOT_DIR) so a person can look at them.
#include <gtest/gtest.h>

#include <QDir>
#include <QStandardPaths>
#include <QTest>

#include "MainWindow.h"
#include "ModelListModel.h"
#include "ModelsPage.h"

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
