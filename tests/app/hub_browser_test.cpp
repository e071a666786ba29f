// The Models page's Hugging Face browser against the local test hub (tests/fit/test_hub.h):
// search and listing, the fit verdict from the remote header against the one from the same file
// read locally (the oracle: FitController::attachFitModel over the local reader), and downloads:
// resume after a cut connection, SHA-256 mismatch refused, cancel, pause/resume, free-space check,
// split models. Offscreen.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <fmt/format.h>

#include "AppSettings.h"
#include "FitController.h"
#include "HubBrowser.h"
#include "HubClient.h"
#include "HubTokenStore.h"
#include "ModelDownload.h"
#include "arc/gguf.h"
#include "model/test_model.h"
#include "test_hub.h"

namespace arc::app {
namespace {

using arc::testing::HubFile;
using arc::testing::HubRepo;
using arc::testing::TestHub;

std::string writeModel(const QString& dir, const QString& name, int64_t nEmbd, const char* type) {
  TestModelOptions o;
  o.family = Family::kQwen3Moe;
  o.n_embd = nEmbd;
  o.n_layer = 3;
  o.type = type;
  const std::string path = QDir(dir).filePath(name).toStdString();
  EXPECT_TRUE(write_test_model(o, path).ok());
  return path;
}

// Two parts as gguf-split writes them (metadata in the first).
std::vector<std::string> splitModel(const std::string& src, const QString& dir) {
  auto f = gguf::File::open(src);
  EXPECT_TRUE(f.ok());
  std::vector<std::string> out;
  const auto& ts = f->tensors();
  const size_t half = ts.size() / 2;
  for (int part = 0; part < 2; ++part) {
    gguf::Writer w;
    w.set_alignment(f->alignment());
    if (part == 0)
      for (const auto& [k, v] : f->metadata())
        if (k != "general.alignment") w.set(k, v);
    w.set("split.no", gguf::Value::u16(uint16_t(part)));
    w.set("split.count", gguf::Value::u16(2));
    w.set("split.tensors.count", gguf::Value::i32(int32_t(ts.size())));
    for (size_t i = part == 0 ? 0 : half; i < (part == 0 ? half : ts.size()); ++i)
      EXPECT_TRUE(w.add_tensor(ts[i].name, ts[i].type, ts[i].shape, f->tensor_data(ts[i])).ok());
    out.push_back(QDir(dir)
                      .filePath(QStringLiteral("split-Q8_0-%1-of-00002.gguf")
                                    .arg(part + 1, 5, 10, QLatin1Char('0')))
                      .toStdString());
    EXPECT_TRUE(w.write(out.back()).ok());
  }
  return out;
}

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

class HubBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(m_src.isValid());
    ASSERT_TRUE(m_dest.isValid());
    m_small = writeModel(m_src.path(), QStringLiteral("tiny-moe-Q8_0.gguf"), 64, "Q8_0");
    m_big = writeModel(m_src.path(), QStringLiteral("tiny-moe-F32.gguf"), 256, "F32");
    m_split = splitModel(m_small, m_src.path());
    HubRepo repo{"test/Tiny-MoE-GGUF",
                 {HubFile{"tiny-moe-Q8_0.gguf", m_small}, HubFile{"tiny-moe-F32.gguf", m_big},
                  HubFile{"Q8_0/split-Q8_0-00001-of-00002.gguf", m_split[0]},
                  HubFile{"Q8_0/split-Q8_0-00002-of-00002.gguf", m_split[1]},
                  HubFile{"mmproj-tiny-moe-F16.gguf", m_small},
                  HubFile{"bad-Q8_0.gguf", m_small, std::string(64, 'a')}}};
    HubRepo other{"other/Unrelated-GGUF", {HubFile{"x-Q4_K_M.gguf", m_small}}};
    m_hub = std::make_unique<TestHub>(std::vector<HubRepo>{repo, other});
    ASSERT_TRUE(m_hub->running());
  }

  // A browser listing the test repository, its remote headers read.
  std::unique_ptr<HubBrowser> openBrowser() {
    auto b = std::make_unique<HubBrowser>();
    b->setBaseUrl(QUrl(QString::fromStdString(m_hub->base_url())));
    b->setDownloadDir(m_dest.path());
    QSignalSpy done(b.get(), &HubBrowser::remoteFitsDone);
    b->openRepo(QStringLiteral("test/Tiny-MoE-GGUF"));
    EXPECT_TRUE(done.wait(20000));
    return b;
  }

  int rowOf(HubBrowser& b, const QString& file) {
    for (int r = 0; r < b.fileTable()->rowCount(); ++r)
      if (b.fileTable()->item(r, HubBrowser::ColFile)->toolTip() == file) return r;
    return -1;
  }

  QTemporaryDir m_src, m_dest;
  std::string m_small, m_big;
  std::vector<std::string> m_split;
  std::unique_ptr<TestHub> m_hub;
};

TEST_F(HubBrowserTest, SearchesAndListsModelsWithQuantizations) {
  HubBrowser b;
  b.setBaseUrl(QUrl(QString::fromStdString(m_hub->base_url())));
  QSignalSpy found(b.client(), &HubClient::searchFinished);
  b.search(QStringLiteral("tiny-moe"));
  ASSERT_TRUE(found.wait(5000));
  ASSERT_EQ(b.repoTable()->rowCount(), 1);
  EXPECT_EQ(b.repoTable()->item(0, 0)->text(), QStringLiteral("test/Tiny-MoE-GGUF"));

  QSignalSpy listed(b.client(), &HubClient::filesListed);
  b.openRepo(QStringLiteral("test/Tiny-MoE-GGUF"));
  ASSERT_TRUE(listed.wait(5000));
  // Four models: the projector is not one, the split file is one row.
  ASSERT_EQ(b.fileTable()->rowCount(), 4) << b.message().toStdString();
  const int split = rowOf(b, QStringLiteral("Q8_0/split-Q8_0-00001-of-00002.gguf"));
  ASSERT_GE(split, 0);
  EXPECT_TRUE(
      b.fileTable()->item(split, HubBrowser::ColFile)->text().contains(QStringLiteral("2 parts")));
  EXPECT_EQ(b.fileTable()
                ->item(rowOf(b, QStringLiteral("tiny-moe-F32.gguf")), HubBrowser::ColQuant)
                ->text(),
            QStringLiteral("F32"));
  EXPECT_EQ(HubClient::quantOf(QStringLiteral("Qwen3-30B-A3B-UD-Q2_K_XL-00001-of-00002.gguf")),
            QStringLiteral("UD-Q2_K_XL"));
  EXPECT_EQ(HubClient::quantOf(QStringLiteral("gpt-oss-120b-MXFP4.gguf")), QStringLiteral("MXFP4"));
}

TEST_F(HubBrowserTest, RemoteHeaderVerdictEqualsTheLocalFile) {
  auto b = openBrowser();
  for (const auto& [file, local] :
       {std::pair{QStringLiteral("tiny-moe-F32.gguf"), m_big},
        std::pair{QStringLiteral("Q8_0/split-Q8_0-00001-of-00002.gguf"), m_split[0]}}) {
    const int row = rowOf(*b, file);
    ASSERT_GE(row, 0);
    CatalogEntry localEntry;
    localEntry.id = localEntry.path = QString::fromStdString(local);
    ASSERT_EQ(FitController::attachFitModel(localEntry), QString());
    for (int boxes : {1, 2}) {
      for (qint64 ctx : {4096, 40960}) {
        FitInputs in;
        in.boxes = boxes;
        in.contextTokens = ctx;
        // The default box, and one just over the 2 GiB runtime where the files' bytes decide.
        in.usableGiB = boxes == 1 ? 121.6 : 2.003;
        in.reserveGiB = 0;
        b->setFitInputs(in);
        const FitSummary remote = b->fitOf(row);
        const FitSummary here = FitController::compute(localEntry, in);
        ASSERT_TRUE(remote.valid) << remote.error.toStdString();
        ASSERT_TRUE(here.valid);
        EXPECT_EQ(remote.verdict, here.verdict);
        EXPECT_EQ(remote.maxContext, here.maxContext);
        EXPECT_EQ(remote.perBox.first().weightsBytes, here.perBox.first().weightsBytes);
        EXPECT_EQ(remote.perBox.first().kvBytes, here.perBox.first().kvBytes);
      }
    }
    EXPECT_FALSE(
        b->fileTable()->item(row, HubBrowser::ColFit)->text().contains(QStringLiteral("reading")));
  }
  // The listing read headers only: every file request asked for a range.
  for (const auto& r : m_hub->file_requests()) EXPECT_FALSE(r.range.empty()) << r.path;
}

TEST_F(HubBrowserTest, DownloadResumesAfterACutConnection) {
  auto b = openBrowser();
  const int row = rowOf(*b, QStringLiteral("tiny-moe-F32.gguf"));
  const auto before = m_hub->file_requests().size();
  m_hub->cut_next_download_after(300000);
  QSignalSpy finished(b.get(), &HubBrowser::downloadFinished);
  b->downloadRow(row);
  ASSERT_TRUE(finished.wait(20000));
  ASSERT_TRUE(finished.first().at(0).toBool()) << finished.first().at(1).toString().toStdString();
  const QString dest = QDir(m_dest.path()).filePath(QStringLiteral("tiny-moe-F32.gguf"));
  EXPECT_EQ(readAll(dest), readAll(QString::fromStdString(m_big)));
  EXPECT_FALSE(QFileInfo::exists(dest + ModelDownload::partialSuffix()));
  const auto reqs = m_hub->file_requests();
  // The whole file asked first, then the rest from where the cut left it. (Qt's HTTP layer may
  // send the first request a second time on its own when the connection drops; both are whole.)
  ASSERT_GE(reqs.size(), before + 2);
  EXPECT_EQ(reqs[before].range, "");
  EXPECT_EQ(reqs.back().range, "bytes=300000-");
  for (size_t i = before; i + 1 < reqs.size(); ++i) EXPECT_EQ(reqs[i].range, "") << i;
}

TEST_F(HubBrowserTest, ShaMismatchIsRefusedAndThePartialRemoved) {
  auto b = openBrowser();
  QSignalSpy finished(b.get(), &HubBrowser::downloadFinished);
  b->downloadRow(rowOf(*b, QStringLiteral("bad-Q8_0.gguf")));
  ASSERT_TRUE(finished.wait(20000));
  EXPECT_FALSE(finished.first().at(0).toBool());
  EXPECT_TRUE(finished.first().at(1).toString().contains(QStringLiteral("SHA-256")));
  const QString dest = QDir(m_dest.path()).filePath(QStringLiteral("bad-Q8_0.gguf"));
  EXPECT_FALSE(QFileInfo::exists(dest));
  EXPECT_FALSE(QFileInfo::exists(dest + ModelDownload::partialSuffix()));
}

TEST_F(HubBrowserTest, CancelStopsAndRemovesThePartial) {
  auto b = openBrowser();
  m_hub->set_chunk_delay_ms(30);
  b->downloadRow(rowOf(*b, QStringLiteral("tiny-moe-F32.gguf")));
  ModelDownload* d = b->download();
  ASSERT_TRUE(d);
  ASSERT_TRUE(QTest::qWaitFor([&] { return d->doneBytes() > 0; }, 10000));
  d->cancel();
  EXPECT_EQ(d->state(), ModelDownload::State::Cancelled);
  const QString dest = QDir(m_dest.path()).filePath(QStringLiteral("tiny-moe-F32.gguf"));
  EXPECT_FALSE(QFileInfo::exists(dest + ModelDownload::partialSuffix()));
  EXPECT_FALSE(QFileInfo::exists(dest));
}

TEST_F(HubBrowserTest, PauseKeepsThePartialAndResumeContinuesFromIt) {
  auto b = openBrowser();
  m_hub->set_chunk_delay_ms(30);
  b->downloadRow(rowOf(*b, QStringLiteral("tiny-moe-F32.gguf")));
  ModelDownload* d = b->download();
  ASSERT_TRUE(QTest::qWaitFor([&] { return d->doneBytes() > 0; }, 10000));
  d->pause();
  EXPECT_EQ(d->state(), ModelDownload::State::Paused);
  const QString dest = QDir(m_dest.path()).filePath(QStringLiteral("tiny-moe-F32.gguf"));
  const qint64 kept = QFileInfo(dest + ModelDownload::partialSuffix()).size();
  ASSERT_GT(kept, 0);
  QTest::qWait(200);
  EXPECT_EQ(QFileInfo(dest + ModelDownload::partialSuffix()).size(), kept);
  m_hub->set_chunk_delay_ms(0);
  QSignalSpy finished(d, &ModelDownload::finished);
  d->start();
  ASSERT_TRUE(finished.wait(20000));
  ASSERT_TRUE(finished.first().at(0).toBool()) << finished.first().at(1).toString().toStdString();
  EXPECT_EQ(readAll(dest), readAll(QString::fromStdString(m_big)));
  EXPECT_EQ(m_hub->file_requests().back().range, fmt::format("bytes={}-", kept));
}

TEST_F(HubBrowserTest, SplitModelDownloadsEveryPartAndFreeSpaceIsCheckedFirst) {
  auto b = openBrowser();
  const int row = rowOf(*b, QStringLiteral("Q8_0/split-Q8_0-00001-of-00002.gguf"));
  const HubModelFile file = [&] {
    HubModelFile f;
    f.parts << HubFileInfo{QStringLiteral("Q8_0/split-Q8_0-00001-of-00002.gguf"),
                           qint64(std::filesystem::file_size(m_split[0])), QString()}
            << HubFileInfo{QStringLiteral("Q8_0/split-Q8_0-00002-of-00002.gguf"),
                           qint64(std::filesystem::file_size(m_split[1])), QString()};
    return f;
  }();
  // Too little space: refused before a request.
  QList<DownloadPart> parts;
  for (const HubFileInfo& p : file.parts)
    parts << DownloadPart{b->client()->resolveUrl(QStringLiteral("test/Tiny-MoE-GGUF"), p.path),
                          p.path.section(QLatin1Char('/'), -1), p.size, QString()};
  const auto before = m_hub->file_requests().size();
  ModelDownload tooBig(parts, m_dest.path());
  tooBig.setFreeBytesOverride(1000);
  QSignalSpy refused(&tooBig, &ModelDownload::finished);
  tooBig.start();
  ASSERT_EQ(refused.size(), 1);
  EXPECT_TRUE(refused.first().at(1).toString().contains(QStringLiteral("free disk space")));
  EXPECT_EQ(m_hub->file_requests().size(), before);

  QSignalSpy finished(b.get(), &HubBrowser::downloadFinished);
  b->downloadRow(row);
  ASSERT_TRUE(finished.wait(20000));
  ASSERT_TRUE(finished.first().at(0).toBool()) << finished.first().at(1).toString().toStdString();
  for (int i = 0; i < 2; ++i) {
    const QString name = QFileInfo(QString::fromStdString(m_split[i])).fileName();
    EXPECT_EQ(readAll(QDir(m_dest.path()).filePath(name)),
              readAll(QString::fromStdString(m_split[i])));
  }
}

TEST_F(HubBrowserTest, CatalogFiguresStandNextToTheRemoteVerdict) {
  QFile f(QStringLiteral(ARC_TEST_DATA_DIR "/../../resources/catalog/models.json"));
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  const QByteArray json = f.readAll();
  QList<CatalogEntry> entries = parseCatalog(json);
  ASSERT_EQ(FitController::attachFitModels(entries, json), QString());
  const CatalogEntry* qwen = nullptr;
  for (const CatalogEntry& e : entries)
    if (e.id == QStringLiteral("qwen3-30b-a3b")) qwen = &e;
  ASSERT_TRUE(qwen);
  int q4k = -1;
  for (int i = 0; i < qwen->builds.size(); ++i)
    if (qwen->builds[i].name == QStringLiteral("q4_k")) q4k = i;
  ASSERT_GE(q4k, 0);

  HubRepo repo{"unsloth/Qwen3-30B-A3B-GGUF", {HubFile{"Qwen3-30B-A3B-Q4_K_M.gguf", m_small}}};
  TestHub hub({repo});
  HubBrowser b;
  b.setBaseUrl(QUrl(QString::fromStdString(hub.base_url())));
  b.setCatalog(entries);
  FitInputs in;
  in.boxes = 1;
  b.setFitInputs(in);
  QSignalSpy done(&b, &HubBrowser::remoteFitsDone);
  b.openRepo(QStringLiteral("unsloth/Qwen3-30B-A3B-GGUF"));
  ASSERT_TRUE(done.wait(10000));
  in.buildIndex = q4k;
  const FitSummary catalog = FitController::compute(*qwen, in);
  ASSERT_TRUE(catalog.valid);
  const QString cell = b.fileTable()->item(0, HubBrowser::ColCatalog)->text();
  if (qEnvironmentVariableIsSet("ARC_APP_SCREENSHOT_DIR")) {  // for looking at the tab
    QDir().mkpath(qEnvironmentVariable("ARC_APP_SCREENSHOT_DIR"));
    b.resize(900, 500);
    b.grab().save(qEnvironmentVariable("ARC_APP_SCREENSHOT_DIR") +
                  QStringLiteral("/hub_browser.png"));
  }
  EXPECT_TRUE(cell.contains(qwen->name)) << cell.toStdString();
  EXPECT_TRUE(cell.contains(QStringLiteral("q4_k"))) << cell.toStdString();
  EXPECT_TRUE(cell.contains(catalog.verdict)) << cell.toStdString();
}

TEST_F(HubBrowserTest, GatedRepositoryNeedsTheToken) {
  HubRepo gated{"test/Gated-GGUF", {HubFile{"tiny-moe-Q8_0.gguf", m_small}}, /*gated=*/true};
  TestHub hub({gated}, "hf_secret");
  for (const QString& token : {QString(), QStringLiteral("hf_secret")}) {
    HubBrowser b;
    b.setBaseUrl(QUrl(QString::fromStdString(hub.base_url())));
    b.client()->setToken(token);
    QSignalSpy done(&b, &HubBrowser::remoteFitsDone);
    b.openRepo(QStringLiteral("test/Gated-GGUF"));
    ASSERT_TRUE(done.wait(10000));
    const FitSummary s = b.fitOf(0);
    if (token.isEmpty()) {
      EXPECT_FALSE(s.valid);
      EXPECT_TRUE(s.error.contains(QStringLiteral("token"))) << s.error.toStdString();
    } else {
      EXPECT_TRUE(s.valid) << s.error.toStdString();
    }
  }
}

TEST_F(HubBrowserTest, GatedDownloadSendsTheTokenToTheHubOnly) {
  HubRepo gated{"test/Gated-GGUF", {HubFile{"tiny-moe-Q8_0.gguf", m_small}}, /*gated=*/true};
  TestHub storage({gated}, "hf_secret");
  TestHub hub({gated}, "hf_secret");
  hub.set_storage_origin(storage.base_url());
  DownloadPart part{QUrl(QString::fromStdString(hub.resolve_url(gated.id, "tiny-moe-Q8_0.gguf"))),
                    QStringLiteral("tiny-moe-Q8_0.gguf"),
                    qint64(std::filesystem::file_size(m_small)), QString()};
  ModelDownload d({part}, m_dest.path());
  d.setToken(QStringLiteral("hf_secret"));
  QSignalSpy finished(&d, &ModelDownload::finished);
  d.start();
  ASSERT_TRUE(finished.wait(10000));
  ASSERT_TRUE(finished.first().at(0).toBool()) << finished.first().at(1).toString().toStdString();
  ASSERT_EQ(storage.file_requests().size(), 1u);
  EXPECT_FALSE(storage.file_requests().front().authorized);
  EXPECT_EQ(readAll(QDir(m_dest.path()).filePath(QStringLiteral("tiny-moe-Q8_0.gguf"))),
            readAll(QString::fromStdString(m_small)));
}

TEST(HubTokenStore, KeepsTheTokenForTheSessionWithoutAKeyring) {
  HubTokenStore store(nullptr,
                      QStringLiteral("Arclight test %1").arg(QCoreApplication::applicationPid()));
  QSignalSpy changed(&store, &HubTokenStore::changed);
  store.store(QStringLiteral("hf_test_token"));
  EXPECT_EQ(store.token(), QStringLiteral("hf_test_token"));  // usable at once
  ASSERT_TRUE(changed.wait(10000));
  EXPECT_EQ(store.token(), QStringLiteral("hf_test_token"));
  if (!store.persistent()) {
    EXPECT_TRUE(store.note().contains(QStringLiteral("session only")))
        << store.note().toStdString();
  }
  store.store(QString());  // removes it again where a keyring exists
  changed.wait(10000);
}

TEST(HubSettings, HubUrlDefaultsToHuggingFaceAndDownloadsGoToTheFirstModelFolder) {
  QTemporaryDir d;
  const QString file = QDir(d.path()).filePath(QStringLiteral("arclight.conf"));
  {
    AppSettings s(file);
    EXPECT_EQ(s.hubUrl(), QUrl(QStringLiteral("https://huggingface.co")));
    EXPECT_TRUE(s.engineModelDirs().contains(s.downloadDir()));  // a local engine serves them
    s.setHubUrl(QUrl(QStringLiteral("http://127.0.0.1:9")));
    s.setModelDirs({QStringLiteral("/models/a"), QStringLiteral("/models/b")});
    s.sync();
  }
  AppSettings again(file);
  EXPECT_EQ(again.hubUrl(), QUrl(QStringLiteral("http://127.0.0.1:9")));
  EXPECT_EQ(again.downloadDir(), QStringLiteral("/models/a"));
}

}  // namespace
}  // namespace arc::app
