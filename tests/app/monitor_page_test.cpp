// The Monitor page offscreen: an hour of samples plots quickly, pause freezes the window, hover
// shows a readout, CSV and PNG export write files; a screenshot of the filled page is saved.
#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "MonitorPage.h"

using namespace arc::app;

namespace {
void fill(MonitorModel* m, int seconds, double t0) {
  for (int i = 0; i < seconds; ++i) {
    StatsSnapshot s;
    s.decodeTokensPerSec = 40 + 10 * std::sin(i / 30.0);
    s.prefillTokensPerSec = i % 20 < 3 ? 1500 : 0;
    s.running = 1 + (i / 40) % 4;
    s.waiting = (i / 90) % 2;
    s.kvBlocksTotal = 400;
    s.kvBlocksUsed = 50 + (i % 200);
    s.kvBlocksCached = 30;
    s.prefixHitRate = 0.4;
    s.memory = {RankMemory{0, QString(), qint64(60.0 * (1ll << 30)), 0, 128ll << 30},
                RankMemory{1, QString(), qint64(58.0 * (1ll << 30)), 0, 128ll << 30}};
    m->addStats(s, t0 + i);
    if (i % 7 == 0) {
      RequestRecord r;
      r.ttftMs = 150 + (i % 50) * 4;
      r.decodeTokensPerSec = 35 + (i % 13);
      m->addRequest(r, t0 + i + 0.5);
    }
  }
}
}  // namespace

TEST(MonitorPage, HourOfSamplesPlotsPausesExportsAndReadsOut) {
  MonitorPage page(nullptr);
  page.resize(1300, 900);
  page.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&page));
  const double t0 = 1764450000;  // 2025-11-29T21:00:00Z
  fill(page.model(), 3600, t0);
  page.setWindowMinutes(60);
  QElapsedTimer timer;
  timer.start();
  for (int i = 0; i < 5; ++i) page.refresh();
  // Five full refreshes of all charts with an hour of data; generous for a loaded 2-core box.
  EXPECT_LT(timer.elapsed(), 2500) << "refreshes took " << timer.elapsed() << " ms";
  QTest::qWait(50);

  page.setWindowMinutes(5);
  page.setPaused(true);
  RequestRecord late;
  late.ttftMs = 99999;
  page.model()->addRequest(late, t0 + 4000);
  page.refresh();
  QTemporaryDir dir;
  const QString csv = dir.filePath(QStringLiteral("m.csv"));
  ASSERT_TRUE(page.exportCsv(csv));
  QFile f(csv);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  const QByteArray text = f.readAll();
  // Paused at the newest sample: 300 rows of the 5-minute window, no request from after the pause.
  const QList<QByteArray> sampleRows = text.left(text.indexOf("\n\n")).split('\n');
  EXPECT_EQ(sampleRows.size(), 301);
  EXPECT_FALSE(text.contains("99999"));
  page.setPaused(false);
  page.setWindowMinutes(60);  // the late request moved the end: an hour still shows the samples

  const QList<QCustomPlot*> plots = page.findChildren<QCustomPlot*>();
  ASSERT_EQ(plots.size(), 7);
  QCustomPlot* decode = plots.first();
  const QPoint mid(decode->axisRect()->center());
  QTest::mouseMove(decode, mid);
  QTest::qWait(20);
  EXPECT_TRUE(page.readoutText().contains(QStringLiteral("all requests")))
      << page.readoutText().toStdString();

  const QString shots = QStringLiteral(ARC_APP_SCREENSHOT_DIR);
  QDir().mkpath(shots);
  EXPECT_TRUE(page.exportPng(QDir(shots).filePath(QStringLiteral("monitor_charts.png"))));
  EXPECT_TRUE(page.grab().save(QDir(shots).filePath(QStringLiteral("monitor_page.png"))));
}
