// Core pieces without a network: load-progress arithmetic, the engine process (missing binary,
// a failing program, stop), settings defaults and the event payload parsers.
#include <gtest/gtest.h>

#include <QImage>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "AppSettings.h"
#include "EngineEvents.h"
#include "EngineProcess.h"
#include "ImageAttachment.h"
#include "LoadProgressTracker.h"
#include "fake_engine_script.h"

using namespace arc::app;
using arc::app::testing::writeScript;

TEST(LoadProgressTracker, SumsRanksAndEstimatesTimeLeft) {
  LoadProgressTracker t;
  EXPECT_EQ(t.secondsLeft(), -1);
  t.update({0, 0, 1000, {}}, 0);
  t.update({1, 0, 1000, {}}, 0);
  t.update({0, 400, 1000, {}}, 2000);
  t.update({1, 200, 1000, {}}, 2000);
  EXPECT_EQ(t.bytesDone(), 600);
  EXPECT_EQ(t.bytesTotal(), 2000);
  EXPECT_DOUBLE_EQ(t.fraction(), 0.3);
  EXPECT_DOUBLE_EQ(t.bytesPerSecond(), 300.0);        // 600 bytes in 2 s
  EXPECT_DOUBLE_EQ(t.secondsLeft(), 1400.0 / 300.0);  // 1400 bytes to go
  EXPECT_EQ(formatDuration(3725), QStringLiteral("1 h 02 min"));
  EXPECT_EQ(formatDuration(185), QStringLiteral("3 min 05 s"));
  EXPECT_EQ(formatDuration(42), QStringLiteral("42 s"));
  t.reset();
  EXPECT_EQ(t.bytesTotal(), 0);
}

TEST(EngineProcess, MissingBinaryIsAPlainMessage) {
  EngineProcess p;
  QSignalSpy failed(&p, &EngineProcess::failed);
  EngineLaunch l;
  l.enginePath = QStringLiteral("/nonexistent/arclight-engine");
  EXPECT_FALSE(p.start(l));
  ASSERT_EQ(failed.count(), 1);
  EXPECT_TRUE(failed.first().at(0).toString().startsWith(QStringLiteral("engine not available")));
}

TEST(EngineProcess, CommandLineUsesMpirunWithHostfile) {
  EngineLaunch l;
  l.enginePath = QStringLiteral("/opt/arclight-engine");
  l.port = 9000;
  l.apiKey = QStringLiteral("k");
  l.modelDirs = {QStringLiteral("/models")};
  EXPECT_EQ(
      EngineProcess::commandLine(l),
      (QStringList{QStringLiteral("/opt/arclight-engine"), QStringLiteral("serve"),
                   QStringLiteral("--host"), QStringLiteral("127.0.0.1"), QStringLiteral("--port"),
                   QStringLiteral("9000"), QStringLiteral("--api-key"), QStringLiteral("k"),
                   QStringLiteral("--backend"), QStringLiteral("auto"),
                   QStringLiteral("--model-dir"), QStringLiteral("/models")}));
  // The backend chosen in Settings reaches the engine (auto by default: the GPU on a Spark).
  l.backend = QStringLiteral("cpu");
  EXPECT_TRUE(EngineProcess::commandLine(l)
                  .join(QLatin1Char(' '))
                  .contains(QStringLiteral("--backend cpu")));
  l.backend = QStringLiteral("auto");
  l.hostfile = QStringLiteral("/etc/hosts.mpi");
  l.ranks = 2;
  const QStringList cmd = EngineProcess::commandLine(l);
  EXPECT_EQ(cmd.mid(0, 5),
            (QStringList{QStringLiteral("mpirun"), QStringLiteral("-np"), QStringLiteral("2"),
                         QStringLiteral("--hostfile"), QStringLiteral("/etc/hosts.mpi")}));
  EXPECT_EQ(cmd.at(5), QStringLiteral("/opt/arclight-engine"));
}

TEST(EngineProcess, FailingEngineReportsItsLastLogLine) {
  QTemporaryDir dir;
  EngineProcess p;
  QSignalSpy failed(&p, &EngineProcess::failed);
  EngineLaunch l;
  l.enginePath = writeScript(dir, "echo starting\necho 'unknown subcommand: serve' >&2\nexit 2\n");
  ASSERT_TRUE(p.start(l));
  ASSERT_TRUE(QTest::qWaitFor([&] { return failed.count() == 1; }, 5000));
  const QString msg = failed.first().at(0).toString();
  EXPECT_TRUE(msg.contains(QStringLiteral("code 2"))) << msg.toStdString();
  EXPECT_TRUE(msg.contains(QStringLiteral("unknown subcommand: serve"))) << msg.toStdString();
  EXPECT_TRUE(p.log().contains(QStringLiteral("starting")));
}

TEST(EngineProcess, StopEndsAnEngineThatIgnoresSigterm) {
  QTemporaryDir dir;
  EngineProcess p;
  QSignalSpy failed(&p, &EngineProcess::failed);
  QSignalSpy stopped(&p, &EngineProcess::stopped);
  EngineLaunch l;
  l.enginePath = writeScript(dir, "trap '' TERM\necho up\nwhile true; do sleep 0.05; done\n");
  ASSERT_TRUE(p.start(l));
  ASSERT_TRUE(QTest::qWaitFor([&] { return p.log().contains(QStringLiteral("up")); }, 5000));
  QElapsedTimer t;
  t.start();
  p.stop(300);  // SIGTERM is ignored: killed after the timeout
  EXPECT_FALSE(p.isRunning());
  EXPECT_LT(t.elapsed(), 3000);
  EXPECT_EQ(stopped.count(), 1);
  EXPECT_EQ(failed.count(), 0);  // a stop we asked for is not a failure
}

TEST(AppSettings, DefaultsAndEffectiveUrl) {
  QTemporaryDir dir;
  AppSettings s(dir.filePath(QStringLiteral("s.ini")));
  EXPECT_EQ(s.engineMode(), AppSettings::EngineMode::Local);
  EXPECT_TRUE(s.startLocalEngine());
  EXPECT_EQ(s.effectiveUrl(), QUrl(QStringLiteral("http://127.0.0.1:8080")));
  s.setLocalPort(9123);
  EXPECT_EQ(s.effectiveUrl(), QUrl(QStringLiteral("http://127.0.0.1:9123")));
  s.setEngineMode(AppSettings::EngineMode::Remote);
  s.setEngineUrl(QUrl(QStringLiteral("http://spark-1:8080")));
  EXPECT_EQ(s.effectiveUrl(), QUrl(QStringLiteral("http://spark-1:8080")));
  s.setLocalPort(70000);  // out of range falls back to the default
  EXPECT_EQ(s.localPort(), 8080);
}

TEST(EngineEvents, ParsersAreLenient) {
  const auto o = QJsonDocument::fromJson(R"({"rank":"x","bytes_done":5})").object();
  const LoadProgress p = LoadProgress::fromJson(o);
  EXPECT_EQ(p.rank, 0);  // wrong type keeps the default
  EXPECT_EQ(p.bytesDone, 5);
  const EngineError e =
      EngineError::fromJson(QJsonDocument::fromJson(R"({"error":"plain"})").object());
  EXPECT_EQ(e.message, QStringLiteral("plain"));
  EXPECT_EQ(engineStateFromString(QStringLiteral("ready")), EngineState::Ready);
  EXPECT_EQ(engineStateFromString(QStringLiteral("weird")), EngineState::Unknown);
  EXPECT_EQ(formatBytes(3LL << 30), QStringLiteral("3.0 GiB"));
}

// The engine takes PNG, JPEG and WebP; other formats Qt reads are converted to PNG, pixels kept.
TEST(ImageAttachment, FormatsTheEngineCannotDecodeAreSentAsPng) {
  QTemporaryDir dir;
  QImage img(5, 3, QImage::Format_RGB32);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) img.setPixel(x, y, qRgb(40 * x, 70 * y, 200));
  const QString bmp = dir.filePath(QStringLiteral("pic.bmp"));
  const QString png = dir.filePath(QStringLiteral("pic.png"));
  ASSERT_TRUE(img.save(bmp, "BMP"));
  ASSERT_TRUE(img.save(png, "PNG"));

  QString error;
  const QString fromBmp = ImageAttachment::fromFile(bmp, &error);
  ASSERT_TRUE(fromBmp.startsWith(QStringLiteral("data:image/png;base64,"))) << error.toStdString();
  const QImage back = ImageAttachment::toImage(fromBmp);
  ASSERT_EQ(back.size(), img.size());
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) EXPECT_EQ(back.pixel(x, y), img.pixel(x, y)) << x << "," << y;

  // A PNG goes as it is, byte for byte.
  QFile f(png);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  EXPECT_EQ(ImageAttachment::fromFile(png, &error),
            QStringLiteral("data:image/png;base64,") + QString::fromLatin1(f.readAll().toBase64()));

  // Text is refused with a message.
  const QString txt = dir.filePath(QStringLiteral("notes.txt"));
  QFile t(txt);
  ASSERT_TRUE(t.open(QIODevice::WriteOnly));
  t.write("hello");
  t.close();
  EXPECT_TRUE(ImageAttachment::fromFile(txt, &error).isEmpty());
  EXPECT_TRUE(error.contains(QStringLiteral("not an image"))) << error.toStdString();
}
