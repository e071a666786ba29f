// Drives one conversation against the engine's OpenAI endpoint: builds the request body (system
// prompt, messages, images as image_url data URIs, sampling), streams /v1/chat/completions and
// accumulates content and reasoning separately. SSE lines are only decoded once complete (the
// SseParser holds partial lines), so a UTF-8 character split across TCP reads stays intact.
// States: Idle -> ReadingPrompt (sent, no token yet) -> Streaming -> Idle (answer complete,
// stopped or failed; the message's status says which).
#pragma once

#include <QElapsedTimer>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QObject>
#include <QPointer>
#include <QUrl>

#include "Conversation.h"
#include "SseParser.h"

class QNetworkReply;

namespace arc::app {

class ConversationListModel;

class ChatController : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, ReadingPrompt, Streaming };
  Q_ENUM(State)

  explicit ChatController(ConversationListModel* conversations, QObject* parent = nullptr);
  ~ChatController() override;

  void setEndpoint(const QUrl& baseUrl, const QString& apiKey);
  void setModel(const QString& model) { m_model = model; }

  void setConversation(const QString& id);
  QString conversationId() const { return m_conversationId; }
  Conversation* conversation() const;

  State state() const { return m_state; }
  bool isBusy() const { return m_state != State::Idle; }
  // Milliseconds since the request went out (for "reading prompt… 12 s").
  qint64 elapsedMs() const { return m_clock.isValid() ? m_clock.elapsed() : 0; }

  // Appends a user message and asks for the answer; false when busy or there is nothing to send.
  bool send(const QString& text, const QStringList& images = {});
  // Aborts the request; the partial answer stays, marked stopped.
  void stop();
  // Drops the last answer (and anything after the last user message) and asks again.
  bool regenerate();
  // Replaces user message `index` (later turns are dropped) and asks again.
  bool editAndResend(int index, const QString& text);
  // After an error: asks again for the answer that failed.
  bool retry() { return regenerate(); }

  // The JSON body for the conversation's messages as they are now (exposed for tests).
  QJsonObject buildRequestBody() const;

 signals:
  void stateChanged(arc::app::ChatController::State state);
  void messagesReset();            // messages added or removed: rebuild the view
  void messageUpdated(int index);  // text, reasoning, status or stats of one message changed
  // A send failed before any answer arrived: the user's text and images, to put back in the draft.
  void draftReturned(const QString& text, const QStringList& images);
  // The answer ended (complete, stopped or failed); its message holds the details.
  void answerFinished(arc::app::ChatMessage::Status status);

 private:
  bool startRequest();
  void onReadyRead();
  void onFinished();
  void handleEvent(const QByteArray& data);
  void finish(ChatMessage::Status status, const QString& error = {});
  void setState(State s);
  void save();
  QString describeFailure(int httpStatus, const QByteArray& body, const QString& netError) const;

  ConversationListModel* m_conversations;
  QNetworkAccessManager m_nam;
  QUrl m_baseUrl;
  QString m_apiKey;
  QString m_model;
  QString m_conversationId;
  State m_state = State::Idle;
  QPointer<QNetworkReply> m_reply;
  SseParser m_parser;
  QElapsedTimer m_clock;
  QByteArray m_errorBody;  // body of a non-2xx reply
  bool m_stopping = false;
  bool m_gotDone = false;
  bool m_freshSend = false;  // the request came from send(): a failure returns the draft
  int m_answerIndex = -1;
};

}  // namespace arc::app
