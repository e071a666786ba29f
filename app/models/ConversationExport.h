// A conversation written out for a person or another program: Markdown (headings per turn,
// thinking folded in <details>, images counted) and JSON (the OpenAI message list with the
// conversation's title, system prompt and sampling). Failed answers are marked, not dropped.
#pragma once

#include <QByteArray>
#include <QCoreApplication>
#include <QString>

#include "Conversation.h"

namespace arc::app {

class ConversationExport {
  Q_DECLARE_TR_FUNCTIONS(arc::app::ConversationExport)

 public:
  static QString toMarkdown(const Conversation& c);
  static QByteArray toJson(const Conversation& c);
};

}  // namespace arc::app
