#include "SeedTitles.h"

#include <QRegularExpression>

namespace arc::app {

QString withSeedTitles(const QString& source, const QHash<QString, QString>& titles) {
  static const QRegularExpression file(QStringLiteral("\\b\\d{3}_[0-9a-f]{16}\\.txt\\b"));
  QString out;
  qsizetype last = 0;
  auto it = file.globalMatch(source);
  while (it.hasNext()) {
    const QRegularExpressionMatch m = it.next();
    out += source.mid(last, m.capturedStart() - last);
    const QString title = titles.value(m.captured());
    out += title.isEmpty() ? m.captured() : QStringLiteral("“%1”").arg(title);
    last = m.capturedEnd();
  }
  return out + source.mid(last);
}

}  // namespace arc::app
