// The second round's details, offscreen: local files show family, parameters and active
// parameters from the GGUF summary and sizes in GiB; German shows the decimal comma; the
// Benchmark chart puts prefill on its own axis, compare headers name the runs and the prefill
// prompt fits the loaded context; charts follow the theme with their legends outside the data.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "BenchCompareModel.h"
#include "BenchmarkPage.h"
#include "CatalogEntry.h"
#include "EngineSession.h"
#include "FitView.h"
#include "MessageWidget.h"
#include "ModelListModel.h"
#include "MonitorPage.h"
#include "SeedTitles.h"

using namespace arc::app;

namespace {

// As /engine/local-models lists a file (engine_service.cpp local_models, gguf::to_json).
const char kLocalFile[] = R"({"path":"/models/Qwen3-30B-A3B-Q4_K_M.gguf",
  "name":"Qwen3-30B-A3B-Q4_K_M","file_bytes":18556686816,"loaded":false,"mmproj":false,
  "summary":{"architecture":"qwen3moe","n_params":30532122624,"n_active_params":3345477632,
             "hyperparameters":{"context_length":40960}}})";

// Restores the default locale when a test that switched it ends.
struct LocaleGuard {
  QLocale saved;
  ~LocaleGuard() { QLocale::setDefault(saved); }
};

}  // namespace

TEST(Details, LocalFilesShowFamilyParametersAndGiB) {
  const CatalogEntry e = CatalogEntry::fromLocalJson(QJsonDocument::fromJson(kLocalFile).object());
  EXPECT_EQ(e.family, QStringLiteral("qwen3moe"));
  EXPECT_EQ(e.contextLength, 40960);
  ModelListModel m;
  m.setEntries({e});
  auto cell = [&](int col) { return m.index(0, col).data().toString(); };
  EXPECT_EQ(cell(ModelListModel::FamilyColumn), QStringLiteral("qwen3moe"));
  EXPECT_EQ(cell(ModelListModel::ParamsColumn), QStringLiteral("30.5 B"));
  EXPECT_EQ(cell(ModelListModel::ActiveColumn), QStringLiteral("3.3 B"));
  // 18556686816 bytes / 2^30 = 17.28 GiB.
  EXPECT_EQ(cell(ModelListModel::SizeColumn), QStringLiteral("17.3 GiB"));
  // A dense file: active = all; a demo file's few parameters are not "0.0 B".
  EXPECT_EQ(ModelListModel::paramsText(0.000123456), QLocale().toString(qint64(123456)));
  EXPECT_EQ(ModelListModel::paramsText(0.0125), QStringLiteral("12.5 M"));
  EXPECT_TRUE(ModelListModel::paramsText(0).isEmpty());
}

TEST(Details, GermanShowsTheDecimalComma) {
  LocaleGuard guard;
  QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
  ModelListModel m;
  m.setEntries({CatalogEntry::fromLocalJson(QJsonDocument::fromJson(kLocalFile).object())});
  EXPECT_EQ(m.index(0, ModelListModel::SizeColumn).data().toString(), QStringLiteral("17,3 GiB"));
  EXPECT_EQ(m.index(0, ModelListModel::ParamsColumn).data().toString(), QStringLiteral("30,5 B"));
  AnswerStats s;
  s.ttftMs = 310;
  s.decodeTokensPerSec = 41.5;
  EXPECT_EQ(MessageWidget::statsText(s), QStringLiteral("first token 0,31 s · 41,5 tok/s"));
  EXPECT_EQ(formatBytes(3LL << 29), QStringLiteral("1,5 GiB"));
}

TEST(Details, CatalogSourcesAreCitedByTitle) {
  const QHash<QString, QString> titles{
      {QStringLiteral("003_607e4abfcb22e0ca.txt"), QStringLiteral("Choosing a Model")}};
  EXPECT_EQ(withSeedTitles(QStringLiteral("003_607e4abfcb22e0ca.txt (Summary): 'x'"), titles),
            QStringLiteral("“Choosing a Model” (Summary): 'x'"));
  EXPECT_EQ(withSeedTitles(QStringLiteral("999_0000000000000000.txt"), titles),
            QStringLiteral("999_0000000000000000.txt"));  // unknown: left as it is
  // Every source the embedded catalog cites is a seed it gives the title of.
  QFile f(QStringLiteral(":/catalog/models.json"));
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  const QRegularExpression file(QStringLiteral("\\d{3}_[0-9a-f]{16}\\.txt"));
  int sources = 0;
  for (const CatalogEntry& e : parseCatalog(f.readAll())) {
    for (const PublishedSpeed& s : e.speeds) {
      ++sources;
      EXPECT_FALSE(file.match(s.source).hasMatch()) << s.source.toStdString();
    }
    for (const PublishedQuality& q : e.quality) {
      ++sources;
      EXPECT_FALSE(file.match(q.source).hasMatch()) << q.source.toStdString();
    }
  }
  EXPECT_GT(sources, 0);
}

TEST(Details, BenchmarkChartHasAPrefillAxisAndComparisonNamesTheRuns) {
  BenchmarkPage page(nullptr);
  page.resize(1100, 800);
  BenchRun run;
  run.model = QStringLiteral("/models/qwen3-8b-q4_k_m.gguf");
  run.date = QDateTime(QDate(2026, 12, 7), QTime(18, 30));
  BenchResult decode;
  decode.scenario = QStringLiteral("prose");
  decode.outputTokensPerSec.valid = true;
  decode.outputTokensPerSec.median = 42;
  BenchResult prefill;
  prefill.scenario = QStringLiteral("prefill");
  prefill.prefillTokensPerSec.valid = true;
  prefill.prefillTokensPerSec.median = 5200;
  run.results = {decode, prefill};
  page.showRun(run);
  QCustomPlot* chart = page.chart();
  QCPBars* decodeBars = nullptr;
  QCPBars* prefillBars = nullptr;
  for (int i = 0; i < chart->plottableCount(); ++i) {
    auto* b = qobject_cast<QCPBars*>(chart->plottable(i));
    if (!b || b->data()->isEmpty()) continue;
    (b->valueAxis() == chart->yAxis2 ? prefillBars : decodeBars) = b;
  }
  ASSERT_NE(decodeBars, nullptr);
  ASSERT_NE(prefillBars, nullptr);
  // Each scale reads: decode fills its axis instead of being a sliver under 5200.
  EXPECT_LT(chart->yAxis->range().upper, 100);
  EXPECT_GE(chart->yAxis2->range().upper, 5200);
  EXPECT_TRUE(chart->yAxis2->visible());

  BenchRun other = run;
  other.model = QStringLiteral("gemma-3-4b");
  other.date = QDateTime(QDate(2026, 12, 8), QTime(9, 0));
  BenchCompareModel cmp;
  cmp.setRuns(run, other);
  const QString a = cmp.headerData(BenchCompareModel::RateAColumn, Qt::Horizontal).toString();
  const QString b = cmp.headerData(BenchCompareModel::TtftBColumn, Qt::Horizontal).toString();
  EXPECT_TRUE(a.contains(QStringLiteral("qwen3-8b-q4_k_m"))) << a.toStdString();
  EXPECT_FALSE(a.contains(QStringLiteral(".gguf")));
  EXPECT_TRUE(b.contains(QStringLiteral("gemma-3-4b"))) << b.toStdString();

  EXPECT_EQ(BenchmarkPage::defaultPrefillTokens(0), 32768);
  EXPECT_EQ(BenchmarkPage::defaultPrefillTokens(4096), 4096 - 272);
  EXPECT_EQ(BenchmarkPage::defaultPrefillTokens(262144), 32768);
}

TEST(Details, ChartsFollowTheThemeAndLegendsStayOffTheData) {
  QPalette dark;
  dark.setColor(QPalette::Window, QColor(0x20, 0x21, 0x24));
  dark.setColor(QPalette::Base, QColor(0x1b, 0x1c, 0x1e));
  dark.setColor(QPalette::WindowText, QColor(0xe8, 0xe8, 0xe8));
  EngineSession session;
  MonitorPage monitor(&session);
  monitor.resize(1200, 900);
  monitor.setPalette(dark);
  monitor.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&monitor));
  monitor.refresh();
  ASSERT_FALSE(monitor.plots().isEmpty());
  for (QCustomPlot* p : monitor.plots()) {
    p->replot();
    // A corner pixel of the drawn chart is the theme's base colour, not white.
    EXPECT_EQ(p->toPixmap().toImage().pixelColor(1, 1), QColor(0x1b, 0x1c, 0x1e));
    EXPECT_EQ(p->xAxis->tickLabelColor(), QColor(0xe8, 0xe8, 0xe8));
    EXPECT_EQ(p->legend->layout(), p->plotLayout());  // not an inset over the axis rect
    EXPECT_FALSE(p->legend->outerRect().intersects(p->axisRect()->rect()));
  }
  FitView fit;
  fit.resize(600, 320);
  fit.setPalette(dark);
  fit.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&fit));
  FitSummary s;
  s.perBox = {BoxUsage{100.0 * (1ll << 30), 10.0 * (1ll << 30), 3.0 * (1ll << 30),
                       8.0 * (1ll << 30), 121.6 * (1ll << 30)}};
  fit.setSummary(s);
  auto* plot = fit.findChild<QCustomPlot*>();
  ASSERT_NE(plot, nullptr);
  plot->replot();
  EXPECT_EQ(plot->toPixmap().toImage().pixelColor(1, 1), QColor(0x1b, 0x1c, 0x1e));
  // The legend sits under the axis rect: it covers neither the bar nor the usable-memory line.
  EXPECT_FALSE(plot->legend->outerRect().intersects(plot->axisRect()->rect()));
  EXPECT_GE(plot->legend->outerRect().top(), plot->axisRect()->outerRect().bottom());
}
