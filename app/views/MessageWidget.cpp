#include "MessageWidget.h"

#include <QApplication>
#include <QClipboard>
#include <QHBoxLayout>
#include <QLabel>
#include <QPalette>
#include <QTextBrowser>
#include <QToolButton>
#include <QVBoxLayout>

#include "ImageAttachment.h"
#include "MarkdownRenderer.h"
#include "NumberFormat.h"

namespace arc::app {

namespace {

QTextBrowser* makeBrowser(QWidget* parent) {
  auto* b = new QTextBrowser(parent);
  b->setOpenExternalLinks(true);
  b->setFrameShape(QFrame::NoFrame);
  b->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  b->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  b->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  b->viewport()->setAutoFillBackground(false);
  return b;
}

bool isDark(const QWidget* w) {
  return w->palette().color(QPalette::Window).lightness() < 128;
}

}  // namespace

MessageWidget::MessageWidget(int index, QWidget* parent) : QWidget(parent), m_index(index) {
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(10, 6, 10, 6);
  v->setSpacing(3);
  auto* top = new QHBoxLayout;
  m_header = new QLabel(this);
  QFont hf = m_header->font();
  hf.setBold(true);
  m_header->setFont(hf);
  top->addWidget(m_header);
  top->addStretch(1);
  m_copy = new QToolButton(this);
  m_copy->setText(tr("Copy"));
  m_edit = new QToolButton(this);
  m_edit->setText(tr("Edit"));
  m_regenerate = new QToolButton(this);
  m_regenerate->setText(tr("Regenerate"));
  for (QToolButton* b : {m_edit, m_regenerate, m_copy}) {
    b->setAutoRaise(true);
    top->addWidget(b);
  }
  v->addLayout(top);

  m_reasoningToggle = new QToolButton(this);
  m_reasoningToggle->setCheckable(true);
  m_reasoningToggle->setAutoRaise(true);
  m_reasoningToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  m_reasoningToggle->setArrowType(Qt::RightArrow);
  v->addWidget(m_reasoningToggle);
  m_reasoning = makeBrowser(this);
  m_reasoning->setStyleSheet(QStringLiteral("color: palette(mid); font-style: italic;"));
  m_reasoning->hide();
  v->addWidget(m_reasoning);
  connect(m_reasoningToggle, &QToolButton::toggled, this, [this](bool on) {
    m_reasoningToggle->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    m_reasoning->setVisible(on);
    fitHeight(m_reasoning);
  });

  m_images = new QWidget(this);
  m_imagesLayout = new QHBoxLayout(m_images);
  m_imagesLayout->setContentsMargins(0, 0, 0, 0);
  m_imagesLayout->addStretch(1);
  m_images->hide();
  v->addWidget(m_images);

  m_content = makeBrowser(this);
  v->addWidget(m_content);
  m_codeButtons = new QWidget(this);
  m_codeLayout = new QHBoxLayout(m_codeButtons);
  m_codeLayout->setContentsMargins(0, 0, 0, 0);
  m_codeButtons->hide();
  v->addWidget(m_codeButtons);

  auto* errRow = new QHBoxLayout;
  m_error = new QLabel(this);
  m_error->setWordWrap(true);
  m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_error->setStyleSheet(QStringLiteral("color: #c0392b;"));
  m_retry = new QToolButton(this);
  m_retry->setText(tr("Retry"));
  errRow->addWidget(m_error, 1);
  errRow->addWidget(m_retry, 0, Qt::AlignTop);
  v->addLayout(errRow);
  m_stats = new QLabel(this);
  m_stats->setStyleSheet(QStringLiteral("color: palette(mid);"));
  v->addWidget(m_stats);

  connect(m_copy, &QToolButton::clicked, this, [this] { emit copyRequested(m_index); });
  connect(m_edit, &QToolButton::clicked, this, [this] { emit editRequested(m_index); });
  connect(m_regenerate, &QToolButton::clicked, this, &MessageWidget::regenerateRequested);
  connect(m_retry, &QToolButton::clicked, this, &MessageWidget::retryRequested);
}

QString MessageWidget::statsText(const AnswerStats& s) {
  QStringList parts;
  if (s.ttftMs >= 0) parts << tr("first token %1 s").arg(decimal(s.ttftMs / 1000.0, 2));
  if (s.decodeTokensPerSec >= 0) parts << tr("%1 tok/s").arg(decimal(s.decodeTokensPerSec, 1));
  if (s.promptTokens >= 0 || s.completionTokens >= 0)
    parts << tr("tokens in %1 / out %2")
                 .arg(qMax<qint64>(0, s.promptTokens))
                 .arg(qMax<qint64>(0, s.completionTokens));
  if (s.cachedTokens >= 0) parts << tr("%1 prefix tokens reused").arg(s.cachedTokens);
  if (s.draftTokens > 0)
    parts << tr("%1% of %2 drafts accepted")
                 .arg(decimal(100.0 * double(s.acceptedTokens) / double(s.draftTokens), 0))
                 .arg(s.draftTokens);
  return parts.join(QStringLiteral(" · "));
}

void MessageWidget::setMessage(const ChatMessage& m, bool isLastAnswer, bool busy) {
  const bool user = m.role == ChatMessage::Role::User;
  QString header = user ? tr("You") : tr("Assistant");
  if (m.status == ChatMessage::Status::Stopped) header += QLatin1Char(' ') + tr("(stopped)");
  m_header->setText(header);
  const bool streaming = m.status == ChatMessage::Status::Streaming;
  m_copy->setVisible(!streaming && !m.content.isEmpty());
  m_edit->setVisible(user && !busy);
  m_regenerate->setVisible(!user && isLastAnswer && !busy && !streaming);

  if (m_first && user && !m.images.isEmpty()) {
    for (const QString& uri : m.images) {
      auto* l = new QLabel(m_images);
      l->setPixmap(QPixmap::fromImage(ImageAttachment::toImage(uri).scaled(
          96, 96, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
      m_imagesLayout->insertWidget(m_imagesLayout->count() - 1, l);
    }
    m_images->show();
  }
  m_first = false;

  if (m.reasoning != m_shownReasoning) {
    m_shownReasoning = m.reasoning;
    m_reasoning->setPlainText(m.reasoning);
    if (m_reasoning->isVisible()) fitHeight(m_reasoning);
  }
  m_reasoningToggle->setVisible(!m.reasoning.isEmpty());
  m_reasoningToggle->setText(streaming && m.content.isEmpty() ? tr("Thinking…") : tr("Thinking"));
  if (m.content != m_shownContent || m_shownContent.isNull()) {
    m_shownContent = m.content.isNull() ? QStringLiteral("") : m.content;
    if (user)
      m_content->setPlainText(m.content);
    else
      MarkdownRenderer::render(m_content->document(), m.content, isDark(this));
    m_content->setVisible(!m.content.isEmpty());
    fitHeight(m_content);
    if (!streaming) rebuildCodeButtons();
  }
  if (!streaming && m_codeButtons->isHidden() && !user) rebuildCodeButtons();
  const bool failed = m.status == ChatMessage::Status::Error;
  m_error->setVisible(failed);
  m_retry->setVisible(failed && isLastAnswer && !busy);
  m_error->setText(m.error);
  const QString stats = user ? QString() : statsText(m.stats);
  m_stats->setText(stats);
  m_stats->setVisible(!stats.isEmpty());
}

void MessageWidget::rebuildCodeButtons() {
  while (QLayoutItem* it = m_codeLayout->takeAt(0)) {
    delete it->widget();
    delete it;
  }
  const QList<CodeBlock> blocks = MarkdownRenderer::codeBlocks(m_content->document());
  for (const CodeBlock& b : blocks) {
    auto* btn = new QToolButton(m_codeButtons);
    btn->setText(b.language.isEmpty() ? tr("Copy code") : tr("Copy %1 code").arg(b.language));
    const QString code = b.text;
    connect(btn, &QToolButton::clicked, btn, [code] { QApplication::clipboard()->setText(code); });
    m_codeLayout->addWidget(btn);
  }
  m_codeLayout->addStretch(1);
  m_codeButtons->setVisible(!blocks.isEmpty());
}

QString MessageWidget::renderedText() const {
  return m_content->toPlainText();
}

void MessageWidget::fitHeight(QTextBrowser* b) {
  const int w = qMax(100, width() - 24);
  b->document()->setTextWidth(w);
  b->setFixedHeight(int(b->document()->size().height()) + 6);
}

void MessageWidget::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  fitHeight(m_content);
  if (m_reasoning->isVisible()) fitHeight(m_reasoning);
}

}  // namespace arc::app
