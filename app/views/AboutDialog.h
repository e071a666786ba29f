// Versions: the app, Qt, QCustomPlot, and the engine's when one is connected.
#pragma once

#include <QDialog>

namespace arc::app {

class AboutDialog : public QDialog {
  Q_OBJECT
 public:
  explicit AboutDialog(const QString& engineVersion, QWidget* parent = nullptr);
};

}  // namespace arc::app
