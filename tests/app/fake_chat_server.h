// An in-process stand-in for the engine's /v1/chat/completions: records each request body and
// keeps the socket open so the test writes the SSE stream itself (in pieces of any size), or
// answers at once with a canned status; counts the connections the client closed.
#pragma once

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QUrl>

// Accepts chat requests, records their bodies and keeps the socket open so the test writes the
// stream itself (or answers at once with a canned status).
class FakeChatServer : public QObject {
 public:
  FakeChatServer() {
    m_server.listen(QHostAddress::LocalHost);
    connect(&m_server, &QTcpServer::newConnection, this, [this] {
      while (QTcpSocket* s = m_server.nextPendingConnection()) {
        s->setParent(this);
        s->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        connect(s, &QTcpSocket::readyRead, this, [this, s] { onReadyRead(s); });
        connect(s, &QTcpSocket::disconnected, this, [this] { ++closed; });
      }
    });
  }
  QUrl url() const {
    return QUrl(QStringLiteral("http://127.0.0.1:%1").arg(m_server.serverPort()));
  }
  void write(const QByteArray& bytes, int piece = 0) {
    if (!m_current) return;
    for (qsizetype i = 0; i<bytes.size(); i += piece> 0 ? piece : bytes.size()) {
      m_current->write(bytes.mid(i, piece > 0 ? piece : bytes.size()));
      m_current->flush();
      m_current->waitForBytesWritten(100);
      QTest::qWait(1);  // let the client read each piece on its own
    }
  }
  void end() {
    if (m_current) m_current->disconnectFromHost();
  }

  int failStatus = 0;  // answer the next request with this status and failBody
  QByteArray failBody;
  QList<QJsonObject> bodies;
  QList<QByteArray> auth;
  int closed = 0;

 private:
  void onReadyRead(QTcpSocket* s) {
    QByteArray& buf = m_buf[s];
    buf += s->readAll();
    const qsizetype he = buf.indexOf("\r\n\r\n");
    if (he < 0) return;
    qsizetype len = 0;
    QByteArray authorization;
    for (const QByteArray& l : buf.left(he).split('\n')) {
      const QByteArray low = l.toLower();
      if (low.startsWith("content-length:")) len = l.mid(15).trimmed().toLongLong();
      if (low.startsWith("authorization:")) authorization = l.mid(14).trimmed();
    }
    if (buf.size() < he + 4 + len) return;
    bodies.append(QJsonDocument::fromJson(buf.mid(he + 4, len)).object());
    auth.append(authorization);
    buf.clear();
    if (failStatus) {
      s->write("HTTP/1.1 " + QByteArray::number(failStatus) +
               " X\r\nContent-Type: application/json\r\nContent-Length: " +
               QByteArray::number(failBody.size()) + "\r\nConnection: close\r\n\r\n" + failBody);
      s->flush();
      s->disconnectFromHost();
      return;
    }
    s->write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
    s->flush();
    m_current = s;
  }

  QTcpServer m_server;
  QHash<QTcpSocket*, QByteArray> m_buf;
  QPointer<QTcpSocket> m_current;
};

inline QByteArray chunk(const QString& content, const QString& reasoning = {}) {
  QJsonObject delta;
  if (!content.isEmpty()) delta.insert(QStringLiteral("content"), content);
  if (!reasoning.isEmpty()) delta.insert(QStringLiteral("reasoning_content"), reasoning);
  const QJsonObject o{
      {QStringLiteral("choices"),
       QJsonArray{QJsonObject{{QStringLiteral("index"), 0}, {QStringLiteral("delta"), delta}}}}};
  return "data: " + QJsonDocument(o).toJson(QJsonDocument::Compact) + "\n\n";
}
