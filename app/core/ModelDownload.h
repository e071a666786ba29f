// Downloads one model (a single GGUF or every part of a split one) into the model folder.
//
// Each part is written to NAME.gguf.part (the engine lists only *.gguf, so a partial file is never
// offered as a model) and resumed with "Range: bytes=N-" after an interrupted connection (a few
// automatic retries), after Pause, and in a later session. Before any byte: the free space of the
// folder must hold what is left to fetch. When a part is complete its SHA-256 is checked against
// the hub's (the tree's lfs.oid) on a worker thread; a mismatch removes the partial and fails.
// Only then is it renamed to NAME.gguf. Cancel stops and removes the partials.
#pragma once

#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QUrl>

class QNetworkAccessManager;
class QNetworkReply;

namespace arc::app {

struct DownloadPart {
  QUrl url;          // the hub's resolve URL
  QString fileName;  // in the model folder (the repository's subfolders dropped)
  qint64 size = 0;   // as the hub lists it
  QString sha256;    // lowercase hex, as the hub publishes it (empty: not verified)
};

class ModelDownload : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Running, Paused, Verifying, Done, Failed, Cancelled };
  Q_ENUM(State)

  ModelDownload(QList<DownloadPart> parts, QString folder, QObject* parent = nullptr);
  ~ModelDownload() override;

  void setToken(const QString& token) { m_token = token; }
  void setMaxRetries(int n) { m_maxRetries = n; }
  // Tests: pretend the folder has this much free space (-1: ask the file system).
  void setFreeBytesOverride(qint64 bytes) { m_freeOverride = bytes; }

  void start();  // also resumes after pause or in a new session
  void pause();
  void cancel();

  State state() const { return m_state; }
  QString error() const { return m_error; }
  qint64 totalBytes() const;
  qint64 doneBytes() const;               // on disk, all parts
  QString finalPath(int part = 0) const;  // folder/NAME.gguf
  QString partialPath(int part) const;    // folder/NAME.gguf.part
  static QString partialSuffix() { return QStringLiteral(".part"); }

  // The sliding-window rate and the time left from it (-1 while unknown).
  double bytesPerSecond() const { return m_rate; }
  qint64 secondsLeft() const;

 signals:
  void progress(qint64 done, qint64 total);
  void stateChanged(arc::app::ModelDownload::State state);
  void finished(bool ok, const QString& message);

 private:
  void startPart();
  void sendRequest(const QUrl& url);
  void onReadyRead();
  void onFinished();
  void verifyPart();
  void fail(const QString& message, bool removePartial);
  void setState(State s);
  void sampleRate();

  QList<DownloadPart> m_parts;
  QString m_folder;
  QString m_token;
  QNetworkAccessManager* m_nam;
  QPointer<QNetworkReply> m_reply;
  QFile m_file;
  int m_index = 0;           // the part being fetched
  qint64 m_requestFrom = 0;  // the offset asked with Range
  bool m_rangeChecked = false;
  int m_retries = 0;
  int m_redirects = 0;
  int m_maxRetries = 3;
  qint64 m_freeOverride = -1;
  State m_state = State::Idle;
  QString m_error;
  bool m_stopping = false;  // pause/cancel aborted the reply on purpose
  QElapsedTimer m_clock;
  QList<QPair<qint64, qint64>> m_samples;  // (ms, done bytes) over the last seconds
  double m_rate = 0;
};

}  // namespace arc::app
