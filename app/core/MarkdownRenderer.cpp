#include "MarkdownRenderer.h"

#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>

namespace arc::app {

namespace {

bool isCodeBlock(const QTextBlock& b) {
  const QTextBlockFormat f = b.blockFormat();
  return f.hasProperty(QTextFormat::BlockCodeFence) ||
         f.hasProperty(QTextFormat::BlockCodeLanguage) || f.nonBreakableLines();
}

QString normalizedLanguage(QString lang) {
  lang = lang.trimmed().toLower();
  if (lang == QLatin1String("c++") || lang == QLatin1String("cc") || lang == QLatin1String("c") ||
      lang == QLatin1String("h") || lang == QLatin1String("hpp") || lang == QLatin1String("cuda"))
    return QStringLiteral("cpp");
  if (lang == QLatin1String("py")) return QStringLiteral("python");
  if (lang == QLatin1String("js") || lang == QLatin1String("ts") ||
      lang == QLatin1String("typescript") || lang == QLatin1String("javascript") ||
      lang == QLatin1String("java") || lang == QLatin1String("go") || lang == QLatin1String("rs"))
    return lang == QLatin1String("rs") ? QStringLiteral("rust") : QStringLiteral("js");
  if (lang == QLatin1String("sh") || lang == QLatin1String("shell") || lang == QLatin1String("zsh"))
    return QStringLiteral("bash");
  return lang;
}

}  // namespace

CodeHighlighter::CodeHighlighter(QTextDocument* doc, bool dark) : QSyntaxHighlighter(doc) {
  m_keyword.setForeground(dark ? QColor(0x7a, 0xb8, 0xff) : QColor(0x00, 0x33, 0xb3));
  m_keyword.setFontWeight(QFont::Bold);
  m_string.setForeground(dark ? QColor(0x9e, 0xd8, 0x8a) : QColor(0x06, 0x7d, 0x17));
  m_comment.setForeground(dark ? QColor(0x8a, 0x8a, 0x8a) : QColor(0x8c, 0x8c, 0x8c));
  m_comment.setFontItalic(true);
  m_number.setForeground(dark ? QColor(0xe0, 0xa0, 0x60) : QColor(0x17, 0x50, 0xeb));
}

QList<CodeHighlighter::Rule> CodeHighlighter::rulesFor(const QString& language) {
  const auto it = m_cache.constFind(language);
  if (it != m_cache.constEnd()) return *it;
  QString keywords, comment = QStringLiteral("//[^\n]*");
  if (language == QLatin1String("cpp"))
    keywords = QStringLiteral(
        "auto|bool|break|case|char|class|const|constexpr|continue|default|delete|do|double|else|"
        "enum|explicit|false|float|for|if|include|inline|int|long|namespace|new|nullptr|operator|"
        "override|private|protected|public|return|short|signed|sizeof|static|struct|switch|"
        "template|this|throw|true|try|typename|unsigned|using|virtual|void|while");
  else if (language == QLatin1String("python")) {
    keywords = QStringLiteral(
        "and|as|assert|async|await|break|class|continue|def|del|elif|else|except|False|finally|"
        "for|from|global|if|import|in|is|lambda|None|nonlocal|not|or|pass|raise|return|True|try|"
        "while|with|yield");
    comment = QStringLiteral("#[^\n]*");
  } else if (language == QLatin1String("js") || language == QLatin1String("rust"))
    keywords = QStringLiteral(
        "async|await|break|case|catch|class|const|continue|default|else|enum|export|extends|false|"
        "fn|for|func|function|if|impl|import|interface|let|match|mut|new|null|package|pub|return|"
        "static|struct|switch|this|throw|true|try|type|use|var|void|while");
  else if (language == QLatin1String("bash")) {
    keywords = QStringLiteral(
        "case|do|done|elif|else|esac|export|fi|for|function|if|in|local|then|"
        "while|echo|cd");
    comment = QStringLiteral("#[^\n]*");
  }
  QList<Rule> rules;
  rules << Rule{QRegularExpression(QStringLiteral("\\b\\d+(\\.\\d+)?\\b")), m_number};
  if (!keywords.isEmpty())
    rules << Rule{QRegularExpression(QStringLiteral("\\b(%1)\\b").arg(keywords)), m_keyword};
  // Strings and comments last so they win over keywords inside them.
  rules << Rule{QRegularExpression(QStringLiteral(R"("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')")),
                m_string};
  if (!keywords.isEmpty()) rules << Rule{QRegularExpression(comment), m_comment};
  m_cache.insert(language, rules);
  return rules;
}

void CodeHighlighter::highlightBlock(const QString& text) {
  const QTextBlock b = currentBlock();
  if (!isCodeBlock(b)) return;
  // A fenced block is one QTextBlock per line; the language sits on each line's format.
  const QString lang =
      normalizedLanguage(b.blockFormat().property(QTextFormat::BlockCodeLanguage).toString());
  for (const Rule& r : rulesFor(lang)) {
    auto it = r.pattern.globalMatch(text);
    while (it.hasNext()) {
      const auto m = it.next();
      QTextCharFormat f = format(int(m.capturedStart()));
      f.merge(r.format);
      setFormat(int(m.capturedStart()), int(m.capturedLength()), f);
    }
  }
}

void MarkdownRenderer::styleQuotesAndTables(QTextDocument* doc, bool dark) {
  // The importer leaves tables borderless and quotes as a bare indent: tables get thin rules in
  // the code blocks' grey and a shaded header row; quotes the code shade and muted text.
  const QColor rule = dark ? QColor(0x4a, 0x4d, 0x52) : QColor(0xc8, 0xcc, 0xd2);
  const QColor headerShade = dark ? QColor(0x2b, 0x2d, 0x30) : QColor(0xf2, 0xf3, 0xf5);
  const QColor quoteShade = dark ? QColor(0x26, 0x28, 0x2b) : QColor(0xf6, 0xf7, 0xf9);
  const QColor quoteText = dark ? QColor(0xb0, 0xb4, 0xba) : QColor(0x55, 0x5a, 0x62);
  for (QTextFrame* f : doc->rootFrame()->childFrames()) {
    auto* table = qobject_cast<QTextTable*>(f);
    if (!table) continue;
    QTextTableFormat tf = table->format();
    tf.setBorder(1);
    tf.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
    tf.setBorderBrush(rule);
    tf.setBorderCollapse(true);
    tf.setCellSpacing(0);
    tf.setCellPadding(4);
    table->setFormat(tf);
    for (int c = 0; c < table->columns(); ++c) {
      QTextTableCell cell = table->cellAt(0, c);
      QTextCharFormat cf = cell.format();
      cf.setBackground(headerShade);
      cf.setFontWeight(QFont::Bold);
      cell.setFormat(cf);
    }
  }
  for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
    if (b.blockFormat().intProperty(QTextFormat::BlockQuoteLevel) <= 0) continue;
    QTextBlockFormat bf;
    bf.setBackground(quoteShade);
    bf.setLeftMargin(12 * b.blockFormat().intProperty(QTextFormat::BlockQuoteLevel));
    QTextCursor cur(b);
    cur.mergeBlockFormat(bf);
    cur.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    QTextCharFormat muted;
    muted.setForeground(quoteText);
    cur.mergeCharFormat(muted);
  }
}

void MarkdownRenderer::render(QTextDocument* doc, const QString& markdown, bool dark) {
  doc->setMarkdown(markdown, QTextDocument::MarkdownDialectGitHub);
  // Code blocks get a shaded background so they stand apart from the prose.
  QTextBlockFormat shade;
  shade.setBackground(dark ? QColor(0x2b, 0x2d, 0x30) : QColor(0xf2, 0xf3, 0xf5));
  for (QTextBlock b = doc->begin(); b.isValid(); b = b.next())
    if (isCodeBlock(b)) QTextCursor(b).mergeBlockFormat(shade);
  styleQuotesAndTables(doc, dark);
  // The importer sets the code-block formats after inserting text, so colour once it is done
  // (a new highlighter would otherwise only run later from the event loop).
  auto* h = doc->findChild<CodeHighlighter*>();
  if (!h) h = new CodeHighlighter(doc, dark);
  h->rehighlight();
}

QList<CodeBlock> MarkdownRenderer::codeBlocks(const QTextDocument* doc) {
  QList<CodeBlock> out;
  bool inBlock = false;
  for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
    if (!isCodeBlock(b)) {
      inBlock = false;
      continue;
    }
    QString line = b.text();
    line.replace(QChar::LineSeparator, QLatin1Char('\n'));
    // A new fence starts a new block even when two code blocks touch.
    const QString lang = b.blockFormat().property(QTextFormat::BlockCodeLanguage).toString();
    if (!inBlock || (b.blockFormat().property(QTextFormat::BlockCodeFence).isValid() &&
                     b.previous().isValid() &&
                     b.previous().blockFormat().property(QTextFormat::BlockCodeLanguage) !=
                         b.blockFormat().property(QTextFormat::BlockCodeLanguage))) {
      out.append(CodeBlock{lang, line});
      inBlock = true;
    } else {
      out.last().text += QLatin1Char('\n') + line;
    }
  }
  return out;
}

}  // namespace arc::app
