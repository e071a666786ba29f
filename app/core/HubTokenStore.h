// The Hugging Face token for gated repositories, kept in the desktop's keyring (Secret Service,
// KWallet: Qt keychain) and never in the settings file. Where no keyring service runs (CI, a bare
// X session, offscreen) the store says so and keeps the token for this session only.
#pragma once

#include <QObject>
#include <QString>

namespace arc::app {

class HubTokenStore : public QObject {
  Q_OBJECT
 public:
  explicit HubTokenStore(QObject* parent = nullptr,
                         QString service = QStringLiteral("Arclight Hugging Face"));

  QString token() const { return m_token; }
  bool persistent() const { return m_persistent; }  // in the keyring, not only this session
  QString note() const { return m_note; }           // why session-only ("" when persistent)

  void load();                       // reads the keyring; emits changed()
  void store(const QString& token);  // writes (empty: deletes); emits changed()

 signals:
  void changed();

 private:
  void keyringFailed(const QString& why);

  QString m_service;
  QString m_token;
  bool m_persistent = false;
  QString m_note;
};

}  // namespace arc::app
