// The chat input: Enter sends, Shift+Enter makes a new line, Esc stops; pasted or dropped images
// become attachments instead of text.
#pragma once

#include <QPlainTextEdit>

namespace arc::app {

class ChatComposer : public QPlainTextEdit {
  Q_OBJECT
 public:
  explicit ChatComposer(QWidget* parent = nullptr);
  void setImagesAccepted(bool on) { m_imagesAccepted = on; }

 signals:
  void sendRequested();
  void stopRequested();
  void imagePasted(const QImage& image);
  void filesDropped(const QStringList& paths);

 protected:
  void keyPressEvent(QKeyEvent* e) override;
  bool canInsertFromMimeData(const QMimeData* source) const override;
  void insertFromMimeData(const QMimeData* source) override;

 private:
  bool m_imagesAccepted = false;
};

}  // namespace arc::app
