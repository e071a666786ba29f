#include "FitController.h"

#include <QCoreApplication>

namespace arc::app {

FitController::FitController(QObject* parent) : QObject(parent) {}

void FitController::setEntry(const CatalogEntry& entry) {
  m_entry = entry;
  if (m_inputs.buildIndex >= entry.builds.size()) m_inputs.buildIndex = 0;
  recompute();
}

void FitController::setInputs(const FitInputs& inputs) {
  m_inputs = inputs;
  m_inputs.boxes = qBound(1, m_inputs.boxes, 4);
  m_inputs.concurrency = qMax(1, m_inputs.concurrency);
  m_inputs.contextTokens = qMax<qint64>(1, m_inputs.contextTokens);
  recompute();
}

void FitController::recompute() {
  m_table.clear();
  if (!hasEntry()) {
    m_summary = FitSummary{};
    m_summary.error = tr("pick a model to see how it fits");
    emit changed();
    return;
  }
  for (int boxes = 1; boxes <= 4; ++boxes) {
    FitInputs in = m_inputs;
    in.boxes = boxes;
    m_table.append(compute(m_entry, in));
  }
  m_summary = m_table[m_inputs.boxes - 1];
  emit changed();
}

}  // namespace arc::app
