// The Chat page offscreen: Enter sends, the "reading prompt" state shows before the first token,
// Esc stops, a refused send puts the draft back, the attach controls follow the model's vision,
// a corrupt conversation file is reported on the page, and a screenshot is saved.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include "ChatComposer.h"
#include "ChatController.h"
#include "ChatPage.h"
#include "ConversationListModel.h"
#include "EngineSession.h"
#include "MessageWidget.h"
#include "fake_chat_server.h"

using namespace arc::app;

namespace {

struct PageFixture {
  PageFixture() {
    page = std::make_unique<ChatPage>(nullptr, nullptr, dir.path());
    page->controller()->setEndpoint(server.url(), {});
    page->resize(1100, 750);
    page->show();
  }
  void type(const QString& text) {
    page->composer()->setFocus();
    QTest::keyClicks(page->composer(), text);
  }
  QTemporaryDir dir;
  FakeChatServer server;
  std::unique_ptr<ChatPage> page;
};

}  // namespace

TEST(ChatPage, EnterSendsShowsReadingPromptAndEscStops) {
  PageFixture f;
  ASSERT_TRUE(QTest::qWaitForWindowExposed(f.page.get()));
  f.type(QStringLiteral("line one"));
  QTest::keyClick(f.page->composer(), Qt::Key_Return, Qt::ShiftModifier);  // a new line only
  f.type(QStringLiteral("line two"));
  EXPECT_EQ(f.page->composer()->toPlainText(), QStringLiteral("line one\nline two"));
  EXPECT_FALSE(f.page->controller()->isBusy());
  QTest::keyClick(f.page->composer(), Qt::Key_Return);
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 1; }, 5000));
  EXPECT_TRUE(f.page->composer()->toPlainText().isEmpty());
  QTest::qWait(250);
  EXPECT_TRUE(f.page->statusText().startsWith(QStringLiteral("Reading prompt…")))
      << f.page->statusText().toStdString();
  f.server.write(chunk(QStringLiteral("Here is **bold** and `code`.")));
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return f.page->controller()->state() == ChatController::State::Streaming; }, 5000));
  QTest::qWait(120);  // one render tick
  ASSERT_EQ(f.page->messageWidgets().size(), 2);
  EXPECT_EQ(f.page->messageWidgets().at(1)->renderedText(),
            QStringLiteral("Here is bold and code."));
  QTest::keyClick(f.page->composer(), Qt::Key_Escape);
  ASSERT_TRUE(QTest::qWaitFor([&] { return !f.page->controller()->isBusy(); }, 5000));
  EXPECT_TRUE(QTest::qWaitFor([&] { return f.server.closed >= 1; }, 5000));
  EXPECT_EQ(f.page->controller()->conversation()->messages.last().status,
            ChatMessage::Status::Stopped);
  EXPECT_TRUE(f.page->statusText().isEmpty());
}

TEST(ChatPage, RefusedSendKeepsTheDraftAndShowsRetry) {
  PageFixture f;
  f.server.failStatus = 503;
  f.server.failBody = R"({"error":{"message":"no model is loaded"}})";
  f.page->setVisionAvailable(true);
  QImage img(8, 8, QImage::Format_RGB32);
  img.fill(Qt::red);
  f.page->addAttachmentImage(img);
  ASSERT_EQ(f.page->attachments().size(), 1);
  f.type(QStringLiteral("keep me"));
  QTest::keyClick(f.page->composer(), Qt::Key_Return);
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 1; }, 5000));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !f.page->controller()->isBusy(); }, 5000));
  QTest::qWait(100);
  EXPECT_EQ(f.page->composer()->toPlainText(), QStringLiteral("keep me"));
  EXPECT_EQ(f.page->attachments().size(), 1);
  const auto labels = f.page->messageWidgets().last()->findChildren<QLabel*>();
  bool shown = false;
  for (QLabel* l : labels)
    // Worded for a user: what to do, not the engine's route.
    if (l->isVisible() && l->text().startsWith(QStringLiteral("No model is loaded. Pick one")) &&
        !l->text().contains(QStringLiteral("/engine")))
      shown = true;
  EXPECT_TRUE(shown);
  bool retry = false;
  for (QToolButton* b : f.page->messageWidgets().last()->findChildren<QToolButton*>())
    if (b->isVisible() && b->text() == QStringLiteral("Retry")) retry = true;
  EXPECT_TRUE(retry);
}

TEST(ChatPage, AttachFollowsVisionAndCorruptFilesAreReported) {
  QTemporaryDir dir;
  QFile bad(QDir(dir.path()).filePath(QStringLiteral("zzz.json")));
  ASSERT_TRUE(bad.open(QIODevice::WriteOnly));
  bad.write("not json");
  bad.close();
  ChatPage page(nullptr, nullptr, dir.path());
  page.show();
  EXPECT_FALSE(page.attachEnabled());
  EXPECT_TRUE(page.noticeText().contains(QStringLiteral("zzz.json")))
      << page.noticeText().toStdString();
  page.setVisionAvailable(false, QStringLiteral("The loaded model cannot read images."));
  EXPECT_FALSE(page.attachEnabled());
  page.setVisionAvailable(true);
  EXPECT_TRUE(page.attachEnabled());
  EXPECT_TRUE(bad.exists());
}

TEST(ChatPage, VisionCapabilityFromModelsEnablesAttach) {
  QTemporaryDir dir;
  EngineSession session;
  ChatPage page(&session, nullptr, dir.path());
  EXPECT_FALSE(page.attachEnabled());
  auto model = [](bool vision) {
    return QJsonArray{QJsonObject{
        {QStringLiteral("id"), QStringLiteral("m")},
        {QStringLiteral("meta"), QJsonObject{{QStringLiteral("capabilities"),
                                              QJsonObject{{QStringLiteral("vision"), vision}}}}}}};
  };
  emit session.client()->modelsReceived(model(true));
  EXPECT_TRUE(page.attachEnabled());
  emit session.client()->modelsReceived(model(false));
  EXPECT_FALSE(page.attachEnabled());
}

TEST(ChatPage, ScreenshotWithAnAnswer) {
  PageFixture f;
  ASSERT_TRUE(QTest::qWaitForWindowExposed(f.page.get()));
  f.type(QStringLiteral("Show me a table and some code"));
  QTest::keyClick(f.page->composer(), Qt::Key_Return);
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 1; }, 5000));
  f.server.write(
      chunk({}, QStringLiteral("The user wants a table and code.")) +
      chunk(QStringLiteral(
          "## Result\n\n| box | tok/s |\n|---|---|\n| 1 | 41.5 |\n| 2 | 77.0 |\n\n"
          "- fast\n- steady\n\n```cpp\nint main() {\n  return 0;  // done\n}\n```\n")) +
      R"(data: {"choices":[],"timings":{"ttft_ms":310,"decode_tokens_per_s":41.5,"total_ms":900},"usage":{"prompt_tokens":25,"completion_tokens":40,"prompt_tokens_details":{"cached_tokens":16}}})"
      "\n\ndata: [DONE]\n\n");
  f.server.end();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !f.page->controller()->isBusy(); }, 5000));
  QTest::qWait(150);
  const QString dirPath = QStringLiteral(ARC_APP_SCREENSHOT_DIR);
  ASSERT_TRUE(QDir().mkpath(dirPath));
  EXPECT_TRUE(f.page->grab().save(QDir(dirPath).filePath(QStringLiteral("chat_page.png"))));
  EXPECT_EQ(MessageWidget::statsText(f.page->controller()->conversation()->messages.last().stats),
            QStringLiteral("first token 0.31 s · 41.5 tok/s · tokens in 25 / out 40 · 16 prefix "
                           "tokens reused"));
}
