#include "ImageAttachment.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QMimeDatabase>

namespace arc::app {

QString ImageAttachment::fromFile(const QString& path, QString* error) {
  auto fail = [error](const QString& m) {
    if (error) *error = m;
    return QString();
  };
  const QFileInfo fi(path);
  if (fi.size() > kMaxBytes)
    return fail(QCoreApplication::translate("ImageAttachment", "%1 is larger than %2 MiB.")
                    .arg(fi.fileName())
                    .arg(kMaxBytes >> 20));
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly))
    return fail(QCoreApplication::translate("ImageAttachment", "Cannot read %1: %2")
                    .arg(fi.fileName(), f.errorString()));
  const QByteArray bytes = f.readAll();
  const QMimeType mime = QMimeDatabase().mimeTypeForFileNameAndData(path, bytes);
  const QImage image = QImage::fromData(bytes);
  if (!mime.name().startsWith(QLatin1String("image/")) || image.isNull())
    return fail(
        QCoreApplication::translate("ImageAttachment", "%1 is not an image.").arg(fi.fileName()));
  // The engine decodes PNG, JPEG and WebP only; anything else Qt can read (GIF, BMP, TIFF...)
  // is sent as PNG so the user never sees a refusal for a picture the app showed them.
  static const QStringList kEngineFormats = {
      QStringLiteral("image/png"), QStringLiteral("image/jpeg"), QStringLiteral("image/webp")};
  if (!kEngineFormats.contains(mime.name())) return fromImage(image);
  return QStringLiteral("data:%1;base64,%2")
      .arg(mime.name(), QString::fromLatin1(bytes.toBase64()));
}

QString ImageAttachment::fromImage(const QImage& image) {
  QByteArray bytes;
  QBuffer buf(&bytes);
  buf.open(QIODevice::WriteOnly);
  image.save(&buf, "PNG");
  return QStringLiteral("data:image/png;base64,") + QString::fromLatin1(bytes.toBase64());
}

QImage ImageAttachment::toImage(const QString& dataUri) {
  const qsizetype comma = dataUri.indexOf(QLatin1Char(','));
  if (!dataUri.startsWith(QLatin1String("data:")) || comma < 0) return {};
  return QImage::fromData(QByteArray::fromBase64(dataUri.mid(comma + 1).toLatin1()));
}

}  // namespace arc::app
