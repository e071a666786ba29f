// What a load asks the engine for besides the file: context per sequence, KV cache type,
// parallel sequences and the memory kept free. Remembered per model file in a JSON file of the
// app's data folder, so the next load of the same file starts from the user's last choice.
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QString>

namespace arc::app {

struct LoadSettings {
  qint64 contextTokens = 0;  // per sequence; 0: the engine's default
  QString kvType;            // "f16" or "f32"; empty: the engine's default
  int parallel = 0;          // sequences served at once; 0: the engine's default
  double reserveGiB = -1;    // kept free per box; negative: the engine's default

  // The body of POST /engine/load for `modelPath` (only the settings that are set).
  QJsonObject toLoadRequest(const QString& modelPath) const;
  QJsonObject toJson() const;
  static LoadSettings fromJson(const QJsonObject& o);
  // The KV cache types the engine keeps (the fit planner knows more, e.g. q8_0, for planning).
  static bool engineKvType(const QString& type);
  bool operator==(const LoadSettings&) const = default;
};

class LoadSettingsStore {
 public:
  explicit LoadSettingsStore(QString fileName);
  static QString defaultFileName();  // <app data>/load-settings.json

  // The settings last used for `modelPath`, if any.
  bool find(const QString& modelPath, LoadSettings* out) const;
  // Remembers them and saves the file (whole or not at all).
  bool remember(const QString& modelPath, const LoadSettings& s, QString* error = nullptr);

 private:
  QString m_fileName;
  QHash<QString, LoadSettings> m_byPath;  // absolute file path -> settings
};

}  // namespace arc::app
