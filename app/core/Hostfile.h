// The OpenMPI hostfile the app starts a multi-box engine with: one line per box,
// "HOST slots=N" (one rank per box is the usual: slots=1). Parsed and checked line by line so
// the editor can name the line that is wrong; saved atomically.
#pragma once

#include <QCoreApplication>
#include <QList>
#include <QString>
#include <QStringList>

namespace arc::app {

class AppSettings;

struct HostfileEntry {
  QString host;
  int slotCount = 1;  // "slots" is a Qt keyword
};

struct HostfileError {
  int line = 0;  // 1-based
  QString message;
};

class Hostfile {
  Q_DECLARE_TR_FUNCTIONS(arc::app::Hostfile)

 public:
  // Blank lines and '#' comments are allowed; "slots=N" is optional (1).
  static Hostfile parse(const QString& text);

  const QList<HostfileEntry>& entries() const { return m_entries; }
  const QList<HostfileError>& errors() const { return m_errors; }
  bool isValid() const { return m_errors.isEmpty() && !m_entries.isEmpty(); }
  int totalSlots() const;
  // One "host slots=N" line per entry.
  QString toText() const;

  // Where the app keeps it: the settings' hostfile, or `hostfile` in the app's data folder.
  static QString pathFor(const AppSettings& settings);
  // Writes `text` (must be valid) to `path` atomically; false with the reason in `error`.
  static bool save(const QString& path, const QString& text, QString* error);
  // The command the app runs (and a user can run by hand) for this hostfile.
  static QString mpirunCommand(const AppSettings& settings, const QString& path, int ranks);

 private:
  QList<HostfileEntry> m_entries;
  QList<HostfileError> m_errors;
};

}  // namespace arc::app
