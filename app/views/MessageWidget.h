// One message of the conversation: the Markdown answer (re-rendered only when its text changed),
// the reasoning apart and collapsible, attached images, copy buttons per code block, the error
// with Retry, and under each answer its speed figures.
#pragma once

#include <QWidget>

#include "Conversation.h"

class QLabel;
class QTextBrowser;
class QToolButton;
class QHBoxLayout;

namespace arc::app {

class MessageWidget : public QWidget {
  Q_OBJECT
 public:
  MessageWidget(int index, QWidget* parent = nullptr);
  int index() const { return m_index; }
  // Shows the message; `isLastAnswer` offers Regenerate, `busy` hides the actions.
  void setMessage(const ChatMessage& m, bool isLastAnswer, bool busy);
  QString renderedText() const;  // the content as shown (plain text), for tests

  static QString statsText(const AnswerStats& s);

 signals:
  void copyRequested(int index);
  void editRequested(int index);
  void regenerateRequested();
  void retryRequested();

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  void fitHeight(QTextBrowser* b);
  void rebuildCodeButtons();

  int m_index;
  QString m_shownContent;
  QString m_shownReasoning;
  bool m_first = true;
  QLabel* m_header;
  QToolButton* m_reasoningToggle;
  QTextBrowser* m_reasoning;
  QWidget* m_images;
  QHBoxLayout* m_imagesLayout;
  QTextBrowser* m_content;
  QWidget* m_codeButtons;
  QHBoxLayout* m_codeLayout;
  QLabel* m_error;
  QLabel* m_stats;
  QToolButton* m_copy;
  QToolButton* m_edit;
  QToolButton* m_regenerate;
  QToolButton* m_retry;
};

}  // namespace arc::app
