#include "WheelGuard.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QWheelEvent>

namespace arc::app {

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::Wheel) return QObject::eventFilter(watched, event);
  auto* field = qobject_cast<QWidget*>(watched);
  const bool guarded =
      qobject_cast<QAbstractSpinBox*>(watched) != nullptr || qobject_cast<QComboBox*>(watched);
  if (!guarded || field->hasFocus()) return QObject::eventFilter(watched, event);
  // Clicking still focuses the field; the wheel alone does not.
  if (field->focusPolicy() == Qt::WheelFocus) field->setFocusPolicy(Qt::StrongFocus);
  // Up the parents until one takes it (a sent event is not propagated by Qt itself).
  auto* wheel = static_cast<QWheelEvent*>(event);
  for (QWidget* w = field->parentWidget(); w != nullptr; w = w->parentWidget()) {
    const QPointF at = field->mapTo(w, wheel->position().toPoint());
    QWheelEvent forwarded(at, wheel->globalPosition(), wheel->pixelDelta(), wheel->angleDelta(),
                          wheel->buttons(), wheel->modifiers(), wheel->phase(), wheel->inverted(),
                          wheel->source());
    forwarded.ignore();
    QCoreApplication::sendEvent(w, &forwarded);
    if (forwarded.isAccepted() || w->isWindow()) break;
  }
  return true;
}

}  // namespace arc::app
