// A tiny HTTP/1.1 server on QTcpServer that plays the engine for the client tests: canned JSON
// per route, an SSE stream whose bytes the test writes (optionally one byte per TCP write), and
// switches to fail routes or drop the event stream.
#pragma once

#include <QHash>
#include <QList>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>

class FakeEngine : public QObject {
  Q_OBJECT
 public:
  struct Response {
    int status = 200;
    QByteArray body;
  };
  struct Request {
    QByteArray method;
    QByteArray path;
    QByteArray authorization;
    QByteArray body;
  };

  explicit FakeEngine(QObject* parent = nullptr);
  ~FakeEngine() override;
  bool listen(quint16 port = 0);
  quint16 port() const { return m_server.serverPort(); }
  void close();

  void setResponse(const QByteArray& method, const QByteArray& path, int status,
                   const QByteArray& body);
  void setRequiredKey(const QByteArray& key) { m_key = key; }

  // Event stream: connections waiting on /engine/events.
  int eventStreams() const;
  void sendEvents(const QByteArray& bytes, bool bytewise = false);
  void dropEventStreams();
  int eventConnectionsSeen() const { return m_eventConnections; }

  QList<Request> requests;

 signals:
  void eventStreamOpened();

 private:
  void onReadyRead(QTcpSocket* s);

  QTcpServer m_server;
  QHash<QByteArray, Response> m_routes;  // "GET /health" -> response
  QList<QPointer<QTcpSocket>> m_streams;
  QHash<QTcpSocket*, QByteArray> m_buffers;
  QByteArray m_key;
  int m_eventConnections = 0;
};
