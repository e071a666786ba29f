// A page whose feature another part of the project delivers; says so plainly.
#pragma once

#include <QWidget>

namespace arc::app {

class PlaceholderPage : public QWidget {
  Q_OBJECT
 public:
  PlaceholderPage(const QString& title, const QString& text, QWidget* parent = nullptr);
};

}  // namespace arc::app
