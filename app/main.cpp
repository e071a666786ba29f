// arclight: the desktop app. Everything lives in arclight_core (state) and arclight_views
// (widgets).
#include <QApplication>

#include "Application.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  return arc::app::runApplication(app);
}
