#include "ChatController.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkReply>

#include "ConversationListModel.h"

namespace arc::app {

namespace {
// A streamed line longer than this is a broken server.
constexpr qsizetype kMaxPendingBytes = 16 * 1024 * 1024;
}  // namespace

ChatController::ChatController(ConversationListModel* conversations, QObject* parent)
    : QObject(parent), m_conversations(conversations) {}

ChatController::~ChatController() {
  if (m_reply) {
    m_reply->disconnect(this);
    m_reply->abort();
  }
}

void ChatController::setEndpoint(const QUrl& baseUrl, const QString& apiKey) {
  m_baseUrl = baseUrl;
  m_apiKey = apiKey;
}

void ChatController::setConversation(const QString& id) {
  if (id == m_conversationId) return;
  if (isBusy()) stop();
  m_conversationId = id;
  emit messagesReset();
}

Conversation* ChatController::conversation() const {
  return m_conversations->find(m_conversationId);
}

void ChatController::setState(State s) {
  if (s == m_state) return;
  m_state = s;
  emit stateChanged(s);
}

void ChatController::save() {
  m_conversations->save(m_conversationId);
}

bool ChatController::send(const QString& text, const QStringList& images) {
  Conversation* c = conversation();
  if (!c || isBusy() || (text.trimmed().isEmpty() && images.isEmpty())) return false;
  ChatMessage user;
  user.role = ChatMessage::Role::User;
  user.content = text;
  user.images = images;
  c->messages.append(user);
  if (c->title.isEmpty()) c->title = text.simplified().left(60);
  m_freshSend = true;
  return startRequest();
}

bool ChatController::regenerate() {
  Conversation* c = conversation();
  if (!c || isBusy()) return false;
  while (!c->messages.isEmpty() && c->messages.last().role != ChatMessage::Role::User)
    c->messages.removeLast();
  if (c->messages.isEmpty()) return false;
  m_freshSend = false;
  return startRequest();
}

bool ChatController::editAndResend(int index, const QString& text) {
  Conversation* c = conversation();
  if (!c || isBusy() || index < 0 || index >= c->messages.size() ||
      c->messages[index].role != ChatMessage::Role::User)
    return false;
  c->messages[index].content = text;
  c->messages.resize(index + 1);
  m_freshSend = false;
  return startRequest();
}

QJsonObject ChatController::buildRequestBody() const {
  const Conversation* c = conversation();
  QJsonArray msgs;
  if (c && !c->systemPrompt.trimmed().isEmpty())
    msgs.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                            {QStringLiteral("content"), c->systemPrompt}});
  if (c) {
    for (const ChatMessage& m : c->messages) {
      // Failed answers and the placeholder being streamed are not part of the history.
      if (m.status == ChatMessage::Status::Error || m.status == ChatMessage::Status::Streaming)
        continue;
      if (m.role == ChatMessage::Role::Assistant) {
        msgs.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                {QStringLiteral("content"), m.content}});
        continue;
      }
      const QString role =
          m.role == ChatMessage::Role::System ? QStringLiteral("system") : QStringLiteral("user");
      if (m.images.isEmpty()) {
        msgs.append(
            QJsonObject{{QStringLiteral("role"), role}, {QStringLiteral("content"), m.content}});
        continue;
      }
      QJsonArray parts;
      if (!m.content.isEmpty())
        parts.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                 {QStringLiteral("text"), m.content}});
      for (const QString& img : m.images)
        parts.append(
            QJsonObject{{QStringLiteral("type"), QStringLiteral("image_url")},
                        {QStringLiteral("image_url"), QJsonObject{{QStringLiteral("url"), img}}}});
      msgs.append(QJsonObject{{QStringLiteral("role"), role}, {QStringLiteral("content"), parts}});
    }
  }
  QJsonObject body{
      {QStringLiteral("messages"), msgs},
      {QStringLiteral("stream"), true},
      {QStringLiteral("stream_options"), QJsonObject{{QStringLiteral("include_usage"), true}}}};
  if (!m_model.isEmpty()) body.insert(QStringLiteral("model"), m_model);
  if (c) {
    body.insert(QStringLiteral("temperature"), c->sampling.temperature);
    body.insert(QStringLiteral("top_p"), c->sampling.topP);
    body.insert(QStringLiteral("top_k"), c->sampling.topK);
    body.insert(QStringLiteral("max_tokens"), c->sampling.maxTokens);
  }
  return body;
}

bool ChatController::startRequest() {
  Conversation* c = conversation();
  if (!c) return false;
  const QByteArray body = QJsonDocument(buildRequestBody()).toJson(QJsonDocument::Compact);
  ChatMessage answer;
  answer.role = ChatMessage::Role::Assistant;
  answer.status = ChatMessage::Status::Streaming;
  c->messages.append(answer);
  m_answerIndex = int(c->messages.size()) - 1;
  emit messagesReset();

  QUrl url = m_baseUrl;
  QString path = url.path();
  if (path.endsWith(QLatin1Char('/'))) path.chop(1);
  url.setPath(path + QStringLiteral("/v1/chat/completions"));
  QNetworkRequest req(url);
  req.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
  req.setRawHeader("Accept", "text/event-stream");
  if (!m_apiKey.isEmpty()) req.setRawHeader("Authorization", "Bearer " + m_apiKey.toUtf8());
  m_parser.reset();
  m_errorBody.clear();
  m_stopping = false;
  m_gotDone = false;
  m_clock.start();
  m_reply = m_nam.post(req, body);
  connect(m_reply, &QNetworkReply::readyRead, this, &ChatController::onReadyRead);
  connect(m_reply, &QNetworkReply::finished, this, &ChatController::onFinished);
  setState(State::ReadingPrompt);
  return true;
}

void ChatController::onReadyRead() {
  if (!m_reply) return;
  const int status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  const QByteArray bytes = m_reply->readAll();
  if (status < 200 || status >= 300) {
    m_errorBody += bytes.left(1024 * 1024 - m_errorBody.size());
    return;
  }
  for (const SseEvent& ev : m_parser.feed(bytes)) handleEvent(ev.data);
  if (m_parser.pendingBytes() > kMaxPendingBytes && m_reply) {
    m_reply->disconnect(this);
    m_reply->abort();
    m_reply->deleteLater();
    finish(ChatMessage::Status::Error,
           tr("The engine sent a malformed stream (a line over 16 MiB)."));
  }
}

void ChatController::handleEvent(const QByteArray& data) {
  Conversation* c = conversation();
  if (!c || m_answerIndex < 0 || m_answerIndex >= c->messages.size()) return;
  ChatMessage& m = c->messages[m_answerIndex];
  if (data.trimmed() == "[DONE]") {
    m_gotDone = true;
    return;
  }
  const QJsonObject o = QJsonDocument::fromJson(data).object();
  if (o.contains(QStringLiteral("error"))) {
    const QJsonValue e = o.value(QStringLiteral("error"));
    m.error =
        e.isObject() ? e.toObject().value(QStringLiteral("message")).toString() : e.toString();
    return;
  }
  bool changed = false;
  for (const QJsonValue& ch : o.value(QStringLiteral("choices")).toArray()) {
    const QJsonObject delta = ch.toObject().value(QStringLiteral("delta")).toObject();
    const QString content = delta.value(QStringLiteral("content")).toString();
    const QString reasoning = delta.value(QStringLiteral("reasoning_content")).toString();
    if (!content.isEmpty() || !reasoning.isEmpty()) {
      m.content += content;
      m.reasoning += reasoning;
      changed = true;
      if (m.stats.ttftMs < 0) m.stats.ttftMs = double(m_clock.elapsed());  // replaced by timings
      setState(State::Streaming);
    }
  }
  const QJsonObject t = o.value(QStringLiteral("timings")).toObject();
  if (!t.isEmpty()) {
    m.stats.ttftMs = t.value(QStringLiteral("ttft_ms")).toDouble(m.stats.ttftMs);
    m.stats.decodeTokensPerSec = t.value(QStringLiteral("decode_tokens_per_s")).toDouble(-1);
    m.stats.prefillTokensPerSec = t.value(QStringLiteral("prefill_tokens_per_s")).toDouble(-1);
    m.stats.totalMs = t.value(QStringLiteral("total_ms")).toDouble(-1);
    changed = true;
  }
  const QJsonObject u = o.value(QStringLiteral("usage")).toObject();
  if (!u.isEmpty()) {
    m.stats.promptTokens = u.value(QStringLiteral("prompt_tokens")).toInteger(-1);
    m.stats.completionTokens = u.value(QStringLiteral("completion_tokens")).toInteger(-1);
    m.stats.cachedTokens = u.value(QStringLiteral("prompt_tokens_details"))
                               .toObject()
                               .value(QStringLiteral("cached_tokens"))
                               .toInteger(-1);
    // Speculative decoding, in OpenAI's predicted-output fields.
    const QJsonObject details = u.value(QStringLiteral("completion_tokens_details")).toObject();
    if (details.contains(QStringLiteral("accepted_prediction_tokens"))) {
      m.stats.acceptedTokens =
          details.value(QStringLiteral("accepted_prediction_tokens")).toInteger(0);
      m.stats.draftTokens =
          m.stats.acceptedTokens +
          details.value(QStringLiteral("rejected_prediction_tokens")).toInteger(0);
    }
    changed = true;
  }
  if (changed) emit messageUpdated(m_answerIndex);
}

void ChatController::onFinished() {
  QNetworkReply* r = m_reply;
  if (!r) return;
  if (r->bytesAvailable() > 0) onReadyRead();
  r->deleteLater();
  m_reply = nullptr;
  const int status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  if (m_stopping) {
    finish(ChatMessage::Status::Stopped);
    return;
  }
  Conversation* c = conversation();
  const QString streamError = c && m_answerIndex >= 0 && m_answerIndex < c->messages.size()
                                  ? c->messages[m_answerIndex].error
                                  : QString();
  if (status >= 200 && status < 300 && r->error() == QNetworkReply::NoError) {
    if (!streamError.isEmpty())
      finish(ChatMessage::Status::Error,
             tr("The engine stopped with an error: %1").arg(streamError));
    else
      finish(ChatMessage::Status::Complete);
    return;
  }
  finish(ChatMessage::Status::Error, describeFailure(status, m_errorBody, r->errorString()));
}

QString ChatController::describeFailure(int httpStatus, const QByteArray& body,
                                        const QString& netError) const {
  if (httpStatus == 0)
    return tr("The engine could not be reached (%1). Is it running?").arg(netError);
  const QJsonValue e = QJsonDocument::fromJson(body).object().value(QStringLiteral("error"));
  QString msg =
      e.isObject() ? e.toObject().value(QStringLiteral("message")).toString() : e.toString();
  if (msg.isEmpty()) msg = QString::fromUtf8(body.left(300)).trimmed();
  // The engine marks a prompt longer than the context with OpenAI's code; other servers only
  // say so in the message.
  const bool tooLong = e.toObject().value(QStringLiteral("code")).toString() ==
                           QLatin1String("context_length_exceeded") ||
                       (msg.contains(QStringLiteral("context"), Qt::CaseInsensitive) &&
                        (msg.contains(QStringLiteral("long"), Qt::CaseInsensitive) ||
                         msg.contains(QStringLiteral("exceed"), Qt::CaseInsensitive)));
  if (tooLong)
    return tr("The conversation is too long for the model's context: %1. Start a new conversation "
              "or remove earlier turns.")
        .arg(msg);
  if (httpStatus == 401 || httpStatus == 403)
    return tr("The engine refused the API key. Check it in Settings.");
  if (msg.contains(QStringLiteral("no model is loaded"), Qt::CaseInsensitive))
    return tr(
        "No model is loaded. Pick one in the model list above the chat or on the Models "
        "page.");
  return tr("The engine could not answer: %1 (HTTP %2)").arg(msg).arg(httpStatus);
}

void ChatController::finish(ChatMessage::Status status, const QString& error) {
  Conversation* c = conversation();
  if (c && m_answerIndex >= 0 && m_answerIndex < c->messages.size()) {
    ChatMessage& m = c->messages[m_answerIndex];
    m.status = status;
    m.error = error;
    const bool nothing = m.content.isEmpty() && m.reasoning.isEmpty();
    if (status == ChatMessage::Status::Error && nothing && m_freshSend && m_answerIndex > 0 &&
        c->messages[m_answerIndex - 1].role == ChatMessage::Role::User) {
      const ChatMessage& user = c->messages[m_answerIndex - 1];
      emit draftReturned(user.content, user.images);
    }
    emit messageUpdated(m_answerIndex);
    save();
  }
  m_answerIndex = -1;
  m_freshSend = false;
  setState(State::Idle);
  emit answerFinished(status);
}

void ChatController::stop() {
  if (!m_reply) return;
  m_stopping = true;
  m_reply->abort();  // finished() follows synchronously or soon; the partial answer stays
}

}  // namespace arc::app
