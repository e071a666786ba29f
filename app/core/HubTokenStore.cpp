#include "HubTokenStore.h"

#include <qt6keychain/keychain.h>

namespace arc::app {

namespace {
const QString kKey = QStringLiteral("token");
}

HubTokenStore::HubTokenStore(QObject* parent, QString service)
    : QObject(parent), m_service(std::move(service)) {}

void HubTokenStore::keyringFailed(const QString& why) {
  m_persistent = false;
  m_note =
      tr("No keyring service is available (%1): the token is kept for this session only.").arg(why);
}

void HubTokenStore::load() {
  auto* job = new QKeychain::ReadPasswordJob(m_service, this);
  job->setAutoDelete(true);
  job->setKey(kKey);
  connect(job, &QKeychain::Job::finished, this, [this, job] {
    if (job->error() == QKeychain::NoError) {
      m_token = job->textData();
      m_persistent = true;
      m_note.clear();
    } else if (job->error() == QKeychain::EntryNotFound) {
      m_persistent = true;  // the keyring works; nothing stored yet
      m_note.clear();
    } else {
      keyringFailed(job->errorString());
    }
    emit changed();
  });
  job->start();
}

void HubTokenStore::store(const QString& token) {
  m_token = token;  // the session copy first: usable whatever the keyring says
  QKeychain::Job* job = nullptr;
  if (token.isEmpty()) {
    auto* del = new QKeychain::DeletePasswordJob(m_service, this);
    del->setKey(kKey);
    job = del;
  } else {
    auto* write = new QKeychain::WritePasswordJob(m_service, this);
    write->setKey(kKey);
    write->setTextData(token);
    job = write;
  }
  job->setAutoDelete(true);
  connect(job, &QKeychain::Job::finished, this, [this, job] {
    if (job->error() == QKeychain::NoError || job->error() == QKeychain::EntryNotFound) {
      m_persistent = true;
      m_note.clear();
    } else {
      keyringFailed(job->errorString());
    }
    emit changed();
  });
  job->start();
}

}  // namespace arc::app
