#include "BenchHistoryModel.h"

namespace arc::app {

BenchHistoryModel::BenchHistoryModel(QObject* parent) : QAbstractTableModel(parent) {}

void BenchHistoryModel::setRuns(const QList<BenchRun>& runs) {
  beginResetModel();
  m_runs = runs;
  endResetModel();
}

const BenchRun* BenchHistoryModel::runAt(int row) const {
  return row >= 0 && row < m_runs.size() ? &m_runs.at(row) : nullptr;
}

int BenchHistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_runs.size());
}

int BenchHistoryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant BenchHistoryModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const BenchRun& r = m_runs.at(index.row());
  if (role == Qt::ToolTipRole && !r.error.isEmpty()) return r.error;
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case DateColumn:
      return r.date.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    case ModelColumn:
      return r.model;
    case ServerColumn:
      return r.settings.url;
    case ProfileColumn:
      return r.settings.profile;
    case ResultColumn:
      return r.error.isEmpty() ? tr("%n scenario(s)", nullptr, int(r.results.size()))
                               : tr("stopped: %1").arg(r.error);
  }
  return {};
}

QVariant BenchHistoryModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case DateColumn:
      return tr("Date");
    case ModelColumn:
      return tr("Model");
    case ServerColumn:
      return tr("Server");
    case ProfileColumn:
      return tr("Profile");
    case ResultColumn:
      return tr("Result");
  }
  return {};
}

}  // namespace arc::app
