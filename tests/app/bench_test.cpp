// The Benchmark page's pieces: the bench-serve line parser, the history round trip, the item
// models (QAbstractItemModelTester), catalog matching, and BenchRunner + BenchmarkPage against a
// fake bench-serve (a shell script printing JSON lines on stdout and progress on stderr).
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "BenchCompareModel.h"
#include "BenchHistoryModel.h"
#include "BenchPublished.h"
#include "BenchResultModel.h"
#include "BenchRunner.h"
#include "BenchmarkPage.h"

using namespace arc::app;

namespace {

// Two lines as bench-serve --json prints them (engine/bench/report.cpp).
const char kProse[] =
    R"({"scenario":"prose","concurrency":1,"runs":6,"requests":6,"ttft_ms":{"median":120.4,"mean":121,"min":110,"max":140,"p50":120.4,"p90":135,"p99":139,"count":6},"tpot_ms":{"median":20,"mean":20,"min":19,"max":21,"p50":20,"p90":21,"p99":21,"count":6},"itl_ms":{"median":20,"mean":20,"min":1,"max":60,"p50":20,"p90":25.5,"p99":50,"count":2694},"e2e_ms":{"median":9100,"mean":9100,"min":9000,"max":9300,"p50":9100,"p90":9250,"p99":9300,"count":6},"output_tokens_per_s":{"median":50,"mean":50,"min":47.5,"max":52.3,"p50":50,"p90":52,"p99":52.3,"count":6},"total_tokens_per_s":49.5,"total_tokens_per_s_stats":{"median":49.5,"mean":49.5,"min":47,"max":52,"p50":49.5,"p90":52,"p99":52,"count":6},"prompt_tokens":58,"output_tokens":450,"total_output_tokens":2700,"token_counts":"usage","errors":0,"server":"http://127.0.0.1:8080","model":"Qwen3.6-35B-A3B-Q4_K_M","profile":"seeds","temperature":0.6,"max_tokens":450,"started_at":"2026-11-29T21:09:10Z"})";
const char kSweep[] =
    R"({"scenario":"prose","concurrency":4,"runs":6,"requests":24,"ttft_ms":{"median":300,"mean":300,"min":250,"max":400,"p50":300,"p90":390,"p99":400,"count":23},"tpot_ms":null,"itl_ms":null,"e2e_ms":null,"output_tokens_per_s":{"median":40,"mean":40,"min":38,"max":42,"p50":40,"p90":42,"p99":42,"count":23},"total_tokens_per_s":150.3,"prompt_tokens":58,"output_tokens":450,"errors":1,"first_error":"HTTP 500","server":"http://127.0.0.1:8080","model":"Qwen3.6-35B-A3B-Q4_K_M","profile":"seeds","started_at":"2026-11-29T21:09:10Z"})";

BenchRun sampleRun(double proseRate, const QString& when) {
  BenchRun run;
  run.id = when;
  run.date = QDateTime::fromString(when, Qt::ISODate);
  run.model = QStringLiteral("Qwen3.6-35B-A3B-Q4_K_M");
  run.build = QStringLiteral("0.1.0");
  run.settings.url = QStringLiteral("http://127.0.0.1:8080");
  run.settings.apiKey = QStringLiteral("secret");
  BenchResult a = parseBenchLine(kProse).result;
  a.outputTokensPerSec.median = proseRate;
  run.results = {a, parseBenchLine(kSweep).result};
  return run;
}

// A fake bench-serve: echoes its arguments and progress to stderr, two results on stdout.
QString writeFakeBench(const QTemporaryDir& dir, int exitCode, bool fatal = false) {
  const QString path = dir.filePath(QStringLiteral("fake-bench-serve.sh"));
  QFile f(path);
  EXPECT_TRUE(f.open(QIODevice::WriteOnly));
  QByteArray script = "#!/bin/sh\necho \"[bench] args: $*\" >&2\necho '[bench] warm-up 1/3' >&2\n";
  if (fatal) {
    script += "echo '{\"error\":\"cannot reach http://x: connection refused\"}'\n";
  } else {
    script += QByteArray("cat <<'EOF'\n") + kProse + "\nEOF\n";
    script += "echo '[bench] prose @4' >&2\n";
    script += QByteArray("printf '%s' '") + kSweep + "'\n";  // last line without newline
  }
  script += "exit " + QByteArray::number(exitCode) + "\n";
  f.write(script);
  f.close();
  f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
  return path;
}

}  // namespace

TEST(BenchResult, ParsesBenchServeLines) {
  const BenchLine l = parseBenchLine(kProse);
  ASSERT_EQ(l.kind, BenchLine::Kind::Result);
  const BenchResult& r = l.result;
  EXPECT_EQ(r.scenario, QStringLiteral("prose"));
  EXPECT_EQ(r.concurrency, 1);
  EXPECT_EQ(r.runs, 6);
  EXPECT_TRUE(r.ttftMs.valid);
  EXPECT_DOUBLE_EQ(r.ttftMs.median, 120.4);
  EXPECT_DOUBLE_EQ(r.ttftMs.min, 110);
  EXPECT_DOUBLE_EQ(r.ttftMs.max, 140);
  EXPECT_DOUBLE_EQ(r.itlMs.p90, 25.5);
  EXPECT_EQ(r.itlMs.count, 2694);
  EXPECT_DOUBLE_EQ(r.outputTokensPerSec.max, 52.3);
  EXPECT_DOUBLE_EQ(r.totalTokensPerSec, 49.5);
  EXPECT_DOUBLE_EQ(r.outputTokens, 450);
  EXPECT_EQ(r.model, QStringLiteral("Qwen3.6-35B-A3B-Q4_K_M"));
  EXPECT_EQ(r.key(), QStringLiteral("prose @1"));
  const BenchResult s = parseBenchLine(kSweep).result;
  EXPECT_FALSE(s.tpotMs.valid);  // null summaries stay invalid
  EXPECT_EQ(s.errors, 1);
  EXPECT_EQ(s.firstError, QStringLiteral("HTTP 500"));
  EXPECT_DOUBLE_EQ(s.totalTokensPerSec, 150.3);
  const BenchLine fatal = parseBenchLine(R"({"error":"server unreachable","server":"x"})");
  EXPECT_EQ(fatal.kind, BenchLine::Kind::FatalError);
  EXPECT_EQ(fatal.error, QStringLiteral("server unreachable"));
  EXPECT_EQ(parseBenchLine("not json").kind, BenchLine::Kind::Invalid);
  EXPECT_EQ(parseBenchLine("[1,2]").kind, BenchLine::Kind::Invalid);
  EXPECT_EQ(parseBenchLine(R"({"x":1})").kind, BenchLine::Kind::Invalid);
}

TEST(BenchHistory, RoundTripsAndNeverStoresTheApiKey) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("sub/benchmarks.json"));
  BenchHistory h;
  h.add(sampleRun(50, QStringLiteral("2026-11-28T10:00:00Z")));
  BenchRun second = sampleRun(55, QStringLiteral("2026-11-29T10:00:00Z"));
  second.settings.profile = QStringLiteral("custom");
  second.settings.concurrency = {1, 2};
  second.error = QStringLiteral("cancelled");
  h.add(second);
  QString error;
  ASSERT_TRUE(h.save(path, &error)) << error.toStdString();
  QFile f(path);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  EXPECT_FALSE(f.readAll().contains("secret"));
  BenchHistory back;
  ASSERT_TRUE(back.load(path, &error)) << error.toStdString();
  ASSERT_EQ(back.runs().size(), 2);
  const BenchRun& r0 = back.runs()[0];  // newest first
  EXPECT_EQ(r0.date, QDateTime::fromString(QStringLiteral("2026-11-29T10:00:00Z"), Qt::ISODate));
  EXPECT_EQ(r0.settings.profile, QStringLiteral("custom"));
  EXPECT_EQ(r0.settings.concurrency, (QList<int>{1, 2}));
  EXPECT_EQ(r0.error, QStringLiteral("cancelled"));
  EXPECT_EQ(r0.build, QStringLiteral("0.1.0"));
  ASSERT_EQ(r0.results.size(), 2);
  EXPECT_DOUBLE_EQ(r0.results[0].outputTokensPerSec.median, 50);  // raw line kept, not the edit
  EXPECT_DOUBLE_EQ(r0.results[1].totalTokensPerSec, 150.3);
  EXPECT_TRUE(r0.settings.apiKey.isEmpty());
  // A missing file is an empty history; a damaged one says where.
  EXPECT_TRUE(back.load(dir.filePath(QStringLiteral("none.json")), &error));
  EXPECT_TRUE(back.runs().isEmpty());
  QFile bad(dir.filePath(QStringLiteral("bad.json")));
  ASSERT_TRUE(bad.open(QIODevice::WriteOnly));
  bad.write("{\"runs\": [");
  bad.close();
  EXPECT_FALSE(back.load(bad.fileName(), &error));
  EXPECT_TRUE(error.contains(QStringLiteral("not valid JSON"))) << error.toStdString();
}

TEST(BenchHistory, SettingsBecomeBenchServeArguments) {
  BenchSettings s;
  s.url = QStringLiteral("http://h:1");
  s.apiKey = QStringLiteral("k");
  EXPECT_EQ(s.arguments(),
            (QStringLiteral("bench-serve --url http://h:1 --json --api-key k --profile seeds "
                            "--prompts prose,code,json --long-prompt-tokens 32768")
                 .split(QLatin1Char(' '))));
  s.profile = QStringLiteral("custom");
  s.apiKey.clear();
  s.concurrency = {1, 2};
  s.runs = 3;
  s.maxTokens = 100;
  s.prompts = {QStringLiteral("code")};
  EXPECT_EQ(
      s.arguments(),
      (QStringLiteral("bench-serve --url http://h:1 --json --profile custom --prompts code "
                      "--long-prompt-tokens 32768 --concurrency 1,2 --runs 3 --max-tokens 100")
           .split(QLatin1Char(' '))));
  const QByteArray csv = sampleRun(50, QStringLiteral("2026-11-28T10:00:00Z")).toCsv();
  const QList<QByteArray> lines = csv.trimmed().split('\n');
  ASSERT_EQ(lines.size(), 3);
  EXPECT_TRUE(lines[1].startsWith("prose,1,6,6,0,120.40,110.00,140.00,20.00,25.50,9100.00,50.00,"))
      << lines[1].toStdString();
  EXPECT_TRUE(
      lines[2].startsWith("prose,4,6,24,1,300.00,250.00,400.00,,,,40.00,38.00,42.00,150.30,"))
      << lines[2].toStdString();
}

TEST(BenchModels, PassModelTesterAndShowTheFigures) {
  BenchResultModel results;
  QAbstractItemModelTester t1(&results, QAbstractItemModelTester::FailureReportingMode::Fatal);
  results.append(parseBenchLine(kProse).result);
  results.append(parseBenchLine(kSweep).result);
  ASSERT_EQ(results.rowCount(), 2);
  EXPECT_EQ(results.index(0, BenchResultModel::TtftColumn).data().toString(),
            QStringLiteral("120 (110–140)"));
  EXPECT_EQ(results.index(0, BenchResultModel::StreamRateColumn).data().toString(),
            QStringLiteral("50.0 (47.5–52.3)"));
  EXPECT_EQ(results.index(1, BenchResultModel::TotalRateColumn).data().toString(),
            QStringLiteral("150.3"));
  EXPECT_EQ(results.index(1, BenchResultModel::TpotColumn).data().toString(), QStringLiteral("–"));
  EXPECT_EQ(results.index(1, BenchResultModel::ErrorsColumn).data().toString(),
            QStringLiteral("1 of 24"));
  EXPECT_DOUBLE_EQ(
      results.index(0, BenchResultModel::E2eColumn).data(BenchResultModel::ValueRole).toDouble(),
      9.1);
  results.clear();
  EXPECT_EQ(results.rowCount(), 0);

  BenchHistoryModel history;
  QAbstractItemModelTester t2(&history, QAbstractItemModelTester::FailureReportingMode::Fatal);
  BenchRun a = sampleRun(50, QStringLiteral("2026-11-28T10:00:00Z"));
  BenchRun b = sampleRun(60, QStringLiteral("2026-11-29T10:00:00Z"));
  b.results.removeLast();
  BenchResult json = parseBenchLine(kProse).result;
  json.scenario = QStringLiteral("json");
  b.results.append(json);
  history.setRuns({b, a});
  ASSERT_EQ(history.rowCount(), 2);
  EXPECT_EQ(history.index(1, BenchHistoryModel::ModelColumn).data().toString(),
            QStringLiteral("Qwen3.6-35B-A3B-Q4_K_M"));
  EXPECT_EQ(history.index(1, BenchHistoryModel::ServerColumn).data().toString(),
            QStringLiteral("http://127.0.0.1:8080"));

  BenchCompareModel cmp;
  QAbstractItemModelTester t3(&cmp, QAbstractItemModelTester::FailureReportingMode::Fatal);
  cmp.setRuns(a, b);
  // Rows: prose @1 (both), prose @4 (A only), json @1 (B only).
  ASSERT_EQ(cmp.rowCount(), 3);
  EXPECT_EQ(cmp.index(0, BenchCompareModel::ScenarioColumn).data().toString(),
            QStringLiteral("prose @1"));
  EXPECT_EQ(cmp.index(0, BenchCompareModel::RateAColumn).data().toString(), QStringLiteral("50.0"));
  EXPECT_EQ(cmp.index(0, BenchCompareModel::RateBColumn).data().toString(), QStringLiteral("60.0"));
  EXPECT_EQ(cmp.index(0, BenchCompareModel::RateChangeColumn).data().toString(),
            QStringLiteral("+20.0 %"));  // (60 - 50) / 50
  // Several streams compare by their total rate.
  EXPECT_EQ(cmp.index(1, BenchCompareModel::RateAColumn).data().toString(),
            QStringLiteral("150.3"));
  EXPECT_EQ(cmp.index(1, BenchCompareModel::RateBColumn).data().toString(), QStringLiteral("–"));
  EXPECT_EQ(cmp.index(2, BenchCompareModel::ScenarioColumn).data().toString(),
            QStringLiteral("json @1"));
  cmp.clear();
  EXPECT_EQ(cmp.rowCount(), 0);
}

TEST(BenchPublished, MatchesServedModelNamesToTheCatalog) {
  QList<CatalogEntry> catalog(3);
  catalog[0].id = QStringLiteral("qwen3.6-35b-a3b");
  catalog[0].name = QStringLiteral("Qwen3.6-35B-A3B");
  catalog[1].id = QStringLiteral("glm-5.3");
  catalog[1].name = QStringLiteral("GLM-5.3");
  catalog[2].id = QStringLiteral("glm-5.3-flash");
  catalog[2].name = QStringLiteral("GLM-5.3-Flash");
  EXPECT_EQ(matchCatalogEntry(catalog, QStringLiteral("Qwen3.6-35B-A3B-Q4_K_M.gguf")), &catalog[0]);
  EXPECT_EQ(matchCatalogEntry(catalog, QStringLiteral("zai/GLM-5.3-Flash-4bit")), &catalog[2]);
  EXPECT_EQ(matchCatalogEntry(catalog, QStringLiteral("glm-5.3-exl3")), &catalog[1]);
  EXPECT_EQ(matchCatalogEntry(catalog, QStringLiteral("llama-3-8b")), nullptr);
  EXPECT_EQ(matchCatalogEntry(catalog, QString()), nullptr);
}

TEST(BenchRunner, FillsResultsFromAFakeBenchServe) {
  QTemporaryDir dir;
  BenchRunner runner;
  runner.setProgram(writeFakeBench(dir, 0));
  QSignalSpy results(&runner, &BenchRunner::resultReady);
  QSignalSpy progress(&runner, &BenchRunner::progress);
  QSignalSpy finished(&runner, &BenchRunner::finished);
  BenchSettings s;
  s.url = QStringLiteral("http://127.0.0.1:9");
  ASSERT_TRUE(runner.start(s));
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_TRUE(finished.at(0).at(0).toBool()) << finished.at(0).at(1).toString().toStdString();
  ASSERT_EQ(results.size(), 2);  // the last line had no newline and still counts
  EXPECT_EQ(runner.run().results.size(), 2);
  EXPECT_EQ(runner.run().model, QStringLiteral("Qwen3.6-35B-A3B-Q4_K_M"));
  QStringList lines;
  for (const auto& args : progress) lines << args.at(0).toString();
  ASSERT_GE(lines.size(), 3);
  EXPECT_EQ(lines[0], QStringLiteral("[bench] args: bench-serve --url http://127.0.0.1:9 --json "
                                     "--profile seeds --prompts prose,code,json "
                                     "--long-prompt-tokens 32768"));
  EXPECT_TRUE(lines.contains(QStringLiteral("[bench] prose @4")));
}

TEST(BenchRunner, ReportsFatalErrorsAndMissingBinaries) {
  QTemporaryDir dir;
  BenchRunner runner;
  runner.setProgram(writeFakeBench(dir, 1, /*fatal=*/true));
  QSignalSpy finished(&runner, &BenchRunner::finished);
  BenchSettings s;
  s.url = QStringLiteral("http://x");
  ASSERT_TRUE(runner.start(s));
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_FALSE(finished.at(0).at(0).toBool());
  EXPECT_EQ(finished.at(0).at(1).toString(),
            QStringLiteral("cannot reach http://x: connection refused"));
  runner.setProgram(dir.filePath(QStringLiteral("missing")));
  EXPECT_FALSE(runner.start(s));
  ASSERT_EQ(finished.size(), 2);
  EXPECT_TRUE(finished.at(1).at(1).toString().contains(QStringLiteral("not available")));
}

TEST(BenchmarkPage, RunFillsTableHistoryAndPublishedFigures) {
  QTemporaryDir dir;
  BenchmarkPage page(nullptr);
  page.resize(1200, 800);
  page.setHistoryPath(dir.filePath(QStringLiteral("history.json")));
  CatalogEntry e;
  e.id = QStringLiteral("qwen3.6-35b-a3b");
  e.name = QStringLiteral("Qwen3.6-35B-A3B");
  e.speeds = {
      PublishedSpeed{QStringLiteral("4bit, one stream, 1 box"), 120, QStringLiteral("seed 000")}};
  page.setCatalog({e});
  page.runner()->setProgram(writeFakeBench(dir, 0));
  page.setUrl(QStringLiteral("http://127.0.0.1:9"));
  QSignalSpy finished(page.runner(), &BenchRunner::finished);
  page.show();
  page.startRun();
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(page.resultModel()->rowCount(), 2);
  EXPECT_EQ(page.historyModel()->rowCount(), 1);
  EXPECT_TRUE(page.progressText().contains(QStringLiteral("warm-up 1/3")));
  EXPECT_TRUE(page.publishedText().contains(QStringLiteral("120.0")))
      << page.publishedText().toStdString();
  // The history file was written and a second page reads it back.
  BenchmarkPage again(nullptr);
  again.setHistoryPath(dir.filePath(QStringLiteral("history.json")));
  EXPECT_EQ(again.historyModel()->rowCount(), 1);
  EXPECT_EQ(again.resultModel()->rowCount(), 2);  // the newest run shows when the page opens
  // Compare needs two runs.
  page.startRun();
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(page.historyModel()->rowCount(), 2);
  EXPECT_TRUE(page.compareRows(1, 0));
  EXPECT_EQ(page.compareModel()->rowCount(), 2);
  EXPECT_FALSE(page.compareRows(0, 0));
  QTest::qWait(30);
  const QString shots = QStringLiteral(ARC_APP_SCREENSHOT_DIR);
  QDir().mkpath(shots);
  EXPECT_TRUE(page.grab().save(QDir(shots).filePath(QStringLiteral("benchmark_results.png"))));
}
