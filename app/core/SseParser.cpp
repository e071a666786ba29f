#include "SseParser.h"

#include <algorithm>

namespace arc::app {

QList<SseEvent> SseParser::feed(const QByteArray& chunk) {
  QList<SseEvent> out;
  qsizetype i = 0;
  if (m_skipLf && !chunk.isEmpty()) {
    if (chunk.at(0) == '\n') ++i;
    m_skipLf = false;
  }
  while (i < chunk.size()) {
    // Find the next line terminator: CRLF, LF or CR.
    qsizetype end = i;
    while (end < chunk.size() && chunk.at(end) != '\n' && chunk.at(end) != '\r') ++end;
    m_line.append(chunk.constData() + i, end - i);
    if (end == chunk.size()) break;  // unfinished line: wait for more bytes
    const char term = chunk.at(end);
    i = end + 1;
    if (term == '\r') {
      if (i < chunk.size()) {
        if (chunk.at(i) == '\n') ++i;
      } else {
        m_skipLf = true;  // the LF of this CRLF may be the first byte of the next chunk
      }
    }
    processLine(m_line, out);
    m_line.clear();
  }
  return out;
}

void SseParser::reset() {
  m_line.clear();
  m_skipLf = false;
  m_data.clear();
  m_hasData = false;
  m_type.clear();
}

void SseParser::processLine(const QByteArray& line, QList<SseEvent>& out) {
  if (line.isEmpty()) {  // blank line: dispatch
    if (m_hasData) {
      SseEvent ev;
      if (!m_type.isEmpty()) ev.type = m_type;
      ev.data = m_data;
      ev.id = m_lastId;
      out.append(ev);
    }
    m_data.clear();
    m_hasData = false;
    m_type.clear();
    return;
  }
  if (line.startsWith(':')) return;  // comment (keep-alive)
  const qsizetype colon = line.indexOf(':');
  QByteArray field = colon < 0 ? line : line.left(colon);
  QByteArray value;
  if (colon >= 0) {
    value = line.mid(colon + 1);
    if (value.startsWith(' ')) value.remove(0, 1);
  }
  if (field == "data") {
    if (m_hasData) m_data.append('\n');
    m_data.append(value);
    m_hasData = true;
  } else if (field == "event") {
    m_type = QString::fromUtf8(value);
  } else if (field == "id") {
    if (!value.contains('\0')) m_lastId = QString::fromUtf8(value);
  } else if (field == "retry") {
    bool ok = false;
    const int ms = value.toInt(&ok);
    // Only ASCII digits count; "retry: 1e3" or "-5" are ignored as the spec says.
    if (ok && !value.isEmpty() &&
        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
      m_retryMs = ms;
  }
  // Unknown fields are ignored.
}

}  // namespace arc::app
