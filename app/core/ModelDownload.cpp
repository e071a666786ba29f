#include "ModelDownload.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QStorageInfo>
#include <QThread>
#include <QTimer>

#include <memory>

namespace arc::app {

namespace {

QString sizeText(qint64 bytes) {
  return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

// "bytes 100-199/1000" -> 100 (-1 when unreadable).
qint64 contentRangeStart(const QByteArray& v) {
  static const QRegularExpression re(QStringLiteral("^bytes (\\d+)-"));
  const auto m = re.match(QString::fromLatin1(v));
  return m.hasMatch() ? m.captured(1).toLongLong() : -1;
}

}  // namespace

ModelDownload::ModelDownload(QList<DownloadPart> parts, QString folder, QObject* parent)
    : QObject(parent),
      m_parts(std::move(parts)),
      m_folder(std::move(folder)),
      m_nam(new QNetworkAccessManager(this)) {
  // Redirects by hand (sendRequest): the token must not follow the hub's redirect to its storage.
  m_nam->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
  m_clock.start();
}

ModelDownload::~ModelDownload() {
  m_stopping = true;
  if (m_reply) m_reply->abort();
}

QString ModelDownload::finalPath(int part) const {
  return QDir(m_folder).filePath(m_parts.value(part).fileName);
}

QString ModelDownload::partialPath(int part) const {
  return finalPath(part) + partialSuffix();
}

qint64 ModelDownload::totalBytes() const {
  qint64 n = 0;
  for (const DownloadPart& p : m_parts) n += p.size;
  return n;
}

qint64 ModelDownload::doneBytes() const {
  qint64 n = 0;
  for (int i = 0; i < m_parts.size(); ++i) {
    if (i == m_index && m_file.isOpen()) {
      n += m_file.pos();
    } else if (QFileInfo::exists(finalPath(i))) {
      n += QFileInfo(finalPath(i)).size();
    } else {
      n += QFileInfo(partialPath(i)).size();  // 0 when absent
    }
  }
  return n;
}

qint64 ModelDownload::secondsLeft() const {
  if (m_rate <= 0) return -1;
  return qint64((totalBytes() - doneBytes()) / m_rate + 0.5);
}

void ModelDownload::setState(State s) {
  if (m_state == s) return;
  m_state = s;
  emit stateChanged(s);
}

void ModelDownload::start() {
  if (m_state == State::Running || m_state == State::Verifying || m_parts.isEmpty()) return;
  m_stopping = false;
  m_error.clear();
  m_retries = 0;
  if (!QDir().mkpath(m_folder)) {
    fail(tr("cannot create the model folder %1").arg(QDir::toNativeSeparators(m_folder)), false);
    return;
  }
  // Free space first: what is left to fetch must fit, with 1% to spare for the file system.
  const qint64 needed = totalBytes() - doneBytes();
  const qint64 free =
      m_freeOverride >= 0 ? m_freeOverride : QStorageInfo(m_folder).bytesAvailable();
  if (free >= 0 && needed + needed / 100 > free) {
    fail(tr("not enough free disk space in %1: the download needs %2, %3 are free")
             .arg(QDir::toNativeSeparators(m_folder), sizeText(needed), sizeText(free)),
         false);
    return;
  }
  m_index = 0;
  m_samples.clear();
  m_rate = 0;
  setState(State::Running);
  startPart();
}

void ModelDownload::startPart() {
  if (m_stopping) return;
  // Parts already in place (an earlier session) are skipped.
  while (m_index < m_parts.size() && QFileInfo::exists(finalPath(m_index)) &&
         QFileInfo(finalPath(m_index)).size() == m_parts[m_index].size)
    ++m_index;
  if (m_index >= m_parts.size()) {
    setState(State::Done);
    emit progress(totalBytes(), totalBytes());
    emit finished(true, tr("Downloaded to %1.").arg(QDir::toNativeSeparators(finalPath(0))));
    return;
  }
  const DownloadPart& p = m_parts[m_index];
  m_file.close();
  m_file.setFileName(partialPath(m_index));
  if (!m_file.open(QIODevice::ReadWrite)) {
    fail(tr("cannot write %1: %2").arg(m_file.fileName(), m_file.errorString()), false);
    return;
  }
  qint64 offset = m_file.size();
  if (p.size > 0 && offset > p.size) {  // longer than the hub's file: start again
    m_file.resize(0);
    offset = 0;
  }
  m_file.seek(offset);
  if (p.size > 0 && offset == p.size) {
    verifyPart();
    return;
  }
  m_requestFrom = offset;
  m_redirects = 0;
  sendRequest(p.url);
}

void ModelDownload::sendRequest(const QUrl& url) {
  const QUrl origin = m_parts[m_index].url;
  QNetworkRequest req(url);
  req.setRawHeader("User-Agent", "arclight");
  req.setRawHeader("Accept-Encoding", "identity");
  if (m_requestFrom > 0)
    req.setRawHeader("Range", "bytes=" + QByteArray::number(m_requestFrom) + "-");
  const bool sameOrigin =
      url.scheme() == origin.scheme() && url.host() == origin.host() && url.port() == origin.port();
  if (!m_token.isEmpty() && sameOrigin)
    req.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
  m_rangeChecked = false;
  m_reply = m_nam->get(req);
  connect(m_reply, &QNetworkReply::readyRead, this, &ModelDownload::onReadyRead);
  connect(m_reply, &QNetworkReply::finished, this, &ModelDownload::onFinished);
}

void ModelDownload::onReadyRead() {
  if (!m_reply || m_stopping) return;
  const int status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  if (status >= 300) return;  // an error body; onFinished reports it
  if (!m_rangeChecked) {
    m_rangeChecked = true;
    if (m_requestFrom > 0 && status == 200) {
      // The server ignored Range and sends the whole file: start the part over.
      m_file.resize(0);
      m_file.seek(0);
    } else if (status == 206 &&
               contentRangeStart(m_reply->rawHeader("Content-Range")) != m_requestFrom) {
      m_stopping = true;
      m_reply->abort();
      m_stopping = false;
      fail(tr("the server answered a different range than asked; try again later"), false);
      return;
    }
  }
  const QByteArray data = m_reply->readAll();
  if (!data.isEmpty()) {
    if (m_file.write(data) != data.size()) {
      m_stopping = true;
      m_reply->abort();
      m_stopping = false;
      fail(tr("cannot write %1: %2").arg(m_file.fileName(), m_file.errorString()), false);
      return;
    }
    m_retries = 0;  // progress: a later interruption gets its retries again
    sampleRate();
    emit progress(doneBytes(), totalBytes());
  }
}

void ModelDownload::sampleRate() {
  const qint64 now = m_clock.elapsed();
  m_samples.append({now, doneBytes()});
  while (m_samples.size() > 2 && now - m_samples.first().first > 5000) m_samples.removeFirst();
  const auto& a = m_samples.first();
  const auto& b = m_samples.last();
  if (b.first - a.first >= 200) m_rate = double(b.second - a.second) * 1000.0 / (b.first - a.first);
}

void ModelDownload::onFinished() {
  QNetworkReply* reply = m_reply;
  if (!reply) return;
  reply->deleteLater();
  m_reply = nullptr;
  if (m_stopping) return;  // paused or cancelled: already handled
  if (reply->bytesAvailable() > 0) {
    m_reply = reply;
    onReadyRead();
    m_reply = nullptr;
    if (m_state != State::Running) return;
  }
  m_file.flush();
  const DownloadPart& p = m_parts[m_index];
  const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
    const QUrl target = reply->url().resolved(QUrl::fromEncoded(reply->rawHeader("Location")));
    if (++m_redirects > 10 || !target.isValid() ||
        (target.scheme() != QStringLiteral("https") && target.scheme() != QStringLiteral("http"))) {
      fail(tr("the hub's redirects for %1 lead nowhere usable").arg(p.fileName), false);
      return;
    }
    sendRequest(target);
    return;
  }
  if (status == 401 || status == 403) {
    fail(tr("the hub refused the download (HTTP %1): the repository is gated; accept its terms "
            "on the hub and set a token in Settings")
             .arg(status),
         false);
    return;
  }
  if (status >= 400 && status != 416) {
    fail(tr("the hub answered HTTP %1 for %2").arg(status).arg(p.fileName), false);
    return;
  }
  if (p.size > 0 && m_file.size() < p.size) {
    // Interrupted: resume from what is on disk.
    if (m_retries < m_maxRetries) {
      ++m_retries;
      QTimer::singleShot(250 * m_retries, this, [this] {
        if (m_state == State::Running) startPart();
      });
      return;
    }
    fail(tr("the download of %1 was interrupted (%2); Resume continues from %3")
             .arg(p.fileName, reply->errorString(), sizeText(m_file.size())),
         false);
    return;
  }
  verifyPart();
}

void ModelDownload::verifyPart() {
  m_file.close();
  setState(State::Verifying);
  const QString path = partialPath(m_index);
  const QString expected = m_parts[m_index].sha256.toLower();
  auto digest = std::make_shared<QString>();
  QThread* worker = QThread::create([path, digest] {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return;
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(&f);
    *digest = QString::fromLatin1(h.result().toHex());
  });
  connect(worker, &QThread::finished, worker, &QObject::deleteLater);
  connect(worker, &QThread::finished, this, [this, path, expected, digest] {
    if (m_state != State::Verifying) return;  // cancelled meanwhile
    const DownloadPart& p = m_parts[m_index];
    if (!expected.isEmpty() && *digest != expected) {
      QFile::remove(path);
      fail(tr("%1 is corrupt: its SHA-256 is %2 but the hub publishes %3; the partial file was "
              "removed, download it again")
               .arg(p.fileName, digest->isEmpty() ? tr("unreadable") : *digest, expected),
           false);
      return;
    }
    QFile::remove(finalPath(m_index));
    if (!QFile::rename(path, finalPath(m_index))) {
      fail(tr("cannot rename %1 to %2").arg(path, finalPath(m_index)), false);
      return;
    }
    ++m_index;
    setState(State::Running);
    startPart();
  });
  worker->start();
}

void ModelDownload::fail(const QString& message, bool removePartial) {
  m_file.close();
  if (removePartial) QFile::remove(partialPath(m_index));
  m_error = message;
  setState(State::Failed);
  emit finished(false, message);
}

void ModelDownload::pause() {
  if (m_state != State::Running) return;
  m_stopping = true;
  if (m_reply) m_reply->abort();
  m_file.close();
  m_rate = 0;
  setState(State::Paused);
}

void ModelDownload::cancel() {
  if (m_state == State::Done || m_state == State::Cancelled) return;
  m_stopping = true;
  if (m_reply) m_reply->abort();
  m_file.close();
  for (int i = 0; i < m_parts.size(); ++i) QFile::remove(partialPath(i));
  m_rate = 0;
  setState(State::Cancelled);
  emit finished(false, tr("Download cancelled; the partial files were removed."));
}

}  // namespace arc::app
