// Images attached to a chat message travel as data URIs (data:image/png;base64,...) in the
// OpenAI image_url parts; these helpers make them from files or pasted images and back.
#pragma once

#include <QImage>
#include <QString>

namespace arc::app {

class ImageAttachment {
 public:
  // Files larger than this are refused (the engine would refuse them too).
  static constexpr qint64 kMaxBytes = 20LL * 1024 * 1024;
  // The file as a data URI; empty with `error` set when it is not a readable image.
  static QString fromFile(const QString& path, QString* error);
  // A pasted/dropped image, encoded as PNG.
  static QString fromImage(const QImage& image);
  static QImage toImage(const QString& dataUri);
};

}  // namespace arc::app
