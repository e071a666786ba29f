#include "fake_engine.h"

FakeEngine::FakeEngine(QObject* parent) : QObject(parent) {
  connect(&m_server, &QTcpServer::newConnection, this, [this] {
    while (QTcpSocket* s = m_server.nextPendingConnection()) {
      connect(s, &QTcpSocket::readyRead, this, [this, s] { onReadyRead(s); });
      connect(s, &QTcpSocket::disconnected, s, &QObject::deleteLater);
      connect(s, &QObject::destroyed, this, [this, s] { m_buffers.remove(s); });
    }
  });
}

// Sockets go first, while the members their signal handlers touch still exist.
FakeEngine::~FakeEngine() {
  m_server.close();
  const auto sockets = findChildren<QTcpSocket*>() + m_server.findChildren<QTcpSocket*>();
  for (QTcpSocket* s : sockets) {
    s->disconnect(this);
    delete s;
  }
}

bool FakeEngine::listen(quint16 port) {
  return m_server.listen(QHostAddress::LocalHost, port);
}

void FakeEngine::close() {
  m_server.close();
  dropEventStreams();
}

void FakeEngine::setResponse(const QByteArray& method, const QByteArray& path, int status,
                             const QByteArray& body) {
  m_routes.insert(method + ' ' + path, Response{status, body});
}

int FakeEngine::eventStreams() const {
  int n = 0;
  for (const auto& s : m_streams)
    if (s && s->state() == QAbstractSocket::ConnectedState) ++n;
  return n;
}

void FakeEngine::sendEvents(const QByteArray& bytes, bool bytewise) {
  for (const auto& s : m_streams) {
    if (!s) continue;
    if (!bytewise) {
      s->write(bytes);
      s->flush();
      continue;
    }
    for (char c : bytes) {
      s->write(&c, 1);
      s->flush();  // one TCP segment per byte (Nagle is off): the client sees every split
      s->waitForBytesWritten(100);
    }
  }
}

void FakeEngine::dropEventStreams() {
  for (const auto& s : m_streams)
    if (s) s->abort();
  m_streams.clear();
}

void FakeEngine::onReadyRead(QTcpSocket* s) {
  QByteArray& buf = m_buffers[s];
  buf += s->readAll();
  const qsizetype headerEnd = buf.indexOf("\r\n\r\n");
  if (headerEnd < 0) return;
  const QList<QByteArray> lines = buf.left(headerEnd).split('\n');
  const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
  Request req;
  req.method = first.value(0);
  req.path = first.value(1);
  qsizetype contentLength = 0;
  for (const QByteArray& l : lines) {
    const qsizetype c = l.indexOf(':');
    if (c < 0) continue;
    const QByteArray name = l.left(c).trimmed().toLower();
    const QByteArray value = l.mid(c + 1).trimmed();
    if (name == "content-length") contentLength = value.toLongLong();
    if (name == "authorization") req.authorization = value;
  }
  if (buf.size() < headerEnd + 4 + contentLength) return;  // body not complete yet
  req.body = buf.mid(headerEnd + 4, contentLength);
  buf.remove(0, headerEnd + 4 + contentLength);
  requests.append(req);

  auto reply = [s](int status, const QByteArray& body, const QByteArray& type) {
    s->write("HTTP/1.1 " + QByteArray::number(status) + " X\r\nContent-Type: " + type +
             "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body);
    s->flush();
  };
  if (!m_key.isEmpty() && req.path != "/health" && req.authorization != "Bearer " + m_key) {
    reply(401, R"({"error":{"message":"missing or wrong API key"}})", "application/json");
    return;
  }
  if (req.method == "GET" && req.path == "/engine/events" &&
      !m_routes.contains("GET /engine/events")) {
    s->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    s->write(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        "Connection: close\r\n\r\n");
    s->flush();
    m_streams.append(s);
    ++m_eventConnections;
    emit eventStreamOpened();
    return;
  }
  // Routes by path, the query string aside (/engine/log?lines=N answers as /engine/log).
  const qsizetype q = req.path.indexOf('?');
  const auto it = m_routes.constFind(req.method + ' ' + (q < 0 ? req.path : req.path.left(q)));
  if (it == m_routes.constEnd()) {
    reply(404, R"({"error":{"message":"no such route"}})", "application/json");
    return;
  }
  reply(it->status, it->body, "application/json");
}
