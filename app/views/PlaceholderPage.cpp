#include "PlaceholderPage.h"

#include <QLabel>
#include <QVBoxLayout>

namespace arc::app {

PlaceholderPage::PlaceholderPage(const QString& title, const QString& text, QWidget* parent)
    : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* heading = new QLabel(title, this);
  QFont f = heading->font();
  f.setPointSizeF(f.pointSizeF() * 1.6);
  f.setBold(true);
  heading->setFont(f);
  auto* body = new QLabel(text, this);
  body->setWordWrap(true);
  body->setEnabled(false);
  layout->addStretch(1);
  layout->addWidget(heading, 0, Qt::AlignHCenter);
  layout->addWidget(body, 0, Qt::AlignHCenter);
  layout->addStretch(2);
}

}  // namespace arc::app
