// WheelGuard: an unfocused spin box or combo box ignores the wheel and the page under it scrolls;
// a focused one still takes it.
#include <gtest/gtest.h>

#include <QApplication>
#include <QComboBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QTest>
#include <QVBoxLayout>
#include <QWheelEvent>

#include "WheelGuard.h"

using namespace arc::app;

namespace {

void wheelDown(QWidget* w) {
  const QPointF at(w->width() / 2.0, w->height() / 2.0);
  QWheelEvent e(at, w->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(w, &e);
}

}  // namespace

TEST(WheelGuard, UnfocusedFieldsPassTheWheelToThePage) {
  WheelGuard guard;
  qApp->installEventFilter(&guard);
  QScrollArea area;
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* spin = new QSpinBox;
  spin->setRange(0, 100);
  spin->setValue(50);
  auto* combo = new QComboBox;
  combo->addItems({QStringLiteral("f16"), QStringLiteral("f32"), QStringLiteral("q8")});
  combo->setCurrentIndex(1);
  layout->addWidget(spin);
  layout->addWidget(combo);
  layout->addSpacing(3000);  // taller than the view: the page can scroll
  area.setWidget(page);
  area.resize(300, 200);
  area.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&area));
  area.setFocus();

  wheelDown(spin);
  wheelDown(combo);
  EXPECT_EQ(spin->value(), 50);
  EXPECT_EQ(combo->currentIndex(), 1);
  EXPECT_GT(area.verticalScrollBar()->value(), 0)
      << "the page did not scroll; max " << area.verticalScrollBar()->maximum();

  // With focus the field takes the wheel as before.
  area.verticalScrollBar()->setValue(0);
  spin->setFocus();
  QTRY_VERIFY(spin->hasFocus());
  wheelDown(spin);
  EXPECT_EQ(spin->value(), 49);
  qApp->removeEventFilter(&guard);
}
