#include "LoadSettings.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>
#include <QStandardPaths>

namespace arc::app {

QJsonObject LoadSettings::toLoadRequest(const QString& modelPath) const {
  QJsonObject o{{QStringLiteral("model"), modelPath}};
  if (contextTokens > 0) o.insert(QStringLiteral("ctx_size"), contextTokens);
  if (engineKvType(kvType)) o.insert(QStringLiteral("kv_type"), kvType);
  if (parallel > 0) o.insert(QStringLiteral("parallel"), parallel);
  if (reserveGiB >= 0) o.insert(QStringLiteral("reserve_gib"), reserveGiB);
  return o;
}

QJsonObject LoadSettings::toJson() const {
  return {{QStringLiteral("ctx_size"), contextTokens},
          {QStringLiteral("kv_type"), kvType},
          {QStringLiteral("parallel"), parallel},
          {QStringLiteral("reserve_gib"), reserveGiB}};
}

LoadSettings LoadSettings::fromJson(const QJsonObject& o) {
  LoadSettings s;
  s.contextTokens = qMax<qint64>(0, o.value(QLatin1String("ctx_size")).toInteger());
  s.kvType = o.value(QLatin1String("kv_type")).toString();
  s.parallel = qMax(0, o.value(QLatin1String("parallel")).toInt());
  s.reserveGiB = o.value(QLatin1String("reserve_gib")).toDouble(-1);
  return s;
}

bool LoadSettings::engineKvType(const QString& type) {
  return type == QLatin1String("f16") || type == QLatin1String("f32");
}

LoadSettingsStore::LoadSettingsStore(QString fileName) : m_fileName(std::move(fileName)) {
  QFile f(m_fileName);
  if (!f.open(QIODevice::ReadOnly)) return;  // none yet
  const QJsonObject models =
      QJsonDocument::fromJson(f.readAll()).object().value(QLatin1String("models")).toObject();
  for (auto it = models.begin(); it != models.end(); ++it)
    m_byPath.insert(it.key(), LoadSettings::fromJson(it.value().toObject()));
}

QString LoadSettingsStore::defaultFileName() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
      .filePath(QStringLiteral("load-settings.json"));
}

bool LoadSettingsStore::find(const QString& modelPath, LoadSettings* out) const {
  auto it = m_byPath.constFind(QFileInfo(modelPath).absoluteFilePath());
  if (it == m_byPath.constEnd()) return false;
  if (out) *out = *it;
  return true;
}

bool LoadSettingsStore::remember(const QString& modelPath, const LoadSettings& s, QString* error) {
  m_byPath.insert(QFileInfo(modelPath).absoluteFilePath(), s);
  QJsonObject models;
  for (auto it = m_byPath.constBegin(); it != m_byPath.constEnd(); ++it)
    models.insert(it.key(), it.value().toJson());
  QDir().mkpath(QFileInfo(m_fileName).absolutePath());
  QSaveFile f(m_fileName);
  if (!f.open(QIODevice::WriteOnly) ||
      f.write(QJsonDocument(QJsonObject{{QStringLiteral("models"), models}}).toJson()) < 0 ||
      !f.commit()) {
    if (error) *error = f.errorString();
    return false;
  }
  return true;
}

}  // namespace arc::app
