// The Cluster page's state: the engine's per-rank probes (GET /engine/cluster), the link test
// (POST /engine/link-test) and the wording of the probe's findings. No widgets: the page shows
// what this holds, and tests drive it offscreen against a fake engine.
#pragma once

#include <QObject>
#include <QStringList>

#include "ClusterSnapshot.h"

namespace arc::app {

class EngineClient;

class ClusterController : public QObject {
  Q_OBJECT
 public:
  explicit ClusterController(EngineClient* client, QObject* parent = nullptr);

  void refresh();
  // Link test with the default sizes (16 KiB to 64 MiB); results arrive as linkTestChanged.
  void runLinkTest();

  const ClusterSnapshot& snapshot() const { return m_snapshot; }
  bool hasSnapshot() const { return m_hasSnapshot; }
  bool isRefreshing() const { return m_refreshing; }
  QString error() const { return m_error; }  // why the last refresh failed; empty when fine

  const LinkTestReport& linkTest() const { return m_linkTest; }
  bool isLinkTestRunning() const { return m_linkRunning; }
  QString linkTestError() const { return m_linkError; }

  // A finding in the user's language, from its code and subject; the engine's English text for
  // codes this app does not know.
  static QString findingText(const ClusterFinding& f);
  // Every box's findings, "host: text", warnings first.
  QStringList hints() const;

 signals:
  void changed();
  void linkTestChanged();

 private:
  EngineClient* m_client;
  ClusterSnapshot m_snapshot;
  bool m_hasSnapshot = false;
  bool m_refreshing = false;
  QString m_error;
  LinkTestReport m_linkTest;
  bool m_linkRunning = false;
  QString m_linkError;
};

}  // namespace arc::app
