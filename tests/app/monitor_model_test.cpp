// MonitorModel: the bounded window, series extraction and TTFT percentiles against hand-computed
// values; the event payloads the engine sends (stats, request) as EngineEvents parses them.
#include <gtest/gtest.h>

#include <QJsonDocument>

#include <cmath>

#include "EngineEvents.h"
#include "MonitorModel.h"

using namespace arc::app;

namespace {
StatsSnapshot stats(double decode, int running = 0) {
  StatsSnapshot s;
  s.decodeTokensPerSec = decode;
  s.running = running;
  s.memory = {RankMemory{0, QString(), 1ll << 30, 0, 4ll << 30}};
  return s;
}
RequestRecord request(double ttft) {
  RequestRecord r;
  r.ttftMs = ttft;
  r.decodeTokensPerSec = 1000.0 / ttft;
  return r;
}
}  // namespace

TEST(MonitorModel, PercentileMatchesHandComputedValues) {
  // Linear between closest ranks: h = (n-1) p.
  // {1..10}: p50 -> h=4.5 -> 5 + 0.5*(6-5) = 5.5; p95 -> h=8.55 -> 9 + 0.55*1 = 9.55.
  std::vector<double> v{7, 3, 10, 1, 9, 2, 8, 4, 6, 5};  // order must not matter
  EXPECT_DOUBLE_EQ(MonitorModel::percentile(v, 50), 5.5);
  EXPECT_NEAR(MonitorModel::percentile(v, 95), 9.55, 1e-12);
  EXPECT_DOUBLE_EQ(MonitorModel::percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(MonitorModel::percentile(v, 100), 10);
  // {15,20,35,40,50}: p50 -> h=2 -> 35; p95 -> h=3.8 -> 40 + 0.8*10 = 48; p25 -> h=1 -> 20.
  EXPECT_DOUBLE_EQ(MonitorModel::percentile({50, 40, 35, 20, 15}, 50), 35);
  EXPECT_DOUBLE_EQ(MonitorModel::percentile({50, 40, 35, 20, 15}, 95), 48);
  EXPECT_DOUBLE_EQ(MonitorModel::percentile({50, 40, 35, 20, 15}, 25), 20);
  EXPECT_DOUBLE_EQ(MonitorModel::percentile({42}, 95), 42);
  EXPECT_TRUE(std::isnan(MonitorModel::percentile({}, 50)));
}

TEST(MonitorModel, KeepsABoundedWindowInTimeOrder) {
  MonitorModel m(100);
  for (int i = 0; i < 250; ++i) m.addStats(stats(i), 1000.0 + i);
  ASSERT_EQ(m.sampleCount(), 100);             // the ring never grows past its capacity
  EXPECT_DOUBLE_EQ(m.sample(0).time, 1150.0);  // the oldest kept is sample 150
  EXPECT_DOUBLE_EQ(m.sample(99).time, 1249.0);
  EXPECT_DOUBLE_EQ(m.sample(0).decodeTokensPerSec, 150.0);
  EXPECT_DOUBLE_EQ(m.latestTime(), 1249.0);
  // A 60-second window ending at the newest sample: times 1190..1249, in order.
  QVector<double> k, v;
  m.series(MonitorModel::Metric::DecodeTokensPerSec, 1249, 60, k, v);
  ASSERT_EQ(k.size(), 60);
  EXPECT_DOUBLE_EQ(k.first(), 1190);
  EXPECT_DOUBLE_EQ(v.first(), 190);
  EXPECT_DOUBLE_EQ(v.last(), 249);
  // A window ending in the past, and one wider than what is kept.
  m.series(MonitorModel::Metric::DecodeTokensPerSec, 1200, 10, k, v);
  ASSERT_EQ(k.size(), 10);
  EXPECT_DOUBLE_EQ(k.last(), 1200);
  m.series(MonitorModel::Metric::DecodeTokensPerSec, 1249, 3600, k, v);
  EXPECT_EQ(k.size(), 100);
  // Memory per rank in GiB; an absent all-reduce figure gives no points.
  m.series(MonitorModel::Metric::MemoryUsedGiB, 1249, 5, k, v, 0);
  ASSERT_EQ(v.size(), 5);
  EXPECT_DOUBLE_EQ(v[0], 1.0);
  m.series(MonitorModel::Metric::AllreduceMiBPerSec, 1249, 60, k, v);
  EXPECT_TRUE(v.isEmpty());
  EXPECT_FALSE(m.hasAllreduce());
  EXPECT_EQ(m.rankCount(), 1);
}

TEST(MonitorModel, HourOfSamplesIsTheDefaultCapacity) {
  MonitorModel m;
  for (int i = 0; i < 4000; ++i) m.addStats(stats(1), i);
  EXPECT_EQ(m.sampleCount(), 3600);
  EXPECT_DOUBLE_EQ(m.sample(0).time, 400);
}

TEST(MonitorModel, TtftPercentilesOverTheWindowAndOldRequestsDropped) {
  MonitorModel m(100);
  // Requests at t=10..19 with TTFT 100..1000 ms (10 values); then one at t=50 with 5000 ms.
  for (int i = 0; i < 10; ++i) m.addRequest(request(100.0 * (i + 1)), 10 + i);
  m.addRequest(request(5000), 50);
  // Window (0, 20]: the ten values -> p50 550, p95 955 (as {1..10} scaled by 100).
  EXPECT_DOUBLE_EQ(m.ttftPercentile(50, 20, 20), 550);
  EXPECT_NEAR(m.ttftPercentile(95, 20, 20), 955, 1e-9);
  // Window (14, 50]: 600, 700, 800, 900, 1000, 5000 -> p50 = h 2.5 -> 800 + 0.5*100 = 850.
  EXPECT_DOUBLE_EQ(m.ttftPercentile(50, 50, 36), 850);
  // Window (15, 50] leaves t=15 out: 700..1000, 5000 -> p50 = h 2 -> 900.
  EXPECT_DOUBLE_EQ(m.ttftPercentile(50, 50, 35), 900);
  QVector<double> k, v;
  m.requestTtft(50, 36, k, v);
  EXPECT_EQ(v, (QVector<double>{600, 700, 800, 900, 1000, 5000}));
  m.requestDecode(20, 20, k, v);
  ASSERT_EQ(v.size(), 10);
  EXPECT_DOUBLE_EQ(v[0], 10.0);
  EXPECT_TRUE(std::isnan(m.ttftPercentile(50, 100, 10)));
  // A stats sample at t=200 with capacity 100 s drops requests older than t=100.
  m.addStats(stats(1), 200);
  EXPECT_EQ(m.requestCount(), 0);
}

TEST(MonitorModel, StoppedRequestsCountForTtftButNotWithoutAFirstToken) {
  MonitorModel m(100);
  // As the engine reports them: a request the user stopped after its first token, with no
  // decode rate, and one stopped while reading the prompt (no first token: ttft 0).
  const RequestRecord stopped = RequestRecord::fromJson(
      QJsonDocument::fromJson(R"({"finish_reason":"cancelled","ttft_ms":300,"prompt_tokens":9,)"
                              R"("completion_tokens":2,"cached_tokens":0})")
          .object());
  const RequestRecord early = RequestRecord::fromJson(
      QJsonDocument::fromJson(R"({"finish_reason":"cancelled","ttft_ms":0})").object());
  m.addRequest(request(100), 1);
  m.addRequest(stopped, 2);
  m.addRequest(early, 3);
  QVector<double> k, v;
  m.requestTtft(10, 10, k, v);
  EXPECT_EQ(v, (QVector<double>{100, 300}));
  EXPECT_EQ(k, (QVector<double>{1, 2}));
  EXPECT_DOUBLE_EQ(m.ttftPercentile(50, 10, 10), 200);
  m.requestDecode(10, 10, k, v);
  EXPECT_EQ(v, (QVector<double>{10}));
}

TEST(MonitorModel, CsvHasTheVisibleRowsOnly) {
  MonitorModel m(100);
  for (int i = 0; i < 10; ++i) m.addStats(stats(10 + i, i), 1700000000.0 + i);
  m.addRequest(request(250), 1700000009.0);
  const QList<QByteArray> lines = m.toCsv(1700000009.0, 3).split('\n');
  ASSERT_GE(lines.size(), 7);
  EXPECT_TRUE(lines[0].startsWith("time,decode_tokens_per_s"));
  EXPECT_TRUE(lines[0].endsWith("memory_used_bytes_rank0"));
  EXPECT_TRUE(lines[1].startsWith("2023-11-14T22:13:27.000Z,17,0,7,")) << lines[1].toStdString();
  EXPECT_TRUE(lines[3].startsWith("2023-11-14T22:13:29.000Z,19,")) << lines[3].toStdString();
  EXPECT_TRUE(lines[4].isEmpty());
  EXPECT_TRUE(lines[5].startsWith("request_time,ttft_ms"));
  EXPECT_TRUE(lines[6].startsWith("2023-11-14T22:13:29.000Z,250,4,")) << lines[6].toStdString();
}

TEST(EngineEvents, ParsesStatsAndRequestPayloadsAsTheEngineSendsThem) {
  // The engine's exact payloads (engine/sched/engine_service.cpp and request_pipeline.cpp).
  const QJsonObject st = QJsonDocument::fromJson(R"({"state":"ready","running":2,"waiting":1,
      "kv_blocks_total":400,"kv_blocks_used":37,"kv_blocks_cached":12,"prefix_hit_rate":0.25,
      "decode_tokens_per_s":61.5,"prefill_tokens_per_s":1234.5,"generated_tokens_total":98765,
      "memory":[{"rank":0,"used_bytes":1073741824,"available_bytes":2147483648,
                 "total_bytes":4294967296},{"rank":1,"used_bytes":5,"available_bytes":6,
                 "total_bytes":7}]})")
                             .object();
  const StatsSnapshot s = StatsSnapshot::fromJson(st);
  EXPECT_EQ(s.state, EngineState::Ready);
  EXPECT_EQ(s.running, 2);
  EXPECT_EQ(s.waiting, 1);
  EXPECT_EQ(s.kvBlocksTotal, 400);
  EXPECT_EQ(s.kvBlocksUsed, 37);
  EXPECT_EQ(s.kvBlocksCached, 12);
  EXPECT_DOUBLE_EQ(s.prefixHitRate, 0.25);
  EXPECT_DOUBLE_EQ(s.decodeTokensPerSec, 61.5);
  EXPECT_DOUBLE_EQ(s.prefillTokensPerSec, 1234.5);
  EXPECT_EQ(s.generatedTokensTotal, 98765);
  ASSERT_EQ(s.memory.size(), 2);
  EXPECT_EQ(s.memory[0].usedBytes, 1ll << 30);
  EXPECT_EQ(s.memory[0].availableBytes, 2ll << 30);
  EXPECT_EQ(s.memory[0].totalBytes, 4ll << 30);
  EXPECT_EQ(s.memory[1].rank, 1);
  EXPECT_LT(s.allreduceBytesPerSec, 0);  // absent: the chart says "no data"
  EXPECT_LT(s.linkUtilization, 0);
  const StatsSnapshot tp = StatsSnapshot::fromJson(
      QJsonDocument::fromJson(R"({"allreduce_bytes_per_s":1048576,"link_utilization":0.5})")
          .object());
  EXPECT_DOUBLE_EQ(tp.allreduceBytesPerSec, 1048576);
  EXPECT_DOUBLE_EQ(tp.linkUtilization, 0.5);
  MonitorModel m;
  m.addStats(tp, 1);
  QVector<double> k, v;
  m.series(MonitorModel::Metric::AllreduceMiBPerSec, 1, 60, k, v);
  EXPECT_EQ(v, QVector<double>{1.0});
  m.series(MonitorModel::Metric::LinkUtilizationPercent, 1, 60, k, v);
  EXPECT_EQ(v, QVector<double>{50.0});
  // Speculative decoding: a second with drafts, one without (null: a gap, not a zero).
  const StatsSnapshot drafts = StatsSnapshot::fromJson(
      QJsonDocument::fromJson(R"({"acceptance_rate":0.75,"draft_tokens_total":40})").object());
  const StatsSnapshot none = StatsSnapshot::fromJson(
      QJsonDocument::fromJson(R"({"acceptance_rate":null,"draft_tokens_total":40})").object());
  EXPECT_DOUBLE_EQ(drafts.acceptanceRate, 0.75);
  EXPECT_LT(none.acceptanceRate, 0);
  m.addStats(drafts, 2);
  m.addStats(none, 3);
  m.series(MonitorModel::Metric::AcceptancePercent, 3, 60, k, v);
  EXPECT_EQ(v, QVector<double>{75.0});  // seconds without drafts give no point
  EXPECT_EQ(k, QVector<double>{2.0});

  const RequestRecord r = RequestRecord::fromJson(
      QJsonDocument::fromJson(
          R"({"finish_reason":"length","prompt_tokens":120,"completion_tokens":450,
          "cached_tokens":64,"queue_ms":2.5,"ttft_ms":180.25,"prefill_tokens_per_s":666.5,
          "decode_tokens_per_s":48.5,"total_ms":9500.75})")
          .object());
  EXPECT_EQ(r.finishReason, QStringLiteral("length"));
  EXPECT_EQ(r.promptTokens, 120);
  EXPECT_EQ(r.completionTokens, 450);
  EXPECT_EQ(r.cachedTokens, 64);
  EXPECT_DOUBLE_EQ(r.queueMs, 2.5);
  EXPECT_DOUBLE_EQ(r.ttftMs, 180.25);
  EXPECT_DOUBLE_EQ(r.prefillTokensPerSec, 666.5);
  EXPECT_DOUBLE_EQ(r.decodeTokensPerSec, 48.5);
  EXPECT_DOUBLE_EQ(r.totalMs, 9500.75);
  // Wrong types keep defaults, never crash.
  const StatsSnapshot bad =
      StatsSnapshot::fromJson(QJsonDocument::fromJson(R"({"running":"x","memory":7})").object());
  EXPECT_EQ(bad.running, 0);
  EXPECT_TRUE(bad.memory.isEmpty());
}
