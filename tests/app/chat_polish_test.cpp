// The Chat page's second round, offscreen: the view follows new content unless the user scrolled
// up, a Retry that works empties the composer, a new conversation starts empty, the header's
// model picker lists model files (not projectors) and asks for a load, export writes Markdown and
// JSON, the conversation list shows dates, and failures are worded without routes.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "ChatComposer.h"
#include "ChatController.h"
#include "ChatPage.h"
#include "ConversationExport.h"
#include "ConversationListModel.h"
#include "EngineClient.h"
#include "EngineSession.h"
#include "FitController.h"
#include "MainWindow.h"
#include "ModelsPage.h"
#include "fake_chat_server.h"

using namespace arc::app;

namespace {

struct Fixture {
  explicit Fixture(EngineSession* session = nullptr) {
    page = std::make_unique<ChatPage>(session, nullptr, dir.path());
    page->controller()->setEndpoint(server.url(), {});
    page->resize(900, 600);
    page->show();
  }
  void send(const QString& text) {
    page->composer()->setPlainText(text);
    QTest::keyClick(page->composer(), Qt::Key_Return);
  }
  QTemporaryDir dir;
  FakeChatServer server;
  std::unique_ptr<ChatPage> page;
};

QByteArray lines(int from, int to) {
  QString text;
  for (int i = from; i < to; ++i) text += QStringLiteral("line %1\n\n").arg(i);
  return chunk(text);
}

}  // namespace

TEST(ChatPolish, ViewFollowsNewContentUnlessScrolledUp) {
  Fixture f;
  ASSERT_TRUE(QTest::qWaitForWindowExposed(f.page.get()));
  QScrollBar* bar = f.page->scrollArea()->verticalScrollBar();
  f.send(QStringLiteral("count"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 1; }, 5000));
  f.server.write(lines(0, 60));
  ASSERT_TRUE(QTest::qWaitFor([&] { return bar->maximum() > 200; }, 5000));
  QTest::qWait(150);
  EXPECT_TRUE(f.page->followsNewContent());
  EXPECT_EQ(bar->value(), bar->maximum());
  // The user scrolls up to read: more text arrives, the view stays where they put it.
  bar->setValue(10);
  EXPECT_FALSE(f.page->followsNewContent());
  const int maxBefore = bar->maximum();
  f.server.write(lines(60, 120));
  ASSERT_TRUE(QTest::qWaitFor([&] { return bar->maximum() > maxBefore + 100; }, 5000));
  QTest::qWait(150);
  EXPECT_EQ(bar->value(), 10);
  // Back at the end: it follows again.
  bar->setValue(bar->maximum());
  EXPECT_TRUE(f.page->followsNewContent());
  const int max2 = bar->maximum();
  f.server.write(lines(120, 160) + "data: [DONE]\n\n");
  f.server.end();
  ASSERT_TRUE(QTest::qWaitFor([&] { return bar->maximum() > max2 + 100; }, 5000));
  QTest::qWait(150);
  EXPECT_EQ(bar->value(), bar->maximum());
}

TEST(ChatPolish, RetryThatWorksEmptiesTheComposerAndNewConversationStartsEmpty) {
  Fixture f;
  f.server.failStatus = 500;
  f.server.failBody = R"({"error":{"message":"out of memory"}})";
  f.send(QStringLiteral("my question"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 1; }, 5000));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !f.page->controller()->isBusy(); }, 5000));
  EXPECT_EQ(f.page->composer()->toPlainText(), QStringLiteral("my question"));
  const ChatMessage& failed = f.page->controller()->conversation()->messages.last();
  EXPECT_EQ(failed.status, ChatMessage::Status::Error);
  EXPECT_EQ(failed.error, QStringLiteral("The engine could not answer: out of memory (HTTP 500)"));

  f.server.failStatus = 0;
  ASSERT_TRUE(f.page->controller()->retry());
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 2; }, 5000));
  f.server.write(chunk(QStringLiteral("answer")) + "data: [DONE]\n\n");
  f.server.end();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !f.page->controller()->isBusy(); }, 5000));
  EXPECT_EQ(f.page->controller()->conversation()->messages.last().content,
            QStringLiteral("answer"));
  EXPECT_TRUE(f.page->composer()->toPlainText().isEmpty());

  // Text typed and left: New starts with an empty composer.
  f.page->composer()->setPlainText(QStringLiteral("half a thought"));
  QPushButton* newBtn = nullptr;
  for (QPushButton* b : f.page->findChildren<QPushButton*>())
    if (b->text() == QStringLiteral("New")) newBtn = b;
  ASSERT_NE(newBtn, nullptr);
  newBtn->click();
  EXPECT_TRUE(f.page->composer()->toPlainText().isEmpty());
  EXPECT_TRUE(f.page->controller()->conversation()->messages.isEmpty());
}

TEST(ChatPolish, RetryKeepsTextTheUserChangedSince) {
  Fixture f;
  f.server.failStatus = 500;
  f.server.failBody = R"({"error":{"message":"busy"}})";
  f.send(QStringLiteral("first"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 1; }, 5000));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !f.page->controller()->isBusy(); }, 5000));
  f.page->composer()->setPlainText(QStringLiteral("something else"));
  f.server.failStatus = 0;
  ASSERT_TRUE(f.page->controller()->retry());
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 2; }, 5000));
  f.server.write(chunk(QStringLiteral("ok")) + "data: [DONE]\n\n");
  f.server.end();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !f.page->controller()->isBusy(); }, 5000));
  EXPECT_EQ(f.page->composer()->toPlainText(), QStringLiteral("something else"));
}

TEST(ChatPolish, ModelPickerListsModelsNotProjectorsAndAsksForALoad) {
  EngineSession session;
  Fixture f(&session);
  const QJsonArray files = QJsonDocument::fromJson(R"([
    {"path":"/m/qwen3-8b-q4_k_m.gguf","name":"qwen3-8b-q4_k_m.gguf"},
    {"path":"/m/mmproj-qwen3-8b-f16.gguf","name":"mmproj-qwen3-8b-f16.gguf","mmproj":true},
    {"path":"/m/gemma-3-4b.gguf"}])")
                               .array();
  emit session.client()->localModelsReceived(files);
  QComboBox* picker = f.page->modelPicker();
  ASSERT_EQ(picker->count(), 2);
  EXPECT_EQ(picker->itemText(0), QStringLiteral("qwen3-8b-q4_k_m.gguf"));
  EXPECT_EQ(picker->itemText(1), QStringLiteral("gemma-3-4b.gguf"));
  EXPECT_EQ(picker->currentIndex(), -1);  // nothing loaded
  QSignalSpy load(f.page.get(), &ChatPage::loadModelRequested);
  picker->setCurrentIndex(1);
  emit picker->activated(1);
  ASSERT_EQ(load.size(), 1);
  EXPECT_EQ(load.at(0).at(0).toString(), QStringLiteral("/m/gemma-3-4b.gguf"));
  // A failed load shows on the Chat page, where the user picked it.
  emit session.loadFinished(false, QStringLiteral("loading failed: not enough memory"));
  EXPECT_TRUE(f.page->noticeText().contains(QStringLiteral("not enough memory")))
      << f.page->noticeText().toStdString();
}

TEST(ChatPolish, ExportWritesMarkdownAndJson) {
  Fixture f;
  Conversation* c = f.page->controller()->conversation();
  ASSERT_NE(c, nullptr);
  c->title = QStringLiteral("Tables");
  c->systemPrompt = QStringLiteral("Be brief.");
  ChatMessage u;
  u.content = QStringLiteral("Make a table");
  ChatMessage a;
  a.role = ChatMessage::Role::Assistant;
  a.content = QStringLiteral("| a | b |\n|---|---|\n| 1 | 2 |");
  a.reasoning = QStringLiteral("A small table.");
  ChatMessage e;
  e.role = ChatMessage::Role::Assistant;
  e.status = ChatMessage::Status::Error;
  e.error = QStringLiteral("The engine could not answer: busy (HTTP 503)");
  c->messages = {u, a, u, e};

  const QString md = f.dir.filePath(QStringLiteral("out.md"));
  const QString js = f.dir.filePath(QStringLiteral("out.json"));
  ASSERT_TRUE(f.page->exportConversation(md));
  ASSERT_TRUE(f.page->exportConversation(js));
  QFile mdFile(md);
  ASSERT_TRUE(mdFile.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(mdFile.readAll());
  EXPECT_TRUE(text.startsWith(QStringLiteral("# Tables\n\n"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("## System prompt\n\nBe brief.\n\n")));
  EXPECT_TRUE(text.contains(QStringLiteral("## You\n\nMake a table\n\n## Assistant\n\n")));
  EXPECT_TRUE(text.contains(QStringLiteral(
      "<details><summary>Thinking</summary>\n\nA small table.\n\n</details>\n\n| a | b |")));
  EXPECT_TRUE(text.contains(QStringLiteral("_Failed: The engine could not answer: busy")));

  QFile jsFile(js);
  ASSERT_TRUE(jsFile.open(QIODevice::ReadOnly));
  QJsonParseError err;
  const QJsonObject o = QJsonDocument::fromJson(jsFile.readAll(), &err).object();
  ASSERT_EQ(err.error, QJsonParseError::NoError);
  EXPECT_EQ(o.value(QStringLiteral("title")).toString(), QStringLiteral("Tables"));
  const QJsonArray msgs = o.value(QStringLiteral("messages")).toArray();
  ASSERT_EQ(msgs.size(), 5);  // the system prompt first, then the four turns
  EXPECT_EQ(msgs[0].toObject().value(QStringLiteral("role")).toString(), QStringLiteral("system"));
  EXPECT_EQ(msgs[2].toObject().value(QStringLiteral("content")).toString(), a.content);
  EXPECT_EQ(msgs[2].toObject().value(QStringLiteral("reasoning_content")).toString(), a.reasoning);
  EXPECT_EQ(msgs[4].toObject().value(QStringLiteral("status")).toString(), QStringLiteral("error"));
  EXPECT_DOUBLE_EQ(
      o.value(QStringLiteral("sampling")).toObject().value(QStringLiteral("top_p")).toDouble(),
      c->sampling.topP);
  // A folder that does not exist: refused with a notice, no crash.
  EXPECT_FALSE(f.page->exportConversation(QStringLiteral("/nonexistent-dir/x.md")));
  EXPECT_FALSE(f.page->noticeText().isEmpty());
}

TEST(ChatPolish, ConversationListShowsWhenEachChanged) {
  const QLocale en(QLocale::English, QLocale::UnitedStates);
  const QDateTime now(QDate(2026, 12, 7), QTime(18, 0));  // a Monday
  EXPECT_EQ(ConversationListModel::dateText(QDateTime(QDate(2026, 12, 7), QTime(9, 5)), now, en),
            en.toString(QTime(9, 5), QLocale::ShortFormat));
  EXPECT_EQ(ConversationListModel::dateText(QDateTime(QDate(2026, 12, 6), QTime(23, 0)), now, en),
            QStringLiteral("Yesterday"));
  EXPECT_EQ(ConversationListModel::dateText(QDateTime(QDate(2026, 12, 3), QTime(8, 0)), now, en),
            QStringLiteral("Thursday"));
  EXPECT_EQ(ConversationListModel::dateText(QDateTime(QDate(2026, 10, 1), QTime(8, 0)), now, en),
            en.toString(QDate(2026, 10, 1), QLocale::ShortFormat));
  const QLocale de(QLocale::German, QLocale::Germany);
  EXPECT_EQ(ConversationListModel::dateText(QDateTime(QDate(2026, 12, 3), QTime(8, 0)), now, de),
            QStringLiteral("Donnerstag"));
  ConversationListModel m;
  const QString id = m.create(QStringLiteral("x"));
  EXPECT_FALSE(
      m.data(m.index(m.rowOf(id)), ConversationListModel::DateTextRole).toString().isEmpty());
}

TEST(ChatPolish, FailedRequestsSayWhatTheUserAskedForNotTheRoute) {
  FakeChatServer server;
  server.failStatus = 500;
  server.failBody = R"({"error":{"message":"disk unreadable"}})";
  EngineClient client;
  client.setBaseUrl(server.url());
  QSignalSpy failed(&client, &EngineClient::requestFailed);
  client.fetchLocalModels();
  ASSERT_TRUE(failed.wait(5000));
  const QString msg = failed.at(0).at(1).toString();
  EXPECT_EQ(msg, QStringLiteral("listing the model files failed: disk unreadable (HTTP 500)"));
  EXPECT_EQ(EngineClient::describeRoute(QStringLiteral("/engine/load")),
            QStringLiteral("loading the model"));
  EXPECT_EQ(EngineClient::describeRoute(QStringLiteral("/engine/log?lines=5")),
            QStringLiteral("reading the engine log"));
}

// The header's picker loads through the Models page: it selects the file there (its remembered
// settings and fit) and asks the session to load; with no engine, the failure shows in the chat.
TEST(ChatPolish, PickerLoadsThroughTheModelsPage) {
  MainWindow w;
  auto* chat = w.findChild<ChatPage*>();
  ASSERT_NE(chat, nullptr);
  const QJsonArray files =
      QJsonDocument::fromJson(R"([{"path":"/m/qwen3-8b.gguf","name":"qwen3-8b"}])").array();
  emit w.session()->client()->localModelsReceived(files);
  ASSERT_EQ(chat->modelPicker()->count(), 1);
  QSignalSpy finished(w.session(), &EngineSession::loadFinished);
  emit chat->modelPicker()->activated(0);
  ASSERT_EQ(finished.size(), 1);
  EXPECT_EQ(w.modelsPage()->fitController()->entry().path, QStringLiteral("/m/qwen3-8b.gguf"));
  EXPECT_TRUE(chat->noticeText().startsWith(QStringLiteral("The model could not be loaded:")))
      << chat->noticeText().toStdString();
}
