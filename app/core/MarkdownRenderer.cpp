#include "MarkdownRenderer.h"

#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>

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

void MarkdownRenderer::render(QTextDocument* doc, const QString& markdown, bool dark) {
  doc->setMarkdown(markdown, QTextDocument::MarkdownDialectGitHub);
  // Code blocks get a shaded background so they stand apart from the prose.
  QTextBlockFormat shade;
  shade.setBackground(dark ? QColor(0x2b, 0x2d, 0x30) : QColor(0xf2, 0xf3, 0xf5));
  for (QTextBlock b = doc->begin(); b.isValid(); b = b.next())
    if (isCodeBlock(b)) QTextCursor(b).mergeBlockFormat(shade);
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
