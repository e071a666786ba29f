// The Cluster page's state offscreen: GET /engine/cluster and POST /engine/link-test parsed from
// a fake engine, the box and port models (bars, state colours, hints), the findings' wording,
// the hostfile editor's checks and the mpirun command; then the page itself.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "AppSettings.h"
#include "ClusterBoxModel.h"
#include "ClusterController.h"
#include "ClusterPage.h"
#include "ClusterPortModel.h"
#include "EngineClient.h"
#include "EngineSession.h"
#include "Hostfile.h"
#include "fake_engine.h"

using namespace arc::app;

namespace {

// Two boxes as the engine reports them (the probe's JSON shape, arc::cluster::to_json): box a
// with one active port (MTU 1500) and one without link, swap in use and 32 of 128 GiB page
// cache; box b with an active port at MTU 9000, link up but RDMA INIT on its second, no swap.
const QByteArray kCluster = R"json({"ranks":2,"probed_at":1,"hosts":[],
 "nodes":[
  {"rank":0,"host":"spark-a","probe":{"hostname":"spark-a",
    "cpu":{"model":"10x Cortex-X925 + 10x Cortex-A725","cores":20},
    "memory":{"total_bytes":137438953472,"available_bytes":103079215104,
              "swap_total_bytes":17179869184,"swap_used_bytes":4294967296,
              "page_cache_bytes":34359738368,"dirty_bytes":0},
    "gpus":[{"name":"NVIDIA GB10","compute_capability":"12.1","total_bytes":128849018880,
             "free_bytes":107374182400}],
    "rdma":[{"name":"rocep1s0f0","ports":[{"port":1,"active":true,"link_up":true,
              "state":"ACTIVE","phys_state":"LinkUp","rate":"200 Gb/sec (4X HDR)",
                 "rate_gbps" : 200, "link_layer" : "Ethernet", "netdev" : {
  "name" : "enp1s0f0np0", "mtu" : 1500, "operstate" : "up"
}
}]
},
            {"name":"rocep1s0f1","ports":[{"port":1,"active":false,"link_up":false,
              "state":"DOWN","phys_state":"Disabled","link_layer":"Ethernet"}]}],
    "findings":[{"code":"mtu_small","severity":"info","subject":"enp1s0f0np0","message":"m"},
                {"code":"swap_used","severity":"warning","subject":"swap","message":"s"},
                {"code":"new_code","severity":"info","subject":"x","message":"engine text"}]
}
},
  {"rank":1,"host":"spark-b","probe":{"hostname":"spark-b","cpu":{},
    "memory":{"total_bytes":"lots","swap_total_bytes":0},
    "gpus":[],"gpu_note":"built without CUDA",
    "rdma":[{"name":"rocep1s0f0","ports":[{"port":1,"active":true,"link_up":true,
              "state":"ACTIVE","phys_state":"LinkUp","rate_gbps":200,"link_layer":"Ethernet",
              "netdev":{"name":"enp1s0f0np0","mtu":9000,"operstate":"up"}},
             {"port":2,"active":false,"link_up":true,"state":"INIT","phys_state":"LinkUp",
              "link_layer":"Ethernet"}]}],
    "findings":[{"code":"port_not_active","severity":"warning","subject":"rocep1s0f0 port 2",
                 "message":"p"}]}}]
})json";

const QByteArray kLinkTest = R"({"ranks":2,"transport":"mpi","model_loaded":false,"results":[
  {"bytes":16384,"iterations":200,"seconds":0.00002,"algbw_gbs":0.8192,"busbw_gbs":0.8192,
   "correct":true},
  {"bytes":67108864,"iterations":8,"seconds":0.005,"algbw_gbs":13.4217728,
   "busbw_gbs":13.4217728,"correct":true}]})";

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(engine.listen());
    engine.setResponse("GET", "/engine/cluster", 200, kCluster);
    engine.setResponse("POST", "/engine/link-test", 200, kLinkTest);
    client.setBaseUrl(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(engine.port())));
    client.setRequestTimeout(3000);
  }
  FakeEngine engine;
  EngineClient client;
};

}  // namespace

TEST_F(ClusterTest, ControllerParsesTheBoxesAndWordsTheFindings) {
  ClusterController c(&client);
  QSignalSpy changed(&c, &ClusterController::changed);
  c.refresh();
  EXPECT_TRUE(c.isRefreshing());
  ASSERT_TRUE(QTest::qWaitFor([&] { return c.hasSnapshot(); }, 3000));
  EXPECT_FALSE(c.isRefreshing());
  EXPECT_TRUE(c.error().isEmpty());
  const ClusterSnapshot& s = c.snapshot();
  EXPECT_EQ(s.ranks, 2);
  ASSERT_EQ(s.boxes.size(), 2);
  const ClusterBox& a = s.boxes[0];
  EXPECT_EQ(a.host, QStringLiteral("spark-a"));
  EXPECT_EQ(a.cpuCores, 20);
  EXPECT_EQ(a.memTotal, 128ll << 30);
  EXPECT_EQ(a.swapUsed, 4ll << 30);
  EXPECT_EQ(a.gpuName, QStringLiteral("NVIDIA GB10"));
  ASSERT_EQ(a.ports.size(), 2);
  EXPECT_EQ(a.ports[0].netdev, QStringLiteral("enp1s0f0np0"));
  EXPECT_EQ(a.ports[0].mtu, 1500);
  EXPECT_EQ(a.ports[1].rateGbps, -1);
  const ClusterBox& b = s.boxes[1];
  EXPECT_EQ(b.rank, 1);
  EXPECT_EQ(b.memTotal, -1);  // "lots" is not a number
  EXPECT_EQ(b.swapTotal, 0);
  EXPECT_EQ(b.gpuNote, QStringLiteral("built without CUDA"));
  // Warnings first, each with its box; an unknown code keeps the engine's text.
  const QStringList h = c.hints();
  ASSERT_EQ(h.size(), 4);
  EXPECT_TRUE(h[0].startsWith(QStringLiteral("spark-a: Swap is in use"))) << h[0].toStdString();
  EXPECT_TRUE(h[1].startsWith(QStringLiteral("spark-b: rocep1s0f0 port 2: the link is up")))
      << h[1].toStdString();
  EXPECT_TRUE(h[2].contains(QStringLiteral("enp1s0f0np0 has a small MTU")));
  EXPECT_EQ(h[3], QStringLiteral("spark-a: engine text"));
  EXPECT_GE(changed.count(), 2);

  // Engine gone: the reason, and the last snapshot stays.
  engine.setResponse("GET", "/engine/cluster", 503,
                     R"({"error":{"message":"a model is loading on every rank"}})");
  c.refresh();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !c.isRefreshing(); }, 3000));
  EXPECT_EQ(c.error(), QStringLiteral("a model is loading on every rank"));
  EXPECT_EQ(c.snapshot().boxes.size(), 2);
}

TEST_F(ClusterTest, LinkTestResultsAndRefusal) {
  ClusterController c(&client);
  c.runLinkTest();
  EXPECT_TRUE(c.isLinkTestRunning());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !c.isLinkTestRunning(); }, 3000));
  const LinkTestReport& r = c.linkTest();
  EXPECT_EQ(r.ranks, 2);
  ASSERT_EQ(r.rows.size(), 2);
  EXPECT_EQ(r.rows[1].bytes, 64ll << 20);
  EXPECT_DOUBLE_EQ(r.rows[1].busbwGBs, 13.4217728);
  EXPECT_TRUE(r.rows[1].correct);
  ASSERT_FALSE(engine.requests.isEmpty());
  EXPECT_EQ(engine.requests.last().path, QByteArray("/engine/link-test"));

  engine.setResponse("POST", "/engine/link-test", 409,
                     R"({"error":{"message":"the link test needs two or more ranks"}})");
  c.runLinkTest();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !c.isLinkTestRunning(); }, 3000));
  EXPECT_EQ(c.linkTestError(), QStringLiteral("the link test needs two or more ranks"));
  EXPECT_TRUE(c.linkTest().rows.isEmpty());
}

TEST(ClusterModels, BoxesShowBarsAndPortsTheirHealth) {
  const ClusterSnapshot s = ClusterSnapshot::fromJson(QJsonDocument::fromJson(kCluster).object());
  ClusterBoxModel boxes;
  QAbstractItemModelTester t1(&boxes, QAbstractItemModelTester::FailureReportingMode::Fatal);
  boxes.setSnapshot(s);
  ASSERT_EQ(boxes.rowCount(), 2);
  // 128 GiB total, 96 available: a quarter used.
  EXPECT_DOUBLE_EQ(
      boxes.index(0, ClusterBoxModel::MemoryColumn).data(ClusterBoxModel::FractionRole).toDouble(),
      0.25);
  EXPECT_EQ(boxes.index(0, ClusterBoxModel::MemoryColumn).data().toString(),
            QStringLiteral("32.0 GiB used of 128.0 GiB"));
  EXPECT_DOUBLE_EQ(
      boxes.index(0, ClusterBoxModel::SwapColumn).data(ClusterBoxModel::FractionRole).toDouble(),
      0.25);
  EXPECT_DOUBLE_EQ(boxes.index(0, ClusterBoxModel::PageCacheColumn)
                       .data(ClusterBoxModel::FractionRole)
                       .toDouble(),
                   0.25);
  EXPECT_EQ(boxes.index(0, ClusterBoxModel::GpuColumn).data().toString(),
            QStringLiteral("NVIDIA GB10, 100.0 GiB free of 120.0 GiB"));
  EXPECT_FALSE(
      boxes.index(1, ClusterBoxModel::MemoryColumn).data(ClusterBoxModel::FractionRole).isValid());
  EXPECT_EQ(boxes.index(1, ClusterBoxModel::MemoryColumn).data().toString(),
            QStringLiteral("unknown"));
  EXPECT_EQ(boxes.index(1, ClusterBoxModel::SwapColumn).data().toString(), QStringLiteral("off"));
  EXPECT_EQ(boxes.index(1, ClusterBoxModel::GpuColumn).data().toString(),
            QStringLiteral("none (built without CUDA)"));

  ClusterPortModel ports;
  QAbstractItemModelTester t2(&ports, QAbstractItemModelTester::FailureReportingMode::Fatal);
  ports.setSnapshot(s);
  ASSERT_EQ(ports.rowCount(), 4);
  auto health = [&](int row) {
    return ClusterPortModel::Health(ports.index(row, 0).data(ClusterPortModel::HealthRole).toInt());
  };
  auto hint = [&](int row) {
    return ports.index(row, ClusterPortModel::HintColumn).data().toString();
  };
  EXPECT_EQ(health(0), ClusterPortModel::Health::Warning);  // MTU 1500
  EXPECT_TRUE(hint(0).contains(QStringLiteral("MTU 1500"))) << hint(0).toStdString();
  EXPECT_EQ(health(1), ClusterPortModel::Health::Down);
  EXPECT_TRUE(hint(1).startsWith(QStringLiteral("No link")));
  EXPECT_EQ(health(2), ClusterPortModel::Health::Good);
  EXPECT_TRUE(hint(2).isEmpty());
  EXPECT_EQ(health(3), ClusterPortModel::Health::Warning);  // INIT
  EXPECT_EQ(ports.index(2, ClusterPortModel::DeviceColumn).data().toString(),
            QStringLiteral("rocep1s0f0 port 1"));
  EXPECT_EQ(ports.index(2, ClusterPortModel::StateColumn).data().toString(),
            QStringLiteral("ACTIVE (LinkUp)"));
  EXPECT_EQ(ports.index(2, ClusterPortModel::RateColumn).data().toString(),
            QStringLiteral("200 Gb/s"));
  // Colours differ between good, warning and down.
  const auto bg = [&](int row) {
    return ports.index(row, ClusterPortModel::StateColumn)
        .data(Qt::BackgroundRole)
        .value<QBrush>()
        .color();
  };
  EXPECT_NE(bg(0), bg(1));
  EXPECT_NE(bg(0), bg(2));
  EXPECT_NE(bg(1), bg(2));
}

TEST(Hostfile, ChecksEveryLine) {
  Hostfile ok = Hostfile::parse(
      QStringLiteral("# two Sparks\nspark-a slots=1\n\n  192.168.100.2   slots=2  # b\n"));
  EXPECT_TRUE(ok.isValid());
  ASSERT_EQ(ok.entries().size(), 2);
  EXPECT_EQ(ok.entries()[1].host, QStringLiteral("192.168.100.2"));
  EXPECT_EQ(ok.totalSlots(), 3);
  EXPECT_EQ(ok.toText(), QStringLiteral("spark-a slots=1\n192.168.100.2 slots=2\n"));
  EXPECT_EQ(Hostfile::parse(QStringLiteral("spark-a")).totalSlots(), 1);  // slots default 1

  Hostfile bad = Hostfile::parse(QStringLiteral(
      "spark-a slots=1\nspark-a slots=1\n-rf slots=1\nspark-c slots=0\nspark-d cpus=4\n"
      "spark-e slots=x\n"));
  EXPECT_FALSE(bad.isValid());
  ASSERT_EQ(bad.errors().size(), 5);
  EXPECT_EQ(bad.errors()[0].line, 2);
  EXPECT_TRUE(bad.errors()[0].message.contains(QStringLiteral("twice")));
  EXPECT_EQ(bad.errors()[1].line, 3);
  EXPECT_EQ(bad.errors()[2].line, 4);
  EXPECT_EQ(bad.errors()[3].line, 5);
  EXPECT_TRUE(bad.errors()[3].message.contains(QStringLiteral("cpus=4")));
  EXPECT_EQ(bad.errors()[4].line, 6);
  EXPECT_FALSE(Hostfile::parse(QStringLiteral("  \n# nothing\n")).isValid());

  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("sub/hostfile"));
  QString error;
  EXPECT_FALSE(Hostfile::save(path, QStringLiteral("bad host!"), &error));
  EXPECT_TRUE(error.startsWith(QStringLiteral("line 1:"))) << error.toStdString();
  EXPECT_FALSE(QFile::exists(path));
  ASSERT_TRUE(Hostfile::save(path, QStringLiteral("spark-a slots=1\nspark-b slots=1"), &error));
  QFile f(path);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  EXPECT_EQ(f.readAll(), QByteArray("spark-a slots=1\nspark-b slots=1\n"));

  AppSettings settings(dir.filePath(QStringLiteral("s.ini")));
  settings.setLocalPort(8099);
  const QString cmd = Hostfile::mpirunCommand(settings, path, 2);
  EXPECT_TRUE(cmd.startsWith(QStringLiteral("mpirun -np 2 --hostfile ") + path))
      << cmd.toStdString();
  EXPECT_TRUE(cmd.contains(QStringLiteral(" serve --host 127.0.0.1 --port 8099")))
      << cmd.toStdString();
  EXPECT_TRUE(cmd.endsWith(QStringLiteral("--tp 2"))) << cmd.toStdString();
  settings.setApiKey(QStringLiteral("very secret"));
  EXPECT_FALSE(Hostfile::mpirunCommand(settings, path, 2).contains(QStringLiteral("secret")));
  EXPECT_EQ(Hostfile::pathFor(settings),
            QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                QStringLiteral("/hostfile"));
  settings.setHostfile(path);
  EXPECT_EQ(Hostfile::pathFor(settings), path);
}

TEST_F(ClusterTest, PageShowsBoxesRunsTheLinkTestAndEditsTheHostfile) {
  AppSettings real;  // the page reads and writes the app's settings: restore them afterwards
  const QString oldHostfile = real.hostfile();
  const int oldRanks = real.ranks();
  EngineSession session;
  session.client()->setBaseUrl(client.baseUrl());
  ClusterPage page(&session);
  page.resize(1200, 900);
  page.show();
  ASSERT_TRUE(QTest::qWaitFor([&] { return page.boxModel()->rowCount() == 2; }, 3000));
  EXPECT_EQ(page.portModel()->rowCount(), 4);

  page.controller()->runLinkTest();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !page.controller()->isLinkTestRunning(); }, 3000));
  const QString lt = page.linkTestText();
  EXPECT_TRUE(lt.contains(QStringLiteral("64 MiB | 5.000 ms | 13.42 | sums correct")))
      << lt.toStdString();

  page.setHostfileText(QStringLiteral("spark-a slots=1\nspark-a slots=1\n"));
  EXPECT_TRUE(page.hostfileStatus().contains(QStringLiteral("line 2")));
  EXPECT_TRUE(page.commandText().isEmpty());
  EXPECT_FALSE(page.saveHostfile());
  page.setHostfileText(QStringLiteral("spark-a slots=1\nspark-b slots=1\n"));
  EXPECT_TRUE(page.commandText().contains(QStringLiteral("mpirun -np 2 --hostfile")))
      << page.commandText().toStdString();
  // Checked, but not saved: the note must not say "saved" yet.
  EXPECT_TRUE(page.hostfileStatus().contains(QStringLiteral("not saved yet")))
      << page.hostfileStatus().toStdString();

  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("hostfile"));
  real.setHostfile(path);
  real.sync();
  EXPECT_TRUE(page.saveHostfile());
  QFile f(path);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  EXPECT_EQ(f.readAll(), QByteArray("spark-a slots=1\nspark-b slots=1\n"));
  AppSettings after;
  EXPECT_EQ(after.ranks(), 2);
  EXPECT_EQ(after.hostfile(), path);
  EXPECT_TRUE(page.hostfileStatus().startsWith(QStringLiteral("Saved as ")));
  // Edited after saving: not saved again until Save.
  page.setHostfileText(QStringLiteral("spark-a slots=1\nspark-c slots=1\n"));
  EXPECT_TRUE(page.hostfileStatus().contains(QStringLiteral("not saved yet")));
  page.setHostfileText(QStringLiteral("spark-a slots=1\nspark-b slots=1\n"));
  EXPECT_TRUE(page.hostfileStatus().contains(QStringLiteral("; saved as ")))
      << page.hostfileStatus().toStdString();

  if (qEnvironmentVariableIsSet("ARC_APP_SCREENSHOT_DIR")) {
    QDir().mkpath(qEnvironmentVariable("ARC_APP_SCREENSHOT_DIR"));
    page.grab().save(qEnvironmentVariable("ARC_APP_SCREENSHOT_DIR") +
                     QStringLiteral("/cluster_page.png"));
  }
  real.setHostfile(oldHostfile);
  real.setRanks(oldRanks);
  real.sync();
}
