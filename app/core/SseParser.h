// Incremental parser for the Server-Sent Events wire format (WHATWG HTML, "event stream
// interpretation"). Bytes may arrive split anywhere — inside a line, between CR and LF, inside a
// UTF-8 sequence — so the parser keeps the unfinished line and the event being built between calls.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace arc::app {

struct SseEvent {
  QString type = QStringLiteral("message");  // the "event:" field, "message" when absent
  QByteArray data;                           // "data:" lines joined with '\n'
  QString id;                                // the last "id:" seen (persists across events)
};

class SseParser {
 public:
  // Feeds the next chunk of the stream; returns the events completed by it, in order.
  QList<SseEvent> feed(const QByteArray& chunk);
  // Forgets partial state (a new connection starts a fresh stream; the last id is kept).
  void reset();

  // The reconnection delay the server asked for with "retry:", or -1 when it never did.
  int retryMs() const { return m_retryMs; }
  QString lastEventId() const { return m_lastId; }
  // Bytes held in an unfinished line; the client caps this against a misbehaving server.
  qsizetype pendingBytes() const { return m_line.size() + m_data.size(); }

 private:
  void processLine(const QByteArray& line, QList<SseEvent>& out);

  QByteArray m_line;       // the current line, not yet terminated
  bool m_skipLf = false;   // the previous chunk ended with CR: a leading LF belongs to it
  QByteArray m_data;       // data of the event being built
  bool m_hasData = false;  // at least one data field was seen for it
  QString m_type;          // its event type
  QString m_lastId;
  int m_retryMs = -1;
};

}  // namespace arc::app
