// EngineClient against the real `arclight-engine serve` (not the fake): the request bodies the
// app sends must be the ones the engine accepts. The fake engine only checks what the app sends,
// so a key both sides spell differently (the load request once sent "path" where the engine
// reads "model") passes every fake test and fails here.
#include <gtest/gtest.h>

#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "EngineClient.h"

using arc::app::EngineClient;
using arc::app::EngineError;

namespace {

const QString kEngine = QStringLiteral(ARC_BIN_DIR "/arclight-engine");

class RealEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!QFileInfo(kEngine).isExecutable()) {
      GTEST_SKIP() << "no engine binary at " << kEngine.toStdString();
    }
    ASSERT_TRUE(m_dir.isValid());
    m_model = m_dir.filePath(QStringLiteral("tiny.gguf"));
    QProcess gen;
    gen.start(kEngine, {QStringLiteral("--log-level"), QStringLiteral("warn"),
                        QStringLiteral("make-test-model"), QStringLiteral("--family"),
                        QStringLiteral("qwen3moe"), QStringLiteral("--layers"), QStringLiteral("1"),
                        QStringLiteral("--out"), m_model});
    ASSERT_TRUE(gen.waitForFinished(60000));
    ASSERT_EQ(gen.exitCode(), 0) << gen.readAllStandardError().toStdString();

    m_engine.start(kEngine,
                   {QStringLiteral("--log-level"), QStringLiteral("warn"), QStringLiteral("serve"),
                    QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--threads"),
                    QStringLiteral("1"), QStringLiteral("--model-dir"), m_dir.path()});
    ASSERT_TRUE(m_engine.waitForStarted(10000));
    // The first stdout line names the port: "... listening on 127.0.0.1:PORT".
    QByteArray line;
    ASSERT_TRUE(QTest::qWaitFor(
        [&] {
          line += m_engine.readAllStandardOutput();
          return line.contains('\n') || m_engine.state() != QProcess::Running;
        },
        20000));
    line = line.left(line.indexOf('\n'));
    const int colon = line.lastIndexOf(':');
    ASSERT_TRUE(line.contains("listening on") && colon > 0) << line.toStdString();
    const int port = line.mid(colon + 1).trimmed().toInt();
    ASSERT_GT(port, 0) << line.toStdString();

    m_client.setBaseUrl(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(port)));
    QSignalSpy opened(&m_client, &EngineClient::eventStreamOpened);
    m_client.connectToEngine();
    ASSERT_TRUE(opened.wait(10000)) << "the event stream did not open";
  }
  void TearDown() override {
    if (m_engine.state() == QProcess::Running) {
      m_engine.terminate();
      if (!m_engine.waitForFinished(10000)) m_engine.kill();
      m_engine.waitForFinished(5000);
    }
  }

  QTemporaryDir m_dir;
  QString m_model;
  QProcess m_engine;
  EngineClient m_client;
};

TEST_F(RealEngine, LoadsAndUnloadsAModelFromTheApp) {
  QSignalSpy accepted(&m_client, &EngineClient::loadAccepted);
  QSignalSpy refused(&m_client, &EngineClient::loadRefused);
  QSignalSpy done(&m_client, &EngineClient::loadDone);
  QSignalSpy failed(&m_client, &EngineClient::loadFailed);
  m_client.loadModel(m_model, 256);
  ASSERT_TRUE(QTest::qWaitFor([&] { return accepted.count() + refused.count() > 0; }, 10000));
  ASSERT_EQ(refused.count(), 0) << refused.first().at(0).value<EngineError>().message.toStdString();
  ASSERT_TRUE(QTest::qWaitFor([&] { return done.count() + failed.count() > 0; }, 60000));
  ASSERT_EQ(failed.count(), 0) << failed.first().at(0).value<EngineError>().message.toStdString();
  EXPECT_FALSE(done.first().at(0).toString().isEmpty());  // the model's name

  QSignalSpy unloaded(&m_client, &EngineClient::unloadDone);
  m_client.unloadModel();
  EXPECT_TRUE(QTest::qWaitFor([&] { return unloaded.count() > 0; }, 10000));
}

TEST_F(RealEngine, RefusesAMissingFileWithTheEnginesReason) {
  QSignalSpy refused(&m_client, &EngineClient::loadRefused);
  QSignalSpy failed(&m_client, &EngineClient::loadFailed);
  m_client.loadModel(m_dir.filePath(QStringLiteral("missing.gguf")));
  // The engine accepts the request and reports the failure on the event stream (or refuses it
  // at once); either way the app gets a message naming the file.
  ASSERT_TRUE(QTest::qWaitFor([&] { return refused.count() + failed.count() > 0; }, 20000));
  const EngineError e = (refused.count() > 0 ? refused : failed).first().at(0).value<EngineError>();
  EXPECT_TRUE(e.message.contains(QStringLiteral("missing.gguf"))) << e.message.toStdString();
}

}  // namespace
