// FitController's bridge to the fit library: converts the app's inputs to arc::fit's and its
// report to a FitSummary. Without arc_fit the app still runs; planning says why it is missing.
#include <QCoreApplication>

#include "FitController.h"

namespace arc::app {

bool FitController::available() {
  return false;
}

QStringList FitController::kvDtypes() {
  return {QStringLiteral("f16"), QStringLiteral("q8_0"), QStringLiteral("q4_0")};
}

FitSummary FitController::compute(const CatalogEntry& entry, const FitInputs& inputs) {
  FitSummary s;
  s.boxes = inputs.boxes;
  s.error = QCoreApplication::translate("FitController",
                                        "the fit calculator (arc_fit) is not part of this build");
  Q_UNUSED(entry);
  return s;
}

}  // namespace arc::app
