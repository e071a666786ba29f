#include "HubClient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QUrlQuery>

namespace arc::app {

namespace {

// NAME-00002-of-00005.gguf -> ("NAME", 2, 5).
bool splitPart(const QString& path, QString* prefix, int* no, int* count) {
  static const QRegularExpression re(QStringLiteral("^(.*)-(\\d{5})-of-(\\d{5})\\.gguf$"),
                                     QRegularExpression::CaseInsensitiveOption);
  const auto m = re.match(path);
  if (!m.hasMatch()) return false;
  *prefix = m.captured(1);
  *no = m.captured(2).toInt();
  *count = m.captured(3).toInt();
  return *no >= 1 && *count >= 1 && *no <= *count;
}

}  // namespace

qint64 HubModelFile::totalBytes() const {
  qint64 n = 0;
  for (const HubFileInfo& p : parts) n += p.size;
  return n;
}

HubClient::HubClient(QObject* parent) : QObject(parent), m_nam(new QNetworkAccessManager(this)) {
  m_nam->setRedirectPolicy(QNetworkRequest::NoLessSafeRedirectPolicy);
}

QNetworkReply* HubClient::get(const QUrl& url) {
  QNetworkRequest req(url);
  req.setRawHeader("User-Agent", "arclight");
  if (!m_token.isEmpty()) req.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
  req.setTransferTimeout(30000);
  return m_nam->get(req);
}

QString HubClient::replyError(QNetworkReply* reply) const {
  const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  if (status == 401 || status == 403)
    return tr("the hub refused access (HTTP %1): the repository is gated or private; accept its "
              "terms on the hub and set a token in Settings")
        .arg(status);
  if (status == 404) return tr("not found on the hub (HTTP 404)");
  if (status >= 400) return tr("the hub answered HTTP %1").arg(status);
  return tr("cannot reach %1: %2").arg(m_base.toString(), reply->errorString());
}

// A path under the base URL (a mirror may live below a path: https://host/hf).
QUrl HubClient::urlFor(const QString& path) const {
  QUrl u = m_base;
  QString base = u.path();
  while (base.endsWith(QLatin1Char('/'))) base.chop(1);
  u.setPath(base + path);
  return u;
}

QUrl HubClient::resolveUrl(const QString& repo, const QString& path) const {
  return urlFor(QLatin1Char('/') + repo + QStringLiteral("/resolve/main/") + path);
}

void HubClient::search(const QString& text) {
  QUrl u = urlFor(QStringLiteral("/api/models"));
  QUrlQuery q;
  q.addQueryItem(QStringLiteral("search"), text);
  q.addQueryItem(QStringLiteral("filter"), QStringLiteral("gguf"));
  q.addQueryItem(QStringLiteral("sort"), QStringLiteral("downloads"));
  q.addQueryItem(QStringLiteral("limit"), QStringLiteral("50"));
  u.setQuery(q);
  QNetworkReply* reply = get(u);
  connect(reply, &QNetworkReply::finished, this, [this, reply] {
    reply->deleteLater();
    QString error;
    QList<HubRepoInfo> repos;
    if (reply->error() != QNetworkReply::NoError)
      error = replyError(reply);
    else
      repos = parseSearch(reply->readAll(), &error);
    emit searchFinished(repos, error);
  });
}

void HubClient::listFiles(const QString& repo) {
  QUrl u = urlFor(QStringLiteral("/api/models/") + repo + QStringLiteral("/tree/main"));
  u.setQuery(QStringLiteral("recursive=true"));
  QNetworkReply* reply = get(u);
  connect(reply, &QNetworkReply::finished, this, [this, reply, repo] {
    reply->deleteLater();
    QString error;
    QList<HubModelFile> files;
    if (reply->error() != QNetworkReply::NoError)
      error = replyError(reply);
    else
      files = parseTree(reply->readAll(), &error);
    emit filesListed(repo, files, error);
  });
}

QList<HubRepoInfo> HubClient::parseSearch(const QByteArray& json, QString* error) {
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
  if (!doc.isArray()) {
    if (error) *error = tr("the hub's answer is not a list of models (%1)").arg(pe.errorString());
    return {};
  }
  QList<HubRepoInfo> out;
  for (const QJsonValue& v : doc.array()) {
    const QJsonObject o = v.toObject();
    HubRepoInfo r;
    r.id = o.value(QStringLiteral("id")).toString(o.value(QStringLiteral("modelId")).toString());
    if (r.id.isEmpty()) continue;
    r.downloads = o.value(QStringLiteral("downloads")).toInteger();
    r.likes = o.value(QStringLiteral("likes")).toInteger();
    const QJsonValue gated = o.value(QStringLiteral("gated"));
    r.gated = gated.isString() || gated.toBool();
    out << r;
  }
  return out;
}

QString HubClient::quantOf(const QString& fileName) {
  static const QRegularExpression re(
      QStringLiteral("(?:^|[-_.])((?:UD-)?(?:I?Q\\d_[A-Z0-9]+(?:_[A-Z]+)?|BF16|F16|F32|"
                     "MXFP4(?:_MOE)?))(?=[-_.])"),
      QRegularExpression::CaseInsensitiveOption);
  QString base = fileName.section(QLatin1Char('/'), -1);
  QRegularExpressionMatch last;
  auto it = re.globalMatch(base);
  while (it.hasNext()) last = it.next();
  return last.hasMatch() ? last.captured(1).toUpper() : QString();
}

QList<HubModelFile> HubClient::parseTree(const QByteArray& json, QString* error) {
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
  if (!doc.isArray()) {
    if (error) *error = tr("the hub's answer is not a file list (%1)").arg(pe.errorString());
    return {};
  }
  QList<HubModelFile> out;
  QMap<QString, int> splitIndex;  // prefix -> index in out
  for (const QJsonValue& v : doc.array()) {
    const QJsonObject o = v.toObject();
    if (o.value(QStringLiteral("type")).toString() != QStringLiteral("file")) continue;
    HubFileInfo f;
    f.path = o.value(QStringLiteral("path")).toString();
    if (!f.path.endsWith(QStringLiteral(".gguf"), Qt::CaseInsensitive)) continue;
    const QJsonObject lfs = o.value(QStringLiteral("lfs")).toObject();
    f.size = lfs.isEmpty() ? o.value(QStringLiteral("size")).toInteger()
                           : lfs.value(QStringLiteral("size")).toInteger();
    f.sha256 = lfs.value(QStringLiteral("oid")).toString().toLower();
    QString prefix;
    int no = 0, count = 0;
    if (splitPart(f.path, &prefix, &no, &count) && count > 1) {
      auto it = splitIndex.find(prefix);
      if (it == splitIndex.end()) {
        HubModelFile m;
        m.quant = quantOf(prefix + QStringLiteral(".gguf"));
        for (int i = 0; i < count; ++i) m.parts << HubFileInfo{};
        it = splitIndex.insert(prefix, int(out.size()));
        out << m;
      }
      HubModelFile& m = out[*it];
      if (m.parts.size() == count) m.parts[no - 1] = f;
      continue;
    }
    HubModelFile m;
    m.name = f.path;
    m.quant = quantOf(f.path);
    m.projector = f.path.section(QLatin1Char('/'), -1)
                      .startsWith(QStringLiteral("mmproj"), Qt::CaseInsensitive);
    m.parts << f;
    out << m;
  }
  for (HubModelFile& m : out) {
    for (const HubFileInfo& p : m.parts) m.complete = m.complete && !p.path.isEmpty();
    if (m.name.isEmpty()) m.name = m.parts.first().path;
    if (m.name.isEmpty()) {
      for (const HubFileInfo& p : m.parts)
        if (!p.path.isEmpty()) m.name = p.path;
    }
  }
  return out;
}

}  // namespace arc::app
