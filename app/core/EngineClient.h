// The app's one connection to an engine: plain HTTP requests on QNetworkAccessManager plus the
// /engine/events stream, which reconnects with exponential backoff when it drops. Everything is
// asynchronous and reported through signals on the thread the client lives on.
#pragma once

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QUrl>

#include "EngineEvents.h"
#include "LoadSettings.h"
#include "SseParser.h"

class QNetworkReply;

namespace arc::app {

class EngineClient : public QObject {
  Q_OBJECT
 public:
  enum class Connection { Offline, Connecting, Connected, Reconnecting };
  Q_ENUM(Connection)

  explicit EngineClient(QObject* parent = nullptr);
  ~EngineClient() override;

  // What a route does, in the user's words ("loading the model" for /engine/load): failures
  // say this, never the route.
  static QString describeRoute(const QString& route);

  void setBaseUrl(const QUrl& url);
  QUrl baseUrl() const { return m_baseUrl; }
  QString apiKey() const { return m_apiKey; }
  void setApiKey(const QString& key) { m_apiKey = key; }
  // Backoff between reconnect attempts: starts at initialMs, doubles up to maxMs.
  void setBackoff(int initialMs, int maxMs);
  int currentBackoffMs() const { return m_backoffMs; }
  void setRequestTimeout(int ms) { m_timeoutMs = ms; }

  Connection connection() const { return m_connection; }
  const EngineStatus& lastStatus() const { return m_status; }

  // Starts (or restarts) the connection: /health, then /engine/status and the event stream.
  void connectToEngine();
  void disconnectFromEngine();

  void fetchHealth();
  void fetchStatus();
  void fetchModels();
  void fetchLocalModels();
  void loadModel(const QString& path, qint64 contextSize = 0);
  void loadModel(const QString& path, const arc::app::LoadSettings& settings);
  void cancelLoad();  // POST /engine/load/cancel: loadCancelled() when the engine has stopped
  void fetchLog(int lines = 500);  // GET /engine/log: logReceived, or requestFailed
  void unloadModel();
  void requestFit(const QJsonObject& request);
  // Cluster page: every rank's node probe, and the all-reduce link test across the ranks.
  void fetchCluster();
  void runLinkTest(const QJsonObject& request = {});

 signals:
  void connectionChanged(arc::app::EngineClient::Connection connection);
  void healthReceived(arc::app::EngineState state);
  void statusReceived(const arc::app::EngineStatus& status);
  void modelsReceived(const QJsonArray& models);
  void localModelsReceived(const QJsonArray& models);
  void fitReceived(const QJsonObject& report);
  void clusterReceived(const QJsonObject& cluster);
  void clusterFailed(const QString& message);
  void linkTestFinished(const QJsonObject& result);
  void linkTestFailed(const QString& message);
  void loadAccepted();
  void loadRefused(const arc::app::EngineError& error);
  void unloadDone();
  // A request failed: route, and a message a user can read.
  void requestFailed(const QString& route, const QString& message);

  // From the event stream.
  void stateChanged(arc::app::EngineState state, const QString& model);
  void loadProgress(const arc::app::LoadProgress& progress);
  void loadDone(const QString& model);
  void loadFailed(const arc::app::EngineError& error);
  void loadCancelled(const QString& model);
  void logReceived(const QStringList& lines);
  void unloaded();
  void statsReceived(const arc::app::StatsSnapshot& stats);
  void requestRecorded(const arc::app::RequestRecord& record);
  void engineError(const QString& message);
  void eventStreamOpened();

 private:
  QNetworkRequest makeRequest(const QString& route) const;
  QNetworkReply* get(const QString& route);
  QNetworkReply* post(const QString& route, const QJsonObject& body);
  // Calls onJson with the parsed body of a 2xx reply; reports anything else as requestFailed.
  void handleJson(QNetworkReply* reply, const QString& route,
                  std::function<void(const QJsonDocument&)> onJson,
                  std::function<void(int, const QJsonDocument&)> onHttpError = {});
  void setConnection(Connection c);
  void openEventStream();
  void onEventData();
  void onEventStreamEnded();
  void scheduleReconnect();
  void dispatch(const SseEvent& ev);

  QNetworkAccessManager m_nam;
  QUrl m_baseUrl;
  QString m_apiKey;
  Connection m_connection = Connection::Offline;
  EngineStatus m_status;
  QPointer<QNetworkReply> m_events;
  SseParser m_parser;
  QTimer m_reconnectTimer;
  int m_initialBackoffMs = 500;
  int m_maxBackoffMs = 30000;
  int m_backoffMs = 500;
  int m_timeoutMs = 10000;
  bool m_wanted = false;  // the user wants a connection (reconnect when it drops)
};

}  // namespace arc::app
