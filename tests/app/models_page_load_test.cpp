// The Models page against a fake engine: projectors are listed as the vision part of their model,
// not as models; a local file's context starts at its own maximum; Load sends the planner's
// settings, which are remembered per file and restored when the file is selected again.
#include <gtest/gtest.h>

#include <QFile>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

#include "EngineSession.h"
#include "LoadSettings.h"
#include "ModelListModel.h"
#include "ModelsPage.h"
#include "fake_engine.h"

using arc::app::EngineClient;
using arc::app::EngineSession;
using arc::app::FitInputs;
using arc::app::LoadSettingsStore;
using arc::app::ModelsPage;

namespace {

const QByteArray kLocal = R"([
  {"path":"/m/Qwen3-VL-Tiny-Q4_K_M.gguf","name":"Qwen3-VL-Tiny-Q4_K_M","context_length":40960,
   "file_bytes":1000000,"mmproj":false,"vision_projector":"/m/mmproj-Qwen3-VL-Tiny-F16.gguf"},
  {"path":"/m/mmproj-Qwen3-VL-Tiny-F16.gguf","name":"mmproj-Qwen3-VL-Tiny-F16","file_bytes":1000,
   "mmproj":true},
  {"path":"/m/text-Q8_0.gguf","name":"text-Q8_0","context_length":8192,"file_bytes":2000000,
   "mmproj":false}])";

QJsonObject lastLoadBody(const FakeEngine& engine) {
  QJsonObject body;
  for (const auto& r : engine.requests)
    if (r.path == "/engine/load") body = QJsonDocument::fromJson(r.body).object();
  return body;
}

}  // namespace

TEST(ModelsPageLoad, ProjectorsAreNotModelsAndLoadSettingsAreSentAndRemembered) {
  QStandardPaths::setTestModeEnabled(true);
  QFile::remove(LoadSettingsStore::defaultFileName());
  FakeEngine engine;
  ASSERT_TRUE(engine.listen());
  engine.setResponse("GET", "/health", 200, R"({"state":"idle"})");
  engine.setResponse("GET", "/engine/status", 200, R"({"state":"idle","model":null})");
  engine.setResponse("GET", "/engine/local-models", 200, kLocal);
  engine.setResponse("POST", "/engine/load", 202, R"({"status":"loading"})");
  EngineSession session;
  ModelsPage page(&session);
  session.client()->setBaseUrl(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(engine.port())));
  session.client()->setBackoff(20, 200);
  session.client()->connectToEngine();
  ASSERT_TRUE(QTest::qWaitFor([&] { return page.localModel()->rowCount() > 0; }, 5000));

  // Two models; the projector is the vision part of the first.
  EXPECT_EQ(page.localModel()->rowCount(), 2);
  EXPECT_LT(page.localModel()->rowOf(QStringLiteral("mmproj-Qwen3-VL-Tiny-F16")), 0);
  const int vl = page.localModel()->rowOf(QStringLiteral("Qwen3-VL-Tiny-Q4_K_M"));
  ASSERT_GE(vl, 0);
  EXPECT_EQ(page.localModel()->entryAt(vl)->visionProjector,
            QStringLiteral("/m/mmproj-Qwen3-VL-Tiny-F16.gguf"));
  EXPECT_TRUE(page.localModel()->entryAt(vl)->visionModel);

  // A file's context starts at its own maximum (never above it).
  ASSERT_TRUE(page.selectModel(QStringLiteral("text-Q8_0")));
  EXPECT_EQ(page.fitController()->inputs().contextTokens, 8192);
  FitInputs in = page.fitController()->inputs();
  in.contextTokens = 1 << 20;  // more than the file supports: capped
  page.setInputs(in);
  EXPECT_LE(page.loadSettings().contextTokens, 1 << 20);
  in.contextTokens = 4096;
  in.concurrency = 3;
  in.kvDtype = QStringLiteral("q8_0");  // a planning type: loads as f16
  in.reserveGiB = 5;
  page.setInputs(in);
  page.loadSelected();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !lastLoadBody(engine).isEmpty(); }, 3000));
  QJsonObject body = lastLoadBody(engine);
  EXPECT_EQ(body.value(QStringLiteral("model")).toString(), QStringLiteral("/m/text-Q8_0.gguf"));
  EXPECT_EQ(body.value(QStringLiteral("ctx_size")).toInteger(), 4096);
  EXPECT_EQ(body.value(QStringLiteral("parallel")).toInt(), 3);
  EXPECT_EQ(body.value(QStringLiteral("kv_type")).toString(), QStringLiteral("f16"));
  EXPECT_DOUBLE_EQ(body.value(QStringLiteral("reserve_gib")).toDouble(), 5);

  // Another file gets its own default; coming back restores what was loaded with.
  ASSERT_TRUE(page.selectModel(QStringLiteral("Qwen3-VL-Tiny-Q4_K_M")));
  EXPECT_LE(page.fitController()->inputs().contextTokens, 40960);
  ASSERT_TRUE(page.selectModel(QStringLiteral("text-Q8_0")));
  EXPECT_EQ(page.fitController()->inputs().contextTokens, 4096);
  EXPECT_EQ(page.fitController()->inputs().concurrency, 3);
  EXPECT_DOUBLE_EQ(page.fitController()->inputs().reserveGiB, 5);
  // And the store survives a restart of the app.
  LoadSettingsStore again(LoadSettingsStore::defaultFileName());
  arc::app::LoadSettings s;
  ASSERT_TRUE(again.find(QStringLiteral("/m/text-Q8_0.gguf"), &s));
  EXPECT_EQ(s.contextTokens, 4096);
  EXPECT_EQ(s.parallel, 3);
  QFile::remove(LoadSettingsStore::defaultFileName());
}
