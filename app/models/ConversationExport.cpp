#include "ConversationExport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace arc::app {

namespace {

QString titleOf(const Conversation& c) {
  return c.title.isEmpty() ? ConversationExport::tr("New conversation") : c.title;
}

}  // namespace

QString ConversationExport::toMarkdown(const Conversation& c) {
  QString md = QStringLiteral("# %1\n\n").arg(titleOf(c));
  if (c.updated.isValid())
    md += QStringLiteral("_%1_\n\n")
              .arg(tr("Last changed %1").arg(c.updated.toUTC().toString(Qt::ISODate)));
  if (!c.systemPrompt.trimmed().isEmpty())
    md += QStringLiteral("## %1\n\n%2\n\n").arg(tr("System prompt"), c.systemPrompt.trimmed());
  for (const ChatMessage& m : c.messages) {
    const bool user = m.role == ChatMessage::Role::User;
    md += QStringLiteral("## %1\n\n").arg(user ? tr("You") : tr("Assistant"));
    if (!m.images.isEmpty())
      md +=
          QStringLiteral("_%1_\n\n").arg(tr("%n image(s) attached", nullptr, int(m.images.size())));
    if (!m.reasoning.isEmpty())
      md += QStringLiteral("<details><summary>%1</summary>\n\n%2\n\n</details>\n\n")
                .arg(tr("Thinking"), m.reasoning.trimmed());
    if (!m.content.isEmpty()) md += m.content.trimmed() + QStringLiteral("\n\n");
    if (m.status == ChatMessage::Status::Stopped)
      md += QStringLiteral("_%1_\n\n").arg(tr("(stopped)"));
    if (m.status == ChatMessage::Status::Error)
      md += QStringLiteral("_%1_\n\n").arg(tr("Failed: %1").arg(m.error));
  }
  return md;
}

QByteArray ConversationExport::toJson(const Conversation& c) {
  QJsonArray messages;
  if (!c.systemPrompt.trimmed().isEmpty())
    messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                                {QStringLiteral("content"), c.systemPrompt}});
  for (const ChatMessage& m : c.messages) {
    QJsonObject o{{QStringLiteral("role"),
                   m.role == ChatMessage::Role::User     ? QStringLiteral("user")
                   : m.role == ChatMessage::Role::System ? QStringLiteral("system")
                                                         : QStringLiteral("assistant")},
                  {QStringLiteral("content"), m.content}};
    if (!m.reasoning.isEmpty()) o.insert(QStringLiteral("reasoning_content"), m.reasoning);
    if (!m.images.isEmpty())
      o.insert(QStringLiteral("images"), QJsonArray::fromStringList(m.images));
    if (m.status == ChatMessage::Status::Stopped)
      o.insert(QStringLiteral("status"), QStringLiteral("stopped"));
    if (m.status == ChatMessage::Status::Error) {
      o.insert(QStringLiteral("status"), QStringLiteral("error"));
      o.insert(QStringLiteral("error"), m.error);
    }
    messages.append(o);
  }
  const QJsonObject doc{{QStringLiteral("title"), titleOf(c)},
                        {QStringLiteral("updated"), c.updated.toUTC().toString(Qt::ISODate)},
                        {QStringLiteral("sampling"),
                         QJsonObject{{QStringLiteral("temperature"), c.sampling.temperature},
                                     {QStringLiteral("top_p"), c.sampling.topP},
                                     {QStringLiteral("top_k"), c.sampling.topK},
                                     {QStringLiteral("max_tokens"), c.sampling.maxTokens}}},
                        {QStringLiteral("messages"), messages}};
  return QJsonDocument(doc).toJson(QJsonDocument::Indented);
}

}  // namespace arc::app
