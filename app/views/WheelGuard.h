// Spin boxes and combo boxes change on the mouse wheel only when they have focus: scrolling a
// page over a form must scroll the page, not change the context size or the KV type under the
// pointer. Installed on the application once (runApplication); an unfocused field passes the
// wheel to its parent (the scroll area).
#pragma once

#include <QObject>

namespace arc::app {

class WheelGuard : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;
  bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace arc::app
