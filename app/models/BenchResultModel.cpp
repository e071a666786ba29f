#include "BenchResultModel.h"

#include "NumberFormat.h"

namespace arc::app {

namespace {
QString medRange(const BenchSummary& s, int decimals) {
  if (!s.valid) return QStringLiteral("–");
  return QStringLiteral("%1 (%2–%3)")
      .arg(decimal(s.median, decimals))
      .arg(decimal(s.min, decimals))
      .arg(decimal(s.max, decimals));
}
QString med(double v, bool valid, int decimals) {
  return valid ? decimal(v, decimals) : QStringLiteral("–");
}
}  // namespace

BenchResultModel::BenchResultModel(QObject* parent) : QAbstractTableModel(parent) {}

void BenchResultModel::setResults(const QList<BenchResult>& results) {
  beginResetModel();
  m_results = results;
  endResetModel();
}

void BenchResultModel::append(const BenchResult& result) {
  const int row = int(m_results.size());
  beginInsertRows({}, row, row);
  m_results.append(result);
  endInsertRows();
}

void BenchResultModel::clear() {
  setResults({});
}

int BenchResultModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_results.size());
}

int BenchResultModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant BenchResultModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const BenchResult& r = m_results.at(index.row());
  if (role == ValueRole) {
    switch (index.column()) {
      case ScenarioColumn:
        return r.scenario;
      case StreamsColumn:
        return r.concurrency;
      case TtftColumn:
        return r.ttftMs.median;
      case TpotColumn:
        return r.tpotMs.median;
      case ItlColumn:
        return r.itlMs.p90;
      case E2eColumn:
        return r.e2eMs.median / 1000.0;
      case StreamRateColumn:
        return r.outputTokensPerSec.median;
      case TotalRateColumn:
        return r.totalTokensPerSec;
      case ErrorsColumn:
        return r.errors;
    }
    return {};
  }
  if (role == Qt::TextAlignmentRole)
    return index.column() == ScenarioColumn ? QVariant()
                                            : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && !r.firstError.isEmpty()) return r.firstError;
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case ScenarioColumn:
      return r.scenario;
    case StreamsColumn:
      return r.concurrency;
    case TtftColumn:
      return medRange(r.ttftMs, 0);
    case TpotColumn:
      return med(r.tpotMs.median, r.tpotMs.valid, 1);
    case ItlColumn:
      return med(r.itlMs.p90, r.itlMs.valid, 1);
    case E2eColumn:
      return med(r.e2eMs.median / 1000.0, r.e2eMs.valid, 2);
    case StreamRateColumn:
      if (r.scenario == QLatin1String("prefill") && r.prefillTokensPerSec.valid)
        return tr("%1 prefill").arg(medRange(r.prefillTokensPerSec, 0));
      return medRange(r.outputTokensPerSec, 1);
    case TotalRateColumn:
      return med(r.totalTokensPerSec, r.totalTokensPerSec > 0, 1);
    case ErrorsColumn:
      return tr("%1 of %2").arg(r.errors).arg(r.requests);
  }
  return {};
}

QVariant BenchResultModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case ScenarioColumn:
      return tr("Scenario");
    case StreamsColumn:
      return tr("Streams");
    case TtftColumn:
      return tr("TTFT ms (min–max)");
    case TpotColumn:
      return tr("TPOT ms");
    case ItlColumn:
      return tr("ITL p90 ms");
    case E2eColumn:
      return tr("End-to-end s");
    case StreamRateColumn:
      return tr("Tokens/s per stream (min–max)");
    case TotalRateColumn:
      return tr("Total tokens/s");
    case ErrorsColumn:
      return tr("Errors");
  }
  return {};
}

}  // namespace arc::app
