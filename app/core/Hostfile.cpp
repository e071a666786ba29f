#include "Hostfile.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>

#include "AppSettings.h"
#include "EngineProcess.h"

namespace arc::app {
namespace {

// A host name, an IPv4 address or a bracket-free IPv6 address.
bool validHost(const QString& h) {
  static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9]([A-Za-z0-9._:-]{0,252})$"));
  return re.match(h).hasMatch();
}

QString shellQuote(const QString& s) {
  static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9_./:=@%+,-]+$"));
  if (!s.isEmpty() && safe.match(s).hasMatch()) return s;
  QString q = s;
  q.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + q + QLatin1Char('\'');
}

}  // namespace

Hostfile Hostfile::parse(const QString& text) {
  Hostfile h;
  const QStringList lines = text.split(QLatin1Char('\n'));
  for (int i = 0; i < lines.size(); ++i) {
    QString line = lines[i];
    const int hash = line.indexOf(QLatin1Char('#'));
    if (hash >= 0) line.truncate(hash);
    const QStringList words = line.simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (words.isEmpty()) continue;
    const int n = i + 1;
    HostfileEntry e;
    e.host = words[0];
    if (!validHost(e.host)) {
      h.m_errors.append({n, tr("'%1' is not a host name or address").arg(e.host)});
      continue;
    }
    bool ok = true;
    for (int w = 1; w < words.size(); ++w) {
      const QString& word = words[w];
      if (!word.startsWith(QStringLiteral("slots="))) {
        h.m_errors.append({n, tr("unknown '%1': write HOST slots=N").arg(word)});
        ok = false;
        break;
      }
      bool isInt = false;
      const int count = word.mid(6).toInt(&isInt);
      if (!isInt || count < 1 || count > 64) {
        h.m_errors.append(
            {n, tr("slots must be a number from 1 to 64, not '%1'").arg(word.mid(6))});
        ok = false;
        break;
      }
      e.slotCount = count;
    }
    if (!ok) continue;
    bool duplicate = false;
    for (const HostfileEntry& other : h.m_entries) duplicate |= other.host == e.host;
    if (duplicate) {
      h.m_errors.append({n, tr("%1 is listed twice").arg(e.host)});
      continue;
    }
    h.m_entries.append(e);
  }
  if (h.m_entries.isEmpty() && h.m_errors.isEmpty())
    h.m_errors.append({1, tr("list at least one box: one line per box, HOST slots=1")});
  return h;
}

int Hostfile::totalSlots() const {
  int n = 0;
  for (const HostfileEntry& e : m_entries) n += e.slotCount;
  return n;
}

QString Hostfile::toText() const {
  QString out;
  for (const HostfileEntry& e : m_entries)
    out += QStringLiteral("%1 slots=%2\n").arg(e.host).arg(e.slotCount);
  return out;
}

QString Hostfile::pathFor(const AppSettings& settings) {
  if (!settings.hostfile().isEmpty()) return settings.hostfile();
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
      .filePath(QStringLiteral("hostfile"));
}

bool Hostfile::save(const QString& path, const QString& text, QString* error) {
  const Hostfile h = parse(text);
  if (!h.isValid()) {
    if (error) {
      *error = h.errors().isEmpty()
                   ? tr("the hostfile is empty")
                   : tr("line %1: %2").arg(h.errors().first().line).arg(h.errors().first().message);
    }
    return false;
  }
  QDir().mkpath(QFileInfo(path).absolutePath());
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = tr("cannot write %1: %2").arg(path, f.errorString());
    return false;
  }
  f.write(text.endsWith(QLatin1Char('\n')) ? text.toUtf8() : (text + QLatin1Char('\n')).toUtf8());
  if (!f.commit()) {
    if (error) *error = tr("cannot write %1: %2").arg(path, f.errorString());
    return false;
  }
  return true;
}

QString Hostfile::mpirunCommand(const AppSettings& settings, const QString& path, int ranks) {
  EngineLaunch l;
  l.enginePath = EngineProcess::findEngineBinary();
  if (l.enginePath.isEmpty()) l.enginePath = QStringLiteral("arclight-engine");
  l.port = settings.localPort();
  l.modelDirs = settings.engineModelDirs();
  l.hostfile = path;
  l.ranks = qMax(1, ranks);
  // The key stays out of a command meant for copying: the engine reads it from the flag, so
  // show where it goes without printing it.
  if (!settings.apiKey().isEmpty()) l.apiKey = QStringLiteral("KEY");
  QStringList quoted;
  for (const QString& a : EngineProcess::commandLine(l)) quoted << shellQuote(a);
  return quoted.join(QLatin1Char(' '));
}

}  // namespace arc::app
