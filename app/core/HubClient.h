// The Hugging Face hub as the Models page's browser uses it: search GGUF repositories
// (GET /api/models?search=S&filter=gguf) and list a repository's files (GET
// /api/models/REPO/tree/main?recursive=true). The base URL comes from Settings (tests point it at
// a local hub); the token, when set, is sent as "Authorization: Bearer" for gated repositories.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QUrl>

class QNetworkAccessManager;
class QNetworkReply;

namespace arc::app {

struct HubRepoInfo {
  QString id;  // "owner/name"
  qint64 downloads = 0;
  qint64 likes = 0;
  bool gated = false;
};

// One file of a repository.
struct HubFileInfo {
  QString path;  // in the repository
  qint64 size = 0;
  QString sha256;  // lfs.oid: the SHA-256 the hub publishes (empty for non-LFS files)
};

// One model in a repository: a single .gguf, or every part of a split one (NAME-0000i-of-0000N).
struct HubModelFile {
  QString name;              // the first part's path
  QString quant;             // "Q4_K_M", "UD-Q2_K_XL", "BF16", ... ("" when the name has none)
  QList<HubFileInfo> parts;  // in order; one for a single file
  bool projector = false;    // mmproj-*.gguf: a vision projector, not a model
  bool complete = true;      // false when a split part is missing from the listing
  qint64 totalBytes() const;
};

class HubClient : public QObject {
  Q_OBJECT
 public:
  explicit HubClient(QObject* parent = nullptr);

  void setBaseUrl(const QUrl& url) { m_base = url; }
  QUrl baseUrl() const { return m_base; }
  void setToken(const QString& token) { m_token = token; }
  QString token() const { return m_token; }

  void search(const QString& text);
  void listFiles(const QString& repo);
  // The URL that downloads a file (the hub answers with a redirect to its storage).
  QUrl resolveUrl(const QString& repo, const QString& path) const;

  // Parsing, public for the tests.
  static QList<HubRepoInfo> parseSearch(const QByteArray& json, QString* error);
  static QList<HubModelFile> parseTree(const QByteArray& json, QString* error);
  static QString quantOf(const QString& fileName);

 signals:
  void searchFinished(const QList<arc::app::HubRepoInfo>& repos, const QString& error);
  void filesListed(const QString& repo, const QList<arc::app::HubModelFile>& files,
                   const QString& error);

 private:
  QNetworkReply* get(const QUrl& url);
  QUrl urlFor(const QString& path) const;
  QString replyError(QNetworkReply* reply) const;

  QNetworkAccessManager* m_nam;
  QUrl m_base{QStringLiteral("https://huggingface.co")};
  QString m_token;
};

}  // namespace arc::app
