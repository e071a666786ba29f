// Quality on the Models page: eval's JSON read into a record (against a hand-made report), the
// store's round trip and replacement, the runner against a stand-in engine (result, failure),
// and the catalog's published figures.
#include <gtest/gtest.h>

#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "CatalogEntry.h"
#include "QualityRunner.h"
#include "QualityStore.h"
#include "fake_engine_script.h"

using namespace arc::app;
using arc::app::testing::writeScript;

namespace {

// The shape `arclight-engine eval --json` writes (engine/eval/report.cpp).
const char* kEvalJson = R"({
  "model": "/m/q4.gguf", "text": "built-in", "tokens_scored": 4096, "interrupted": false,
  "perplexity": {"value": 9.5, "ci95": [9.4, 9.6]},
  "reference": {"model": "/m/bf16.gguf", "kind": "model",
    "perplexity": {"value": 9.25},
    "kl": {"mean": 0.0421, "se": 0.001, "ci95": [0.0401, 0.0441], "median": 0.02, "p90": 0.09,
           "p99": 0.41, "max": 2.5},
    "top1_agreement": {"value": 0.9312, "se": 0.004}}
})";

}  // namespace

TEST(Quality, EvalJsonBecomesARecord) {
  const QualityRecord r = QualityRecord::fromEvalJson(QJsonDocument::fromJson(kEvalJson).object(),
                                                      QDateTime::currentDateTime());
  EXPECT_EQ(r.model, QStringLiteral("/m/q4.gguf"));
  EXPECT_EQ(r.reference, QStringLiteral("/m/bf16.gguf"));
  EXPECT_DOUBLE_EQ(r.klMean, 0.0421);
  EXPECT_DOUBLE_EQ(r.klLow, 0.0401);
  EXPECT_DOUBLE_EQ(r.klP99, 0.41);
  EXPECT_NEAR(r.top1Percent, 93.12, 1e-9);  // eval reports a fraction
  EXPECT_DOUBLE_EQ(r.perplexity, 9.5);
  EXPECT_DOUBLE_EQ(r.referencePerplexity, 9.25);
  EXPECT_TRUE(r.summary().contains(QStringLiteral("KL 0.0421"))) << r.summary().toStdString();
  EXPECT_TRUE(r.summary().contains(QStringLiteral("bf16.gguf")));
  // Not eval's output: no record.
  EXPECT_TRUE(
      QualityRecord::fromEvalJson(QJsonObject{{QStringLiteral("error"), 1}}, {}).model.isEmpty());
}

TEST(Quality, StoreKeepsOneRecordPerModelReferenceAndText) {
  QTemporaryDir dir;
  const QString file = dir.filePath(QStringLiteral("sub/quality.json"));
  QualityRecord r = QualityRecord::fromEvalJson(QJsonDocument::fromJson(kEvalJson).object(),
                                                QDateTime::currentDateTime());
  {
    QualityStore store(file);
    EXPECT_TRUE(store.forModel(QStringLiteral("/m/q4.gguf")).isEmpty());
    ASSERT_TRUE(store.add(r));
    r.klMean = 0.05;  // measured again: replaces
    ASSERT_TRUE(store.add(r));
  }
  QualityStore again(file);
  const QList<QualityRecord> got = again.forModel(QStringLiteral("/m/q4.gguf"));
  ASSERT_EQ(got.size(), 1);
  EXPECT_DOUBLE_EQ(got.first().klMean, 0.05);
  EXPECT_TRUE(again.forModel(QStringLiteral("/m/other.gguf")).isEmpty());
}

TEST(Quality, RunnerReportsTheResultAndFailures) {
  QTemporaryDir dir;
  QFile json(dir.filePath(QStringLiteral("out.json")));
  ASSERT_TRUE(json.open(QIODevice::WriteOnly));
  json.write(kEvalJson);
  json.close();
  // The stand-in checks the arguments it was given, then prints eval's report.
  const QString ok = writeScript(
      dir,
      "case \"$*\" in *'eval -m /m/q4.gguf --reference /m/bf16.gguf --json'*) ;; *) "
      "echo \"bad args: $*\" >&2; exit 2;; esac\necho 'window 1/2, 3 s left' >&2\ncat '" +
          json.fileName().toUtf8() + "'\n");
  QualityRunner runner;
  QSignalSpy done(&runner, &QualityRunner::finished);
  QSignalSpy failed(&runner, &QualityRunner::failed);
  QSignalSpy progress(&runner, &QualityRunner::progress);
  ASSERT_TRUE(runner.start(ok, QStringLiteral("/m/q4.gguf"), QStringLiteral("/m/bf16.gguf")));
  ASSERT_TRUE(done.wait(10000)) << (failed.isEmpty()
                                        ? ""
                                        : failed.first().at(0).toString().toStdString());
  EXPECT_DOUBLE_EQ(done.first().at(0).value<QualityRecord>().klMean, 0.0421);
  EXPECT_FALSE(progress.isEmpty());

  const QString bad = writeScript(dir, "echo 'error: the tokenizers differ' >&2\nexit 2\n");
  ASSERT_TRUE(runner.start(bad, QStringLiteral("/m/q4.gguf"), QStringLiteral("/m/x.gguf")));
  ASSERT_TRUE(failed.wait(10000));
  EXPECT_TRUE(failed.last().at(0).toString().contains(QStringLiteral("tokenizers differ")));
  EXPECT_FALSE(runner.start(QString(), QStringLiteral("/m/q4.gguf"), QStringLiteral("/m/x")));
}

TEST(Quality, CatalogCarriesPublishedFigures) {
  QFile f(QStringLiteral(":/catalog/models.json"));
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  QString error;
  const QList<CatalogEntry> entries = parseCatalog(f.readAll(), &error);
  ASSERT_TRUE(error.isEmpty()) << error.toStdString();
  bool found = false;
  for (const CatalogEntry& e : entries)
    for (const PublishedQuality& q : e.quality)
      if (e.id == QStringLiteral("glm-5.3") && q.build == QStringLiteral("exl3-3.38bpw")) {
        found = true;
        EXPECT_DOUBLE_EQ(q.kl, 0.082);
        EXPECT_DOUBLE_EQ(q.top1Percent, 91.15);
        // Cited by the seed document's title, not its file name.
        EXPECT_TRUE(q.source.contains(QStringLiteral("“The State of the Sparks: GLM-5.3")))
            << q.source.toStdString();
        EXPECT_FALSE(q.source.contains(QStringLiteral("001_cd394c7a95bb786a.txt")));
      }
  EXPECT_TRUE(found);
}

// The runner with the real engine: a Q8_0 file against its F32 twin (generated, same seed).
TEST(Quality, RunnerWithTheRealEngine) {
  const QString engine = QStringLiteral(ARC_BIN_DIR "/arclight-engine");
  QTemporaryDir dir;
  auto make = [&](const char* type) {
    const QString out = dir.filePath(QStringLiteral("m_%1.gguf").arg(QLatin1String(type)));
    QProcess p;
    p.start(engine, {QStringLiteral("make-test-model"),
                     QStringLiteral("--family"),
                     QStringLiteral("qwen3moe"),
                     QStringLiteral("--layers"),
                     QStringLiteral("2"),
                     QStringLiteral("--hidden"),
                     QStringLiteral("128"),
                     QStringLiteral("--heads"),
                     QStringLiteral("4"),
                     QStringLiteral("--kv-heads"),
                     QStringLiteral("2"),
                     QStringLiteral("--head-dim"),
                     QStringLiteral("32"),
                     QStringLiteral("--experts"),
                     QStringLiteral("4"),
                     QStringLiteral("--experts-used"),
                     QStringLiteral("2"),
                     QStringLiteral("--expert-ff"),
                     QStringLiteral("128"),
                     QStringLiteral("--type"),
                     QLatin1String(type),
                     QStringLiteral("--out"),
                     out});
    EXPECT_TRUE(p.waitForFinished(60000));
    EXPECT_EQ(p.exitCode(), 0);
    return out;
  };
  const QString f32 = make("F32");
  const QString q8 = make("Q8_0");
  QualityRunner runner;
  QSignalSpy done(&runner, &QualityRunner::finished);
  QSignalSpy failed(&runner, &QualityRunner::failed);
  ASSERT_TRUE(runner.start(engine, q8, f32, 2));
  ASSERT_TRUE(done.wait(60000)) << (failed.isEmpty()
                                        ? "no answer"
                                        : failed.first().at(0).toString().toStdString());
  const QualityRecord r = done.first().at(0).value<QualityRecord>();
  EXPECT_EQ(r.reference, f32);
  EXPECT_GT(r.klMean, 0.0);
  EXPECT_LT(r.klMean, 0.05);  // Q8_0 stays close
  EXPECT_GT(r.top1Percent, 90.0);
  EXPECT_GT(r.tokensScored, 0);
}
