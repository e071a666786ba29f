#include "ChatComposer.h"

#include <QImage>
#include <QKeyEvent>
#include <QMimeData>

namespace arc::app {

ChatComposer::ChatComposer(QWidget* parent) : QPlainTextEdit(parent) {
  setPlaceholderText(tr("Message (Enter sends, Shift+Enter new line, Esc stops)"));
  setTabChangesFocus(true);
}

void ChatComposer::keyPressEvent(QKeyEvent* e) {
  if ((e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter) &&
      !(e->modifiers() & Qt::ShiftModifier)) {
    emit sendRequested();
    return;
  }
  if (e->key() == Qt::Key_Escape) {
    emit stopRequested();
    return;
  }
  QPlainTextEdit::keyPressEvent(e);
}

bool ChatComposer::canInsertFromMimeData(const QMimeData* source) const {
  return (m_imagesAccepted && (source->hasImage() || source->hasUrls())) ||
         QPlainTextEdit::canInsertFromMimeData(source);
}

void ChatComposer::insertFromMimeData(const QMimeData* source) {
  if (m_imagesAccepted && source->hasImage()) {
    emit imagePasted(qvariant_cast<QImage>(source->imageData()));
    return;
  }
  if (m_imagesAccepted && source->hasUrls()) {
    QStringList paths;
    for (const QUrl& u : source->urls())
      if (u.isLocalFile()) paths << u.toLocalFile();
    if (!paths.isEmpty()) {
      emit filesDropped(paths);
      return;
    }
  }
  QPlainTextEdit::insertFromMimeData(source);
}

}  // namespace arc::app
