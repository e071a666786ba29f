#include "BenchCompareModel.h"

#include <cmath>

namespace arc::app {

BenchCompareModel::BenchCompareModel(QObject* parent) : QAbstractTableModel(parent) {}

double BenchCompareModel::rateOf(const BenchResult& r) {
  if (r.scenario == QLatin1String("prefill")) return r.prefillTokensPerSec.median;
  if (r.concurrency > 1 && r.totalTokensPerSec > 0) return r.totalTokensPerSec;
  return r.outputTokensPerSec.median;
}

void BenchCompareModel::setRuns(const BenchRun& a, const BenchRun& b) {
  beginResetModel();
  m_a = a;
  m_b = b;
  m_rows.clear();
  auto add = [this](const BenchResult& r, bool isA) {
    const QString key = r.key();
    for (Row& row : m_rows) {
      if (row.key != key) continue;
      (isA ? row.a : row.b) = &r;
      return;
    }
    Row row;
    row.key = key;
    (isA ? row.a : row.b) = &r;
    m_rows.append(row);
  };
  for (const BenchResult& r : m_a.results) add(r, true);
  for (const BenchResult& r : m_b.results) add(r, false);
  m_titleA = a.date.toLocalTime().toString(QStringLiteral("MM-dd HH:mm"));
  m_titleB = b.date.toLocalTime().toString(QStringLiteral("MM-dd HH:mm"));
  endResetModel();
}

void BenchCompareModel::clear() {
  beginResetModel();
  m_rows.clear();
  m_a = {};
  m_b = {};
  endResetModel();
}

int BenchCompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_rows.size());
}

int BenchCompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant BenchCompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Row& row = m_rows.at(index.row());
  const double ra = row.a ? rateOf(*row.a) : std::nan("");
  const double rb = row.b ? rateOf(*row.b) : std::nan("");
  const double change = row.a && row.b && ra > 0 ? (rb - ra) / ra * 100.0 : std::nan("");
  if (role == ValueRole) {
    switch (index.column()) {
      case ScenarioColumn:
        return row.key;
      case RateAColumn:
        return ra;
      case RateBColumn:
        return rb;
      case RateChangeColumn:
        return change;
      case TtftAColumn:
        return row.a ? row.a->ttftMs.median : std::nan("");
      case TtftBColumn:
        return row.b ? row.b->ttftMs.median : std::nan("");
    }
    return {};
  }
  if (role == Qt::TextAlignmentRole)
    return index.column() == ScenarioColumn ? QVariant()
                                            : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  auto fmt = [](double v, int d) {
    return std::isnan(v) ? QStringLiteral("–") : QString::number(v, 'f', d);
  };
  switch (index.column()) {
    case ScenarioColumn:
      return row.key;
    case RateAColumn:
      return fmt(ra, 1);
    case RateBColumn:
      return fmt(rb, 1);
    case RateChangeColumn:
      return std::isnan(change) ? QStringLiteral("–")
                                : QStringLiteral("%1%2 %")
                                      .arg(change >= 0 ? QStringLiteral("+") : QString())
                                      .arg(change, 0, 'f', 1);
    case TtftAColumn:
      return fmt(row.a && row.a->ttftMs.valid ? row.a->ttftMs.median : std::nan(""), 0);
    case TtftBColumn:
      return fmt(row.b && row.b->ttftMs.valid ? row.b->ttftMs.median : std::nan(""), 0);
  }
  return {};
}

QVariant BenchCompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case ScenarioColumn:
      return tr("Scenario");
    case RateAColumn:
      return tr("Tokens/s A (%1)").arg(m_titleA);
    case RateBColumn:
      return tr("Tokens/s B (%1)").arg(m_titleB);
    case RateChangeColumn:
      return tr("Change");
    case TtftAColumn:
      return tr("TTFT ms A");
    case TtftBColumn:
      return tr("TTFT ms B");
  }
  return {};
}

}  // namespace arc::app
