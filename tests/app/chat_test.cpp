// The chat side without widgets: ChatController against an in-process fake /v1/chat/completions
// (streams split inside UTF-8 characters, stop, regenerate/edit bodies, errors), conversation
// files (round trip, corrupt files) and the Markdown renderer on a fixed sample.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocument>
#include <QTextTable>

#include "ChatController.h"
#include "ConversationListModel.h"
#include "MarkdownRenderer.h"
#include "MessageWidget.h"
#include "fake_chat_server.h"

using namespace arc::app;

namespace {

struct Fixture {
  Fixture() : controller(&model) {
    controller.setEndpoint(server.url(), QStringLiteral("k3y"));
    id = model.create();
    controller.setConversation(id);
  }
  bool waitIdle(int ms = 5000) {
    return QTest::qWaitFor([&] { return !controller.isBusy(); }, ms);
  }
  const ChatMessage& last() { return model.find(id)->messages.last(); }
  FakeChatServer server;
  ConversationListModel model;  // not bound to a folder: nothing written
  ChatController controller;
  QString id;
};

QStringList userTexts(const QJsonObject& body) {
  QStringList out;
  for (const QJsonValue& v : body.value(QStringLiteral("messages")).toArray())
    out << v.toObject().value(QStringLiteral("role")).toString() + QLatin1Char(':') +
               v.toObject().value(QStringLiteral("content")).toString();
  return out;
}

}  // namespace

TEST(ChatController, StreamSplitInsideUtf8CharactersGivesExactText) {
  Fixture f;
  const QString answer = QStringLiteral("Grüße, 世界! 🙂 ünïcödé ✓");
  const QString thinking = QStringLiteral("überlege… 🤔");
  QSignalSpy states(&f.controller, &ChatController::stateChanged);
  ASSERT_TRUE(f.controller.send(QStringLiteral("hi")));
  EXPECT_EQ(f.controller.state(), ChatController::State::ReadingPrompt);
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 1; }, 5000));
  EXPECT_EQ(f.server.auth.value(0), QByteArray("Bearer k3y"));
  QByteArray stream = chunk({}, thinking.left(5)) + chunk({}, thinking.mid(5));
  for (int i = 0; i < answer.size(); i += 3) stream += chunk(answer.mid(i, 3));
  stream +=
      R"(data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"timings":{"queue_ms":1,"ttft_ms":123.5,"prefill_tokens_per_s":900,"decode_tokens_per_s":42.25,"total_ms":800}})"
      "\n\n"
      R"(data: {"choices":[],"usage":{"prompt_tokens":17,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":12},"completion_tokens_details":{"accepted_prediction_tokens":6,"rejected_prediction_tokens":2}}})"
      "\n\ndata: [DONE]\n\n";
  // Odd-sized pieces land inside the 2-, 3- and 4-byte UTF-8 sequences.
  f.server.write(stream, 7);
  f.server.end();
  ASSERT_TRUE(f.waitIdle());
  const ChatMessage& m = f.last();
  EXPECT_EQ(m.content, answer);
  EXPECT_EQ(m.reasoning, thinking);
  EXPECT_EQ(m.status, ChatMessage::Status::Complete);
  EXPECT_DOUBLE_EQ(m.stats.ttftMs, 123.5);
  EXPECT_DOUBLE_EQ(m.stats.decodeTokensPerSec, 42.25);
  EXPECT_EQ(m.stats.promptTokens, 17);
  EXPECT_EQ(m.stats.completionTokens, 9);
  EXPECT_EQ(m.stats.cachedTokens, 12);
  EXPECT_EQ(m.stats.draftTokens, 8);  // speculative decoding, shown under the answer
  EXPECT_EQ(m.stats.acceptedTokens, 6);
  EXPECT_TRUE(
      MessageWidget::statsText(m.stats).contains(QStringLiteral("75% of 8 drafts accepted")))
      << MessageWidget::statsText(m.stats).toStdString();
  ASSERT_GE(states.size(), 3);
  EXPECT_EQ(states.at(0).at(0).value<ChatController::State>(),
            ChatController::State::ReadingPrompt);
  EXPECT_EQ(states.at(1).at(0).value<ChatController::State>(), ChatController::State::Streaming);
  EXPECT_EQ(states.last().at(0).value<ChatController::State>(), ChatController::State::Idle);
  const QJsonObject body = f.server.bodies.value(0);
  EXPECT_TRUE(body.value(QStringLiteral("stream")).toBool());
  EXPECT_EQ(userTexts(body), QStringList{QStringLiteral("user:hi")});
}

TEST(ChatController, StopClosesTheConnectionAndKeepsThePartialAnswer) {
  Fixture f;
  ASSERT_TRUE(f.controller.send(QStringLiteral("long story")));
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 1; }, 5000));
  f.server.write(chunk(QStringLiteral("Once upon")));
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return f.controller.state() == ChatController::State::Streaming; }, 5000));
  f.controller.stop();
  ASSERT_TRUE(f.waitIdle());
  EXPECT_EQ(f.last().content, QStringLiteral("Once upon"));
  EXPECT_EQ(f.last().status, ChatMessage::Status::Stopped);
  EXPECT_TRUE(QTest::qWaitFor([&] { return f.server.closed >= 1; }, 5000))
      << "the server never saw the connection close";
}

TEST(ChatController, RegenerateAndEditSendTheRightBodies) {
  Fixture f;
  Conversation* c = f.model.find(f.id);
  c->systemPrompt = QStringLiteral("Be brief.");
  c->sampling = SamplingSettings::preset(SamplingSettings::Preset::Precise);
  auto answer = [&](const QString& text) {
    f.server.write(chunk(text) + "data: [DONE]\n\n");
    f.server.end();
    return f.waitIdle();
  };
  const int base = int(f.server.bodies.size());
  ASSERT_TRUE(
      f.controller.send(QStringLiteral("one"), {QStringLiteral("data:image/png;base64,AAAA")}));
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == base + 1; }, 5000));
  ASSERT_TRUE(answer(QStringLiteral("A1")));
  ASSERT_TRUE(f.controller.send(QStringLiteral("two")));
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == base + 2; }, 5000));
  ASSERT_TRUE(answer(QStringLiteral("A2")));

  const QJsonObject first = f.server.bodies.at(base);
  EXPECT_DOUBLE_EQ(first.value(QStringLiteral("temperature")).toDouble(), 0.2);
  EXPECT_EQ(first.value(QStringLiteral("top_k")).toInt(), 20);
  const QJsonArray m0 = first.value(QStringLiteral("messages")).toArray();
  ASSERT_EQ(m0.size(), 2);
  EXPECT_EQ(m0[0].toObject().value(QStringLiteral("content")).toString(),
            QStringLiteral("Be brief."));
  const QJsonArray parts = m0[1].toObject().value(QStringLiteral("content")).toArray();
  ASSERT_EQ(parts.size(), 2);
  EXPECT_EQ(parts[0].toObject().value(QStringLiteral("text")).toString(), QStringLiteral("one"));
  EXPECT_EQ(parts[1]
                .toObject()
                .value(QStringLiteral("image_url"))
                .toObject()
                .value(QStringLiteral("url"))
                .toString(),
            QStringLiteral("data:image/png;base64,AAAA"));

  // Regenerate: the last answer is dropped from both the history and the request.
  ASSERT_TRUE(f.controller.regenerate());
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == base + 3; }, 5000));
  ASSERT_TRUE(answer(QStringLiteral("A2b")));
  const QJsonArray m2 = f.server.bodies.at(base + 2).value(QStringLiteral("messages")).toArray();
  ASSERT_EQ(m2.size(), 4);  // system, user one, assistant A1, user two
  EXPECT_EQ(m2[2].toObject().value(QStringLiteral("content")).toString(), QStringLiteral("A1"));
  EXPECT_EQ(m2[3].toObject().value(QStringLiteral("content")).toString(), QStringLiteral("two"));
  ASSERT_EQ(f.model.find(f.id)->messages.size(), 4);
  EXPECT_EQ(f.last().content, QStringLiteral("A2b"));

  // Edit the first user message: everything after it is replaced.
  ASSERT_TRUE(f.controller.editAndResend(0, QStringLiteral("uno")));
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == base + 4; }, 5000));
  ASSERT_TRUE(answer(QStringLiteral("B1")));
  const QJsonArray m3 = f.server.bodies.at(base + 3).value(QStringLiteral("messages")).toArray();
  ASSERT_EQ(m3.size(), 2);
  const QJsonArray p3 = m3[1].toObject().value(QStringLiteral("content")).toArray();
  EXPECT_EQ(p3[0].toObject().value(QStringLiteral("text")).toString(), QStringLiteral("uno"));
  ASSERT_EQ(f.model.find(f.id)->messages.size(), 2);
  EXPECT_EQ(f.last().content, QStringLiteral("B1"));
}

TEST(ChatController, RefusedRequestIsShownAndTheDraftComesBack) {
  Fixture f;
  f.server.failStatus = 400;
  // As the engine's send_openai_error writes it for a prompt longer than the context.
  f.server.failBody =
      "{\"error\":{\"message\":\"prompt has 5000 tokens, the context holds 4096\","
      "\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"context_length_exceeded\"}}";
  QSignalSpy draft(&f.controller, &ChatController::draftReturned);
  ASSERT_TRUE(f.controller.send(QStringLiteral("my long text"), {QStringLiteral("data:x")}));
  ASSERT_TRUE(f.waitIdle());
  EXPECT_EQ(f.last().status, ChatMessage::Status::Error);
  EXPECT_TRUE(
      f.last().error.contains(QStringLiteral("prompt has 5000 tokens, the context holds 4096")))
      << f.last().error.toStdString();
  EXPECT_TRUE(f.last().error.contains(QStringLiteral("too long"))) << f.last().error.toStdString();
  ASSERT_EQ(draft.size(), 1);
  EXPECT_EQ(draft.at(0).at(0).toString(), QStringLiteral("my long text"));
  EXPECT_EQ(draft.at(0).at(1).toStringList(), QStringList{QStringLiteral("data:x")});

  // Retry once the engine accepts: the failed answer is replaced.
  f.server.failStatus = 0;
  ASSERT_TRUE(f.controller.retry());
  ASSERT_TRUE(QTest::qWaitFor([&] { return f.server.bodies.size() == 2; }, 5000));
  f.server.write(chunk(QStringLiteral("ok")) + "data: [DONE]\n\n");
  f.server.end();
  ASSERT_TRUE(f.waitIdle());
  EXPECT_EQ(f.model.find(f.id)->messages.size(), 2);
  EXPECT_EQ(f.last().content, QStringLiteral("ok"));
}

TEST(ChatController, EngineGoneIsReported) {
  ConversationListModel model;
  ChatController c(&model);
  QTcpServer probe;  // take a free port, then close it: nothing listens there
  ASSERT_TRUE(probe.listen(QHostAddress::LocalHost));
  const quint16 port = probe.serverPort();
  probe.close();
  c.setEndpoint(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(port)), {});
  c.setConversation(model.create());
  QSignalSpy draft(&c, &ChatController::draftReturned);
  ASSERT_TRUE(c.send(QStringLiteral("hello?")));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !c.isBusy(); }, 5000));
  const ChatMessage& m = c.conversation()->messages.last();
  EXPECT_EQ(m.status, ChatMessage::Status::Error);
  EXPECT_TRUE(m.error.contains(QStringLiteral("could not be reached"))) << m.error.toStdString();
  EXPECT_EQ(draft.size(), 1);
}

TEST(Conversations, FilesRoundTripAndCorruptOnesAreSkipped) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  QString id;
  {
    ConversationListModel m;
    m.load(dir.path());
    id = m.create(QStringLiteral("Trip"));
    Conversation* c = m.find(id);
    c->systemPrompt = QStringLiteral("Sei knapp.");
    c->sampling = SamplingSettings::preset(SamplingSettings::Preset::Creative);
    ChatMessage u;
    u.content = QStringLiteral("Wie geht's? 🙂");
    u.images << QStringLiteral("data:image/png;base64,iVBO");
    ChatMessage a;
    a.role = ChatMessage::Role::Assistant;
    a.content = QStringLiteral("Gut.");
    a.reasoning = QStringLiteral("hmm");
    a.status = ChatMessage::Status::Stopped;
    a.stats.ttftMs = 50;
    a.stats.decodeTokensPerSec = 31.5;
    a.stats.cachedTokens = 8;
    a.stats.draftTokens = 10;
    a.stats.acceptedTokens = 7;
    c->messages = {u, a};
    ASSERT_TRUE(m.save(id));
    m.create(QStringLiteral("Second"));
  }
  // A broken file and one with the wrong shape next to the good ones.
  QFile bad(dir.filePath(QStringLiteral("broken.json")));
  ASSERT_TRUE(bad.open(QIODevice::WriteOnly));
  bad.write("{\"id\": \"broken\", \"messages\": [");
  bad.close();
  QFile odd(dir.filePath(QStringLiteral("odd.json")));
  ASSERT_TRUE(odd.open(QIODevice::WriteOnly));
  odd.write("[1, 2, 3]");
  odd.close();

  ConversationListModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.load(dir.path());
  EXPECT_EQ(m.rowCount(), 2);
  ASSERT_EQ(m.loadErrors().size(), 2) << m.loadErrors().join(QLatin1Char('\n')).toStdString();
  EXPECT_TRUE(m.loadErrors().join(QLatin1Char(' ')).contains(QStringLiteral("broken.json")));
  EXPECT_TRUE(QFile::exists(bad.fileName()));  // never deleted
  EXPECT_TRUE(QFile::exists(odd.fileName()));
  const Conversation* c = m.find(id);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->title, QStringLiteral("Trip"));
  EXPECT_EQ(c->systemPrompt, QStringLiteral("Sei knapp."));
  EXPECT_EQ(c->sampling.matchingPreset(), SamplingSettings::Preset::Creative);
  ASSERT_EQ(c->messages.size(), 2);
  EXPECT_EQ(c->messages[0].content, QStringLiteral("Wie geht's? 🙂"));
  EXPECT_EQ(c->messages[0].images, QStringList{QStringLiteral("data:image/png;base64,iVBO")});
  EXPECT_EQ(c->messages[1].reasoning, QStringLiteral("hmm"));
  EXPECT_EQ(c->messages[1].status, ChatMessage::Status::Stopped);
  EXPECT_DOUBLE_EQ(c->messages[1].stats.decodeTokensPerSec, 31.5);
  EXPECT_EQ(c->messages[1].stats.cachedTokens, 8);
  EXPECT_EQ(c->messages[1].stats.draftTokens, 10);
  EXPECT_EQ(c->messages[1].stats.acceptedTokens, 7);

  // Rename, delete and create through the model (the tester checks every signal).
  EXPECT_TRUE(m.rename(id, QStringLiteral("Renamed")));
  EXPECT_EQ(m.data(m.index(m.rowOf(id)), Qt::DisplayRole).toString(), QStringLiteral("Renamed"));
  const QString third = m.create();
  EXPECT_EQ(m.rowOf(third), 0);
  EXPECT_TRUE(m.remove(id));
  EXPECT_FALSE(QFile::exists(dir.filePath(id + QStringLiteral(".json"))));
  EXPECT_TRUE(QFile::exists(bad.fileName()));
  EXPECT_EQ(m.rowCount(), 2);
}

TEST(Markdown, RendersCodeTablesAndLists) {
  const QString md = QStringLiteral(
      "# Title\n\nSome `inline` text and a [link](https://example.org).\n\n"
      "- apple\n- banana\n- cherry\n\n"
      "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n"
      "```python\ndef f(x):\n    return \"s\"  # note\n```\n");
  QTextDocument doc;
  MarkdownRenderer::render(&doc, md);
  int tables = 0, listItems = 0, headings = 0;
  QTextTable* table = nullptr;
  QStringList items;
  for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
    if (b.textList()) {
      ++listItems;
      items << b.text();
    }
    if (b.blockFormat().headingLevel() == 1) ++headings;
  }
  for (QTextFrame::iterator it = doc.rootFrame()->begin(); !it.atEnd(); ++it)
    if (auto* t = qobject_cast<QTextTable*>(it.currentFrame())) {
      ++tables;
      table = t;
    }
  EXPECT_EQ(headings, 1);
  EXPECT_EQ(listItems, 3);
  EXPECT_EQ(items, (QStringList{QStringLiteral("apple"), QStringLiteral("banana"),
                                QStringLiteral("cherry")}));
  ASSERT_EQ(tables, 1);
  EXPECT_EQ(table->rows(), 3);
  EXPECT_EQ(table->columns(), 2);
  EXPECT_EQ(table->cellAt(2, 1).firstCursorPosition().block().text(), QStringLiteral("4"));
  const QList<CodeBlock> code = MarkdownRenderer::codeBlocks(&doc);
  ASSERT_EQ(code.size(), 1);
  EXPECT_EQ(code[0].language, QStringLiteral("python"));
  EXPECT_EQ(code[0].text, QStringLiteral("def f(x):\n    return \"s\"  # note"));
  // The highlighter coloured the keyword "def" differently from the plain text after it.
  for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
    if (!b.text().startsWith(QStringLiteral("def"))) continue;
    const QList<QTextLayout::FormatRange> fmts = b.layout()->formats();
    bool keyword = false;
    for (const auto& r : fmts)
      if (r.start == 0 && r.length == 3 && r.format.fontWeight() == QFont::Bold) keyword = true;
    EXPECT_TRUE(keyword);
  }
  EXPECT_TRUE(doc.toHtml().contains(QStringLiteral("https://example.org")));
}

TEST(Markdown, TablesAndQuotesAreStyledLikeCode) {
  QTextDocument doc;
  MarkdownRenderer::render(&doc,
                           QStringLiteral("| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted words\n\n"
                                          "plain words\n"),
                           /*dark=*/true);
  QTextTable* table = nullptr;
  for (QTextFrame::iterator it = doc.rootFrame()->begin(); !it.atEnd(); ++it)
    if (auto* t = qobject_cast<QTextTable*>(it.currentFrame())) table = t;
  ASSERT_NE(table, nullptr);
  EXPECT_GT(table->format().border(), 0);
  EXPECT_GT(table->format().cellPadding(), 0);
  // The header row is shaded with the dark theme's code shade; body cells are not.
  EXPECT_EQ(table->cellAt(0, 0).format().background().color(), QColor(0x2b, 0x2d, 0x30));
  EXPECT_EQ(table->cellAt(1, 0).format().background().style(), Qt::NoBrush);
  bool quote = false, plain = false;
  for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
    if (b.text() == QStringLiteral("quoted words")) {
      quote = true;
      EXPECT_NE(b.blockFormat().background().style(), Qt::NoBrush);
      EXPECT_GT(b.blockFormat().leftMargin(), 0);
      EXPECT_EQ(b.begin().fragment().charFormat().foreground().color(), QColor(0xb0, 0xb4, 0xba));
    }
    if (b.text() == QStringLiteral("plain words")) {
      plain = true;
      EXPECT_EQ(b.blockFormat().background().style(), Qt::NoBrush);
    }
  }
  EXPECT_TRUE(quote);
  EXPECT_TRUE(plain);
}
