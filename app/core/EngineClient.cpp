#include "EngineClient.h"

#include <QJsonDocument>
#include <QNetworkReply>

namespace arc::app {

namespace {
// An event stream line longer than this is a broken server, not data worth keeping.
constexpr qsizetype kMaxPendingEventBytes = 16 * 1024 * 1024;
}  // namespace

EngineClient::EngineClient(QObject* parent) : QObject(parent) {
  m_reconnectTimer.setSingleShot(true);
  connect(&m_reconnectTimer, &QTimer::timeout, this, [this] {
    if (m_wanted) fetchHealth();
  });
  qRegisterMetaType<arc::app::EngineState>();
}

EngineClient::~EngineClient() {
  m_wanted = false;
  if (m_events) m_events->abort();
}

QString EngineClient::describeRoute(const QString& route) {
  // Users see what they asked for, never the HTTP route behind it.
  const QString r = route.section(QLatin1Char('?'), 0, 0);
  if (r == QLatin1String("/engine/load")) return tr("loading the model");
  if (r == QLatin1String("/engine/load/cancel")) return tr("cancelling the load");
  if (r == QLatin1String("/engine/unload")) return tr("unloading the model");
  if (r == QLatin1String("/health") || r == QLatin1String("/engine/status"))
    return tr("asking the engine for its state");
  if (r == QLatin1String("/v1/models")) return tr("asking for the loaded model");
  if (r == QLatin1String("/engine/local-models")) return tr("listing the model files");
  if (r == QLatin1String("/engine/fit")) return tr("planning the fit");
  if (r == QLatin1String("/engine/cluster")) return tr("reading the boxes of the cluster");
  if (r == QLatin1String("/engine/link-test")) return tr("the link test");
  if (r == QLatin1String("/engine/log")) return tr("reading the engine log");
  return tr("a request to the engine");
}

void EngineClient::setBaseUrl(const QUrl& url) {
  m_baseUrl = url;
}

void EngineClient::setBackoff(int initialMs, int maxMs) {
  m_initialBackoffMs = qMax(1, initialMs);
  m_maxBackoffMs = qMax(m_initialBackoffMs, maxMs);
  m_backoffMs = m_initialBackoffMs;
}

void EngineClient::connectToEngine() {
  m_wanted = true;
  m_backoffMs = m_initialBackoffMs;
  m_reconnectTimer.stop();
  if (m_events) m_events->abort();
  m_parser.reset();
  setConnection(Connection::Connecting);
  fetchHealth();
}

void EngineClient::disconnectFromEngine() {
  m_wanted = false;
  m_reconnectTimer.stop();
  if (m_events) m_events->abort();
  setConnection(Connection::Offline);
}

void EngineClient::setConnection(Connection c) {
  if (c == m_connection) return;
  m_connection = c;
  emit connectionChanged(c);
}

QNetworkRequest EngineClient::makeRequest(const QString& route) const {
  QUrl url = m_baseUrl;
  QString path = url.path();
  if (path.endsWith(QLatin1Char('/'))) path.chop(1);
  // A route may carry a query ("/engine/log?lines=500"): it goes in the query, not the path.
  const qsizetype q = route.indexOf(QLatin1Char('?'));
  url.setPath(path + (q < 0 ? route : route.left(q)));
  if (q >= 0) url.setQuery(route.mid(q + 1));
  QNetworkRequest req(url);
  if (!m_apiKey.isEmpty()) req.setRawHeader("Authorization", "Bearer " + m_apiKey.toUtf8());
  req.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
  return req;
}

QNetworkReply* EngineClient::get(const QString& route) {
  QNetworkRequest req = makeRequest(route);
  req.setTransferTimeout(m_timeoutMs);
  return m_nam.get(req);
}

QNetworkReply* EngineClient::post(const QString& route, const QJsonObject& body) {
  QNetworkRequest req = makeRequest(route);
  req.setTransferTimeout(m_timeoutMs);
  return m_nam.post(req, QJsonDocument(body).toJson(QJsonDocument::Compact));
}

void EngineClient::handleJson(QNetworkReply* reply, const QString& route,
                              std::function<void(const QJsonDocument&)> onJson,
                              std::function<void(int, const QJsonDocument&)> onHttpError) {
  connect(reply, &QNetworkReply::finished, this, [=, this] {
    reply->deleteLater();
    const int code = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray body = reply->readAll();
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &perr);
    if (code == 0) {  // no HTTP answer at all: refused, timed out, DNS...
      emit requestFailed(
          route,
          tr("engine not reachable at %1: %2").arg(m_baseUrl.toString(), reply->errorString()));
      return;
    }
    if (code < 200 || code >= 300) {
      if (onHttpError) {
        onHttpError(code, doc);
        return;
      }
      QString msg = EngineError::fromJson(doc.object()).message;
      if (msg.isEmpty()) msg = QString::fromUtf8(body.left(200)).trimmed();
      if (code == 401 || code == 403)
        msg = tr("the engine refused the API key (HTTP %1); check it in Settings").arg(code);
      emit requestFailed(route,
                         tr("%1 failed: %2 (HTTP %3)").arg(describeRoute(route), msg).arg(code));
      return;
    }
    if (perr.error != QJsonParseError::NoError) {
      emit requestFailed(route, tr("%1 failed: the engine's answer was not readable (%2)")
                                    .arg(describeRoute(route), perr.errorString()));
      return;
    }
    onJson(doc);
  });
}

void EngineClient::fetchHealth() {
  const QString route = QStringLiteral("/health");
  QNetworkReply* reply = get(route);
  connect(reply, &QNetworkReply::finished, this, [this, reply] {
    reply->deleteLater();
    const int code = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (code < 200 || code >= 300) {
      if (m_wanted) {
        if (m_connection == Connection::Connecting)
          emit requestFailed(QStringLiteral("/health"),
                             tr("engine not reachable at %1: %2")
                                 .arg(m_baseUrl.toString(),
                                      code ? tr("HTTP %1").arg(code) : reply->errorString()));
        setConnection(Connection::Reconnecting);
        scheduleReconnect();
      }
      return;
    }
    const QJsonObject o = QJsonDocument::fromJson(reply->readAll()).object();
    const EngineState st = engineStateFromString(o.value(QLatin1String("state")).toString());
    emit healthReceived(st);
    if (m_wanted && !m_events) {
      fetchStatus();
      openEventStream();
    }
  });
}

void EngineClient::fetchStatus() {
  handleJson(get(QStringLiteral("/engine/status")), QStringLiteral("/engine/status"),
             [this](const QJsonDocument& doc) {
               m_status = EngineStatus::fromJson(doc.object());
               emit statusReceived(m_status);
             });
}

void EngineClient::fetchModels() {
  handleJson(get(QStringLiteral("/v1/models")), QStringLiteral("/v1/models"),
             [this](const QJsonDocument& doc) {
               emit modelsReceived(doc.object().value(QLatin1String("data")).toArray());
             });
}

void EngineClient::fetchLocalModels() {
  handleJson(
      get(QStringLiteral("/engine/local-models")), QStringLiteral("/engine/local-models"),
      [this](const QJsonDocument& doc) {
        emit localModelsReceived(
            doc.isArray() ? doc.array() : doc.object().value(QLatin1String("models")).toArray());
      });
}

void EngineClient::loadModel(const QString& path, qint64 contextSize) {
  LoadSettings s;
  s.contextTokens = contextSize;
  loadModel(path, s);
}

void EngineClient::loadModel(const QString& path, const LoadSettings& settings) {
  const QJsonObject body = settings.toLoadRequest(path);
  handleJson(
      post(QStringLiteral("/engine/load"), body), QStringLiteral("/engine/load"),
      [this](const QJsonDocument&) { emit loadAccepted(); },
      [this](int code, const QJsonDocument& doc) {
        EngineError e = EngineError::fromJson(doc.object());
        if (e.message.isEmpty()) e.message = tr("the engine refused the load (HTTP %1)").arg(code);
        emit loadRefused(e);
      });
}

void EngineClient::cancelLoad() {
  const QString route = QStringLiteral("/engine/load/cancel");
  // 409-style refusals (nothing loading any more) need no message: the load just finished.
  handleJson(
      post(route, {}), route, [](const QJsonDocument&) {}, [](int, const QJsonDocument&) {});
}

void EngineClient::fetchLog(int lines) {
  const QString route = QStringLiteral("/engine/log?lines=%1").arg(lines);
  handleJson(get(route), QStringLiteral("/engine/log"), [this](const QJsonDocument& doc) {
    QStringList out;
    for (const QJsonValue& v : doc.object().value(QLatin1String("lines")).toArray())
      out << v.toString();
    emit logReceived(out);
  });
}

void EngineClient::unloadModel() {
  handleJson(post(QStringLiteral("/engine/unload"), {}), QStringLiteral("/engine/unload"),
             [this](const QJsonDocument&) { emit unloadDone(); });
}

void EngineClient::requestFit(const QJsonObject& request) {
  handleJson(post(QStringLiteral("/engine/fit"), request), QStringLiteral("/engine/fit"),
             [this](const QJsonDocument& doc) { emit fitReceived(doc.object()); });
}

void EngineClient::fetchCluster() {
  const QString route = QStringLiteral("/engine/cluster");
  handleJson(
      get(route), route, [this](const QJsonDocument& doc) { emit clusterReceived(doc.object()); },
      [this, route](int code, const QJsonDocument& doc) {
        QString msg = EngineError::fromJson(doc.object()).message;
        if (code == 401 || code == 403)
          msg = tr("the engine refused the API key (HTTP %1); check it in Settings").arg(code);
        if (msg.isEmpty()) msg = tr("%1 failed (HTTP %2)").arg(describeRoute(route)).arg(code);
        emit clusterFailed(msg);
      });
}

void EngineClient::runLinkTest(const QJsonObject& request) {
  const QString route = QStringLiteral("/engine/link-test");
  QNetworkRequest req = makeRequest(route);
  // Large sizes over a slow link take a while: not the usual request timeout.
  req.setTransferTimeout(qMax(m_timeoutMs, 120000));
  QNetworkReply* reply = m_nam.post(req, QJsonDocument(request).toJson(QJsonDocument::Compact));
  // No answer at all arrives as requestFailed; say it to the link test's watchers too.
  connect(this, &EngineClient::requestFailed, reply,
          [this, route](const QString& r, const QString& m) {
            if (r == route) emit linkTestFailed(m);
          });
  handleJson(
      reply, route, [this](const QJsonDocument& doc) { emit linkTestFinished(doc.object()); },
      [this, route](int code, const QJsonDocument& doc) {
        QString msg = EngineError::fromJson(doc.object()).message;
        if (code == 401 || code == 403)
          msg = tr("the engine refused the API key (HTTP %1); check it in Settings").arg(code);
        if (msg.isEmpty()) msg = tr("%1 failed (HTTP %2)").arg(describeRoute(route)).arg(code);
        emit linkTestFailed(msg);
      });
}

void EngineClient::openEventStream() {
  QNetworkRequest req = makeRequest(QStringLiteral("/engine/events"));
  req.setRawHeader("Accept", "text/event-stream");
  req.setAttribute(QNetworkRequest::CacheLoadControlAttribute, QNetworkRequest::AlwaysNetwork);
  if (!m_parser.lastEventId().isEmpty())
    req.setRawHeader("Last-Event-ID", m_parser.lastEventId().toUtf8());
  m_parser.reset();
  m_events = m_nam.get(req);
  connect(m_events, &QNetworkReply::metaDataChanged, this, [this] {
    const int code = m_events->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (code >= 200 && code < 300) {
      m_backoffMs = m_initialBackoffMs;  // a good connection resets the backoff
      setConnection(Connection::Connected);
      emit eventStreamOpened();
    }
  });
  connect(m_events, &QNetworkReply::readyRead, this, &EngineClient::onEventData);
  connect(m_events, &QNetworkReply::finished, this, &EngineClient::onEventStreamEnded);
}

void EngineClient::onEventData() {
  if (!m_events) return;
  const int code = m_events->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  if (code < 200 || code >= 300) return;  // an error body is not an event stream
  const QList<SseEvent> events = m_parser.feed(m_events->readAll());
  for (const SseEvent& ev : events) dispatch(ev);
  if (m_parser.pendingBytes() > kMaxPendingEventBytes) {
    emit engineError(tr("the engine's event stream sent an oversized event; reconnecting"));
    m_events->abort();
  }
}

void EngineClient::onEventStreamEnded() {
  QNetworkReply* reply = m_events.data();
  if (!reply) return;
  const int code = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  const QString err = reply->errorString();
  const bool aborted = reply->error() == QNetworkReply::OperationCanceledError;
  m_events = nullptr;
  reply->deleteLater();
  if (!m_wanted) return;
  if (code == 401 || code == 403) {
    emit requestFailed(
        QStringLiteral("/engine/events"),
        tr("the engine refused the API key (HTTP %1); check it in Settings").arg(code));
  } else if (!aborted && m_connection == Connection::Connected) {
    emit engineError(tr("lost the connection to the engine: %1").arg(err));
  }
  setConnection(Connection::Reconnecting);
  scheduleReconnect();
}

void EngineClient::scheduleReconnect() {
  if (!m_wanted) return;
  int delay = m_backoffMs;
  if (m_parser.retryMs() >= 0) delay = qMax(delay, m_parser.retryMs());
  m_reconnectTimer.start(qMin(delay, m_maxBackoffMs));
  m_backoffMs = qMin(m_backoffMs * 2, m_maxBackoffMs);
}

void EngineClient::dispatch(const SseEvent& ev) {
  QJsonParseError perr;
  const QJsonDocument doc = QJsonDocument::fromJson(ev.data, &perr);
  if (perr.error != QJsonParseError::NoError || !doc.isObject()) {
    emit engineError(tr("the engine sent an unreadable event (%1)").arg(perr.errorString()));
    return;
  }
  const QJsonObject o = doc.object();
  QString type = ev.type;
  if (type == QLatin1String("message")) type = o.value(QLatin1String("type")).toString();
  // Payloads may be wrapped as {"type":..., "data":{...}}.
  const QJsonObject d =
      o.value(QLatin1String("data")).isObject() ? o.value(QLatin1String("data")).toObject() : o;
  if (type == QLatin1String("state")) {
    const EngineState st = engineStateFromString(d.value(QLatin1String("state")).toString());
    m_status.state = st;
    emit stateChanged(st, d.value(QLatin1String("model")).toString());
  } else if (type == QLatin1String("load_progress")) {
    emit loadProgress(LoadProgress::fromJson(d));
  } else if (type == QLatin1String("load_done")) {
    emit loadDone(d.value(QLatin1String("model")).toString());
    fetchStatus();
  } else if (type == QLatin1String("load_error")) {
    // The engine may have brought the previous model back, or be idle: ask what it holds now.
    if (d.value(QLatin1String("cancelled")).toBool()) {
      emit loadCancelled(d.value(QLatin1String("model")).toString());
    } else {
      emit loadFailed(EngineError::fromJson(d));
    }
    fetchStatus();
  } else if (type == QLatin1String("unloaded")) {
    m_status.model = LoadedModel{};
    emit unloaded();
  } else if (type == QLatin1String("stats")) {
    emit statsReceived(StatsSnapshot::fromJson(d));
  } else if (type == QLatin1String("request")) {
    emit requestRecorded(RequestRecord::fromJson(d));
  } else if (type == QLatin1String("error")) {
    emit engineError(EngineError::fromJson(d).message);
  }
  // Unknown types come from a newer engine: ignored.
}

}  // namespace arc::app
