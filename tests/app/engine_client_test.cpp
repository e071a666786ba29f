// EngineClient against FakeEngine: routes and payloads, the API key, events split at every byte,
// reconnect with backoff after the stream drops, and errors a user can read.
#include <gtest/gtest.h>

#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

#include "EngineClient.h"
#include "fake_engine.h"

using arc::app::EngineClient;
using arc::app::EngineError;
using arc::app::EngineState;
using arc::app::EngineStatus;
using arc::app::LoadProgress;
using arc::app::StatsSnapshot;

namespace {

const QByteArray kStatus = R"({"state":"ready","version":"0.1.0","ranks":2,
  "model":{"id":"tiny","path":"/m/tiny.gguf","architecture":"qwen3moe","context_length":4096},
  "memory":[{"rank":0,"host":"a","used_bytes":1073741824,"total_bytes":137438953472},
            {"rank":1,"host":"b","used_bytes":2147483648,"total_bytes":137438953472}]})";

class EngineClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(engine.listen());
    engine.setResponse("GET", "/health", 200, R"({"state":"ready"})");
    engine.setResponse("GET", "/engine/status", 200, kStatus);
    client.setBaseUrl(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(engine.port())));
    client.setBackoff(20, 200);
    client.setRequestTimeout(3000);
  }
  void connectAndWaitForStream() {
    QSignalSpy opened(&client, &EngineClient::eventStreamOpened);
    client.connectToEngine();
    ASSERT_TRUE(
        QTest::qWaitFor([&] { return opened.count() > 0 && engine.eventStreams() == 1; }, 5000));
  }
  FakeEngine engine;
  EngineClient client;
};

}  // namespace

TEST_F(EngineClientTest, ConnectsFetchesStatusAndSendsKey) {
  engine.setRequiredKey("secret");
  client.setApiKey(QStringLiteral("secret"));
  QSignalSpy status(&client, &EngineClient::statusReceived);
  connectAndWaitForStream();
  ASSERT_TRUE(QTest::qWaitFor([&] { return status.count() == 1; }, 3000));
  const EngineStatus s = client.lastStatus();
  EXPECT_EQ(s.state, EngineState::Ready);
  EXPECT_EQ(s.version, QStringLiteral("0.1.0"));
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.model.path, QStringLiteral("/m/tiny.gguf"));
  ASSERT_EQ(s.memory.size(), 2);
  EXPECT_EQ(s.memory[1].usedBytes, 2147483648LL);
  EXPECT_EQ(client.connection(), EngineClient::Connection::Connected);
  for (const auto& r : engine.requests) {
    if (r.path != "/health") {
      EXPECT_EQ(r.authorization, QByteArray("Bearer secret")) << r.path.data();
    }
  }
}

TEST_F(EngineClientTest, WrongKeyIsAPlainMessage) {
  engine.setRequiredKey("secret");
  client.setApiKey(QStringLiteral("wrong"));
  QSignalSpy failed(&client, &EngineClient::requestFailed);
  client.connectToEngine();
  ASSERT_TRUE(QTest::qWaitFor([&] { return failed.count() >= 1; }, 3000));
  EXPECT_TRUE(failed.first().at(1).toString().contains(QStringLiteral("API key")))
      << failed.first().at(1).toString().toStdString();
}

TEST_F(EngineClientTest, EventsSplitAtEveryByte) {
  connectAndWaitForStream();
  QSignalSpy progress(&client, &EngineClient::loadProgress);
  QSignalSpy stats(&client, &EngineClient::statsReceived);
  QSignalSpy state(&client, &EngineClient::stateChanged);
  const QByteArray events =
      ": ping\r\n"
      "event: load_progress\r\ndata: {\"rank\":1,\"bytes_done\":300,\"bytes_total\":1000}\r\n\r\n"
      "event: stats\ndata: {\"decode_tokens_per_s\":41.5,\"running\":2,\n"
      "data: \"memory\":[{\"rank\":0,\"used_bytes\":5,\"total_bytes\":9}]}\n\n"
      "data: {\"type\":\"state\",\"state\":\"loading\",\"model\":\"x\"}\n\n";
  engine.sendEvents(events, /*bytewise=*/true);
  ASSERT_TRUE(QTest::qWaitFor([&] { return state.count() == 1; }, 5000));
  ASSERT_EQ(progress.count(), 1);
  const auto p = progress.first().at(0).value<LoadProgress>();
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.bytesDone, 300);
  EXPECT_EQ(p.bytesTotal, 1000);
  ASSERT_EQ(stats.count(), 1);
  const auto s = stats.first().at(0).value<StatsSnapshot>();
  EXPECT_DOUBLE_EQ(s.decodeTokensPerSec, 41.5);
  EXPECT_EQ(s.running, 2);
  ASSERT_EQ(s.memory.size(), 1);
  EXPECT_EQ(s.memory[0].totalBytes, 9);
  EXPECT_EQ(state.first().at(0).value<EngineState>(), EngineState::Loading);
}

TEST_F(EngineClientTest, ReconnectsWithBackoffAfterDrop) {
  connectAndWaitForStream();
  QSignalSpy conn(&client, &EngineClient::connectionChanged);
  engine.dropEventStreams();
  ASSERT_TRUE(QTest::qWaitFor([&] { return engine.eventConnectionsSeen() == 2; }, 5000));
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return client.connection() == EngineClient::Connection::Connected; }, 3000));
  bool sawReconnecting = false;
  for (const auto& args : conn)
    sawReconnecting |=
        args.at(0).value<EngineClient::Connection>() == EngineClient::Connection::Reconnecting;
  EXPECT_TRUE(sawReconnecting);

  // Engine gone: attempts continue with a doubling delay up to the cap.
  const quint16 port = engine.port();
  engine.close();
  ASSERT_TRUE(QTest::qWaitFor([&] { return client.currentBackoffMs() == 200; }, 5000));
  EXPECT_NE(client.connection(), EngineClient::Connection::Connected);
  // Back again on the same port: the client finds it without being told.
  ASSERT_TRUE(engine.listen(port));
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return client.connection() == EngineClient::Connection::Connected; }, 5000));
  EXPECT_EQ(client.currentBackoffMs(), 20);  // a good connection resets the backoff
}

TEST_F(EngineClientTest, UnreachableEngineIsReported) {
  const quint16 port = engine.port();
  engine.close();
  client.setBaseUrl(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(port)));
  QSignalSpy failed(&client, &EngineClient::requestFailed);
  client.connectToEngine();
  ASSERT_TRUE(QTest::qWaitFor([&] { return failed.count() >= 1; }, 3000));
  EXPECT_TRUE(failed.first().at(1).toString().contains(QStringLiteral("not reachable")));
  client.disconnectFromEngine();
  EXPECT_EQ(client.connection(), EngineClient::Connection::Offline);
}

TEST_F(EngineClientTest, LoadRefusalCarriesNumbersAndLocalModelsParse) {
  engine.setResponse("POST", "/engine/load", 507,
                     R"({"error":{"message":"does not fit","required_bytes":137438953472,
                         "available_bytes":68719476736}})");
  engine.setResponse("GET", "/engine/local-models", 200,
                     R"({"models":[{"path":"/m/a.gguf","size_bytes":1000},{"path":"/m/b.gguf"}]})");
  QSignalSpy refused(&client, &EngineClient::loadRefused);
  QSignalSpy local(&client, &EngineClient::localModelsReceived);
  client.loadModel(QStringLiteral("/m/a.gguf"), 8192);
  client.fetchLocalModels();
  ASSERT_TRUE(QTest::qWaitFor([&] { return refused.count() == 1 && local.count() == 1; }, 3000));
  const auto e = refused.first().at(0).value<EngineError>();
  EXPECT_EQ(e.message, QStringLiteral("does not fit"));
  EXPECT_EQ(e.requiredBytes, 137438953472LL);
  EXPECT_EQ(e.availableBytes, 68719476736LL);
  EXPECT_TRUE(e.describe().contains(QStringLiteral("128.0 GiB")));
  EXPECT_TRUE(e.describe().contains(QStringLiteral("64.0 GiB")));
  EXPECT_EQ(local.first().at(0).toJsonArray().size(), 2);
  // The load request carried the path (as "model", the engine's key) and the context size.
  bool found = false;
  for (const auto& r : engine.requests) {
    if (r.path != "/engine/load") continue;
    const QJsonObject body = QJsonDocument::fromJson(r.body).object();
    EXPECT_EQ(body.value(QStringLiteral("model")).toString(), QStringLiteral("/m/a.gguf"));
    EXPECT_EQ(body.value(QStringLiteral("ctx_size")).toInteger(), 8192);
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST_F(EngineClientTest, MalformedJsonAndBadEventsDoNotCrash) {
  engine.setResponse("GET", "/engine/status", 200, "{not json");
  QSignalSpy failed(&client, &EngineClient::requestFailed);
  QSignalSpy errors(&client, &EngineClient::engineError);
  connectAndWaitForStream();
  ASSERT_TRUE(QTest::qWaitFor([&] { return failed.count() >= 1; }, 3000));
  EXPECT_TRUE(failed.first().at(1).toString().startsWith(
      QStringLiteral("asking the engine for its state failed: the engine's answer was not "
                     "readable")))
      << failed.first().at(1).toString().toStdString();
  engine.sendEvents("event: stats\ndata: [1,2\n\nevent: future_kind\ndata: {}\n\n");
  ASSERT_TRUE(QTest::qWaitFor([&] { return errors.count() >= 1; }, 3000));
  EXPECT_EQ(errors.count(), 1);  // the unknown type is ignored, the broken one reported
}

// The session the pages share: load progress becomes bytes and time left, a refusal keeps its
// numbers, load_done and unload mark the model.
#include "EngineSession.h"

namespace {

// Connects `session` to the fake engine and waits until it shows the engine's loaded model.
void connectSession(arc::app::EngineSession& session, const QUrl& url) {
  session.client()->setBaseUrl(url);
  session.client()->setBackoff(20, 200);
  QSignalSpy opened(session.client(), &EngineClient::eventStreamOpened);
  session.client()->connectToEngine();
  ASSERT_TRUE(QTest::qWaitFor([&] { return opened.count() == 1; }, 5000));
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return session.loadedPath() == QStringLiteral("/m/tiny.gguf"); }, 3000));
}

}  // namespace

TEST_F(EngineClientTest, SessionTracksLoadProgressRefusalAndLoadedModel) {
  arc::app::EngineSession session;
  connectSession(session, client.baseUrl());
  if (HasFatalFailure()) return;

  engine.setResponse("POST", "/engine/load", 202, R"({"state":"loading"})");
  QSignalSpy finished(&session, &arc::app::EngineSession::loadFinished);
  session.load(QStringLiteral("/m/other.gguf"));
  EXPECT_TRUE(session.isLoading());
  engine.sendEvents(
      "event: load_progress\ndata: {\"rank\":0,\"bytes_done\":0,\"bytes_total\":1073741824}\n\n");
  QTest::qWait(200);
  engine.sendEvents(
      "event: load_progress\ndata: {\"rank\":0,\"bytes_done\":536870912,"
      "\"bytes_total\":1073741824}\n\n");
  ASSERT_TRUE(
      QTest::qWaitFor([&] { return session.loadTracker().bytesDone() == 536870912; }, 3000));
  EXPECT_DOUBLE_EQ(session.loadTracker().fraction(), 0.5);
  EXPECT_GT(session.loadTracker().secondsLeft(), 0);
  EXPECT_TRUE(session.loadTracker().describe().startsWith(QStringLiteral("512.0 MiB of 1.0 GiB")))
      << session.loadTracker().describe().toStdString();
  engine.setResponse("GET", "/engine/status", 200,
                     R"({"state":"ready","model":{"id":"other","path":"/m/other.gguf"}})");
  engine.sendEvents("event: load_done\ndata: {\"model\":\"other\"}\n\n");
  ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() == 1; }, 3000));
  EXPECT_TRUE(finished.first().at(0).toBool());
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return session.loadedPath() == QStringLiteral("/m/other.gguf"); }, 3000));

  // A refusal: the message carries the engine's numbers.
  engine.setResponse("POST", "/engine/load", 507,
                     R"({"error":{"message":"needs more memory","required_bytes":214748364800,
                         "available_bytes":107374182400}})");
  session.load(QStringLiteral("/m/huge.gguf"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() == 2; }, 3000));
  EXPECT_FALSE(finished.last().at(0).toBool());
  const QString msg = finished.last().at(1).toString();
  EXPECT_TRUE(msg.contains(QStringLiteral("200.0 GiB")) &&
              msg.contains(QStringLiteral("100.0 GiB")))
      << msg.toStdString();
  EXPECT_FALSE(session.isLoading());
  EXPECT_EQ(session.message(), msg);

  engine.sendEvents("event: unloaded\ndata: {}\n\n");
  ASSERT_TRUE(QTest::qWaitFor([&] { return session.loadedPath().isEmpty(); }, 3000));
}

// After a failed load the session shows what the engine then reports (the previous model
// serving again), the banner clears on the next successful load without a reconnect, load
// settings travel in the request body, and a cancelled load ends as "cancelled", not as an
// error.
TEST_F(EngineClientTest, HonestStateAfterFailureSettingsAndCancel) {
  arc::app::EngineSession session;
  connectSession(session, client.baseUrl());
  if (HasFatalFailure()) return;
  QSignalSpy finished(&session, &arc::app::EngineSession::loadFinished);

  // Settings: every one set travels under the engine's key; f16/f32 only.
  engine.setResponse("POST", "/engine/load", 202, R"({"status":"loading"})");
  arc::app::LoadSettings s;
  s.contextTokens = 65536;
  s.kvType = QStringLiteral("f32");
  s.parallel = 4;
  s.reserveGiB = 6.5;
  session.load(QStringLiteral("/m/next.gguf"), s);
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        for (const auto& r : engine.requests)
          if (r.path == "/engine/load") return true;
        return false;
      },
      3000));
  QJsonObject body;
  for (const auto& r : engine.requests)
    if (r.path == "/engine/load") body = QJsonDocument::fromJson(r.body).object();
  EXPECT_EQ(body.value(QStringLiteral("model")).toString(), QStringLiteral("/m/next.gguf"));
  EXPECT_EQ(body.value(QStringLiteral("ctx_size")).toInteger(), 65536);
  EXPECT_EQ(body.value(QStringLiteral("kv_type")).toString(), QStringLiteral("f32"));
  EXPECT_EQ(body.value(QStringLiteral("parallel")).toInt(), 4);
  EXPECT_DOUBLE_EQ(body.value(QStringLiteral("reserve_gib")).toDouble(), 6.5);
  arc::app::LoadSettings q8 = s;
  q8.kvType = QStringLiteral("q8_0");  // a planning type the engine does not keep: not sent
  EXPECT_FALSE(q8.toLoadRequest(QStringLiteral("/m/x.gguf")).contains(QStringLiteral("kv_type")));
  EXPECT_EQ(arc::app::LoadSettings::fromJson(s.toJson()), s);

  // The load fails after the unload; the engine brings tiny back and says so in its status.
  engine.sendEvents("event: unloaded\ndata: {}\n\n");
  ASSERT_TRUE(QTest::qWaitFor([&] { return session.loadedPath().isEmpty(); }, 3000));
  engine.sendEvents(
      "event: load_error\ndata: {\"model\":\"/m/next.gguf\",\"message\":\"bad tensor\"}\n\n");
  ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() == 1; }, 3000));
  EXPECT_FALSE(finished.last().at(0).toBool());
  EXPECT_TRUE(session.message().contains(QStringLiteral("bad tensor")));
  EXPECT_FALSE(session.isLoading());
  // The client asked for the status after the failure: the session shows the model serving.
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return session.loadedPath() == QStringLiteral("/m/tiny.gguf"); }, 3000));

  // The next load succeeds: the banner clears without a reconnect.
  session.load(QStringLiteral("/m/next.gguf"), s);
  engine.setResponse("GET", "/engine/status", 200,
                     R"({"state":"ready","model":{"id":"next","path":"/m/next.gguf"}})");
  engine.sendEvents("event: load_done\ndata: {\"model\":\"next\"}\n\n");
  ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() == 2; }, 3000));
  EXPECT_TRUE(finished.last().at(0).toBool());
  EXPECT_TRUE(session.message().isEmpty()) << session.message().toStdString();
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return session.loadedPath() == QStringLiteral("/m/next.gguf"); }, 3000));

  // Cancel: the request goes to /engine/load/cancel; the engine's cancelled event ends the load
  // without an error message.
  engine.setResponse("POST", "/engine/load/cancel", 202, R"({"status":"cancelling"})");
  session.load(QStringLiteral("/m/big.gguf"), s);
  EXPECT_TRUE(session.isLoading());
  session.cancelLoad();
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        for (const auto& r : engine.requests)
          if (r.path == "/engine/load/cancel") return true;
        return false;
      },
      3000));
  engine.sendEvents(
      "event: load_error\ndata: {\"model\":\"/m/big.gguf\",\"message\":\"the load was "
      "cancelled\",\"cancelled\":true}\n\n");
  ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() == 3; }, 3000));
  EXPECT_FALSE(finished.last().at(0).toBool());
  EXPECT_TRUE(finished.last().at(1).toString().contains(QStringLiteral("cancelled")));
  EXPECT_TRUE(session.message().isEmpty()) << session.message().toStdString();
  EXPECT_FALSE(session.isLoading());
}

// Attached to an engine it did not start, the engine log shows the engine's recent lines
// (GET /engine/log with the key), and says so when the engine cannot give them.
#include "LogDialog.h"

TEST_F(EngineClientTest, LogDialogShowsTheAttachedEnginesRecentLog) {
  engine.setResponse("GET", "/engine/log", 200,
                     R"({"lines":["2026-12-07 10:00:00.000 info  [engine] loaded tiny.gguf",
                                  "2026-12-07 10:00:01.000 warn  [server] something"]})");
  arc::app::EngineSession session;
  connectSession(session, client.baseUrl());
  if (HasFatalFailure()) return;
  arc::app::LogDialog dlg(&session);
  ASSERT_TRUE(
      QTest::qWaitFor([&] { return dlg.text().contains(QStringLiteral("[server]")); }, 3000))
      << dlg.text().toStdString();
  EXPECT_TRUE(dlg.text().contains(QStringLiteral("loaded tiny.gguf")));
  bool asked = false;
  for (const auto& r : engine.requests) asked |= r.path.startsWith("/engine/log");
  EXPECT_TRUE(asked);

  engine.setResponse("GET", "/engine/log", 404, R"({"error":{"message":"not found"}})");
  arc::app::LogDialog old(&session);  // an older engine without the route
  ASSERT_TRUE(
      QTest::qWaitFor([&] { return old.text().contains(QStringLiteral("not available")); }, 3000))
      << old.text().toStdString();
}
