#include "Conversation.h"

#include <QJsonArray>

namespace arc::app {

namespace {

QString roleName(ChatMessage::Role r) {
  switch (r) {
    case ChatMessage::Role::System:
      return QStringLiteral("system");
    case ChatMessage::Role::User:
      return QStringLiteral("user");
    case ChatMessage::Role::Assistant:
      break;
  }
  return QStringLiteral("assistant");
}

QString statusName(ChatMessage::Status s) {
  switch (s) {
    case ChatMessage::Status::Complete:
    case ChatMessage::Status::Streaming:  // an answer cut by quitting is kept as stopped
      break;
    case ChatMessage::Status::Stopped:
      return QStringLiteral("stopped");
    case ChatMessage::Status::Error:
      return QStringLiteral("error");
  }
  return s == ChatMessage::Status::Streaming ? QStringLiteral("stopped")
                                             : QStringLiteral("complete");
}

}  // namespace

SamplingSettings SamplingSettings::preset(Preset p) {
  SamplingSettings s;
  switch (p) {
    case Preset::Precise:
      s.temperature = 0.2;
      s.topP = 0.8;
      s.topK = 20;
      break;
    case Preset::Creative:
      s.temperature = 1.0;
      s.topP = 0.95;
      s.topK = 100;
      break;
    case Preset::Balanced:
    case Preset::Custom:
      break;
  }
  return s;
}

SamplingSettings::Preset SamplingSettings::matchingPreset() const {
  for (Preset p : {Preset::Precise, Preset::Balanced, Preset::Creative}) {
    SamplingSettings s = preset(p);
    s.maxTokens = maxTokens;  // the answer length is not part of a preset
    if (s == *this) return p;
  }
  return Preset::Custom;
}

QJsonObject Conversation::toJson() const {
  QJsonArray msgs;
  for (const ChatMessage& m : messages) {
    QJsonObject o{{QStringLiteral("role"), roleName(m.role)},
                  {QStringLiteral("content"), m.content},
                  {QStringLiteral("status"), statusName(m.status)}};
    if (!m.reasoning.isEmpty()) o.insert(QStringLiteral("reasoning"), m.reasoning);
    if (!m.images.isEmpty())
      o.insert(QStringLiteral("images"), QJsonArray::fromStringList(m.images));
    if (!m.error.isEmpty()) o.insert(QStringLiteral("error"), m.error);
    if (!m.stats.isEmpty())
      o.insert(QStringLiteral("stats"),
               QJsonObject{{QStringLiteral("ttft_ms"), m.stats.ttftMs},
                           {QStringLiteral("decode_tokens_per_s"), m.stats.decodeTokensPerSec},
                           {QStringLiteral("prefill_tokens_per_s"), m.stats.prefillTokensPerSec},
                           {QStringLiteral("total_ms"), m.stats.totalMs},
                           {QStringLiteral("prompt_tokens"), m.stats.promptTokens},
                           {QStringLiteral("completion_tokens"), m.stats.completionTokens},
                           {QStringLiteral("cached_tokens"), m.stats.cachedTokens},
                           {QStringLiteral("draft_tokens"), m.stats.draftTokens},
                           {QStringLiteral("accepted_tokens"), m.stats.acceptedTokens}});
    msgs.append(o);
  }
  return QJsonObject{{QStringLiteral("version"), 1},
                     {QStringLiteral("id"), id},
                     {QStringLiteral("title"), title},
                     {QStringLiteral("system_prompt"), systemPrompt},
                     {QStringLiteral("updated"), updated.toString(Qt::ISODateWithMs)},
                     {QStringLiteral("sampling"),
                      QJsonObject{{QStringLiteral("temperature"), sampling.temperature},
                                  {QStringLiteral("top_p"), sampling.topP},
                                  {QStringLiteral("top_k"), sampling.topK},
                                  {QStringLiteral("max_tokens"), sampling.maxTokens}}},
                     {QStringLiteral("messages"), msgs}};
}

bool Conversation::fromJson(const QJsonObject& o, Conversation& out, QString* error) {
  auto fail = [error](const QString& m) {
    if (error) *error = m;
    return false;
  };
  if (!o.value(QStringLiteral("id")).isString() || !o.value(QStringLiteral("messages")).isArray())
    return fail(QStringLiteral("missing \"id\" or \"messages\""));
  Conversation c;
  c.id = o.value(QStringLiteral("id")).toString();
  c.title = o.value(QStringLiteral("title")).toString();
  c.systemPrompt = o.value(QStringLiteral("system_prompt")).toString();
  c.updated =
      QDateTime::fromString(o.value(QStringLiteral("updated")).toString(), Qt::ISODateWithMs);
  const QJsonObject s = o.value(QStringLiteral("sampling")).toObject();
  c.sampling.temperature = s.value(QStringLiteral("temperature")).toDouble(c.sampling.temperature);
  c.sampling.topP = s.value(QStringLiteral("top_p")).toDouble(c.sampling.topP);
  c.sampling.topK = s.value(QStringLiteral("top_k")).toInt(c.sampling.topK);
  c.sampling.maxTokens = s.value(QStringLiteral("max_tokens")).toInt(c.sampling.maxTokens);
  for (const QJsonValue& v : o.value(QStringLiteral("messages")).toArray()) {
    if (!v.isObject()) return fail(QStringLiteral("a message is not an object"));
    const QJsonObject m = v.toObject();
    ChatMessage msg;
    const QString role = m.value(QStringLiteral("role")).toString();
    if (role == QLatin1String("system"))
      msg.role = ChatMessage::Role::System;
    else if (role == QLatin1String("user"))
      msg.role = ChatMessage::Role::User;
    else if (role == QLatin1String("assistant"))
      msg.role = ChatMessage::Role::Assistant;
    else
      return fail(QStringLiteral("unknown role \"%1\"").arg(role));
    msg.content = m.value(QStringLiteral("content")).toString();
    msg.reasoning = m.value(QStringLiteral("reasoning")).toString();
    for (const QJsonValue& img : m.value(QStringLiteral("images")).toArray())
      msg.images << img.toString();
    const QString status = m.value(QStringLiteral("status")).toString();
    msg.status = status == QLatin1String("stopped") ? ChatMessage::Status::Stopped
                 : status == QLatin1String("error") ? ChatMessage::Status::Error
                                                    : ChatMessage::Status::Complete;
    msg.error = m.value(QStringLiteral("error")).toString();
    const QJsonObject st = m.value(QStringLiteral("stats")).toObject();
    msg.stats.ttftMs = st.value(QStringLiteral("ttft_ms")).toDouble(-1);
    msg.stats.decodeTokensPerSec = st.value(QStringLiteral("decode_tokens_per_s")).toDouble(-1);
    msg.stats.prefillTokensPerSec = st.value(QStringLiteral("prefill_tokens_per_s")).toDouble(-1);
    msg.stats.totalMs = st.value(QStringLiteral("total_ms")).toDouble(-1);
    msg.stats.promptTokens = st.value(QStringLiteral("prompt_tokens")).toInteger(-1);
    msg.stats.completionTokens = st.value(QStringLiteral("completion_tokens")).toInteger(-1);
    msg.stats.cachedTokens = st.value(QStringLiteral("cached_tokens")).toInteger(-1);
    msg.stats.draftTokens = st.value(QStringLiteral("draft_tokens")).toInteger(-1);
    msg.stats.acceptedTokens = st.value(QStringLiteral("accepted_tokens")).toInteger(-1);
    c.messages.append(msg);
  }
  out = c;
  return true;
}

}  // namespace arc::app
