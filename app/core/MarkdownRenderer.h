// Turns an answer's Markdown into a QTextDocument (Qt's CommonMark/GitHub importer: headings,
// lists, tables, links, inline and fenced code) and colours fenced code with a small
// keyword/string/comment highlighter for common languages.
#pragma once

#include <QList>
#include <QRegularExpression>
#include <QSyntaxHighlighter>

class QTextDocument;

namespace arc::app {

struct CodeBlock {
  QString language;  // from the fence ("cpp", "python"), may be empty
  QString text;      // the code, lines joined with '\n'
};

class CodeHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
 public:
  explicit CodeHighlighter(QTextDocument* doc, bool dark = false);

 protected:
  void highlightBlock(const QString& text) override;

 private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
  };
  QList<Rule> rulesFor(const QString& language);
  QTextCharFormat m_keyword, m_string, m_comment, m_number;
  QHash<QString, QList<Rule>> m_cache;
};

class MarkdownRenderer {
 public:
  // Replaces the document's content with the rendered Markdown and highlights its code blocks.
  static void render(QTextDocument* doc, const QString& markdown, bool dark = false);
  // The fenced/indented code blocks of a rendered document, in order.
  static QList<CodeBlock> codeBlocks(const QTextDocument* doc);

 private:
  // Tables: thin rules and a shaded header row; quotes: shaded, indented by level, muted text.
  static void styleQuotesAndTables(QTextDocument* doc, bool dark);
};

}  // namespace arc::app
