#include "BoxTableModel.h"

#include <QBrush>
#include <QColor>
#include <QLocale>

#include "EngineEvents.h"
#include "NumberFormat.h"

namespace arc::app {

BoxTableModel::BoxTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void BoxTableModel::setSummaries(const QList<FitSummary>& rows) {
  if (rows.size() == m_rows.size() && !rows.isEmpty()) {
    m_rows = rows;  // same shape: a change of values, not of structure
    emit dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
    return;
  }
  beginResetModel();
  m_rows = rows;
  endResetModel();
}

int BoxTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_rows.size());
}

int BoxTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant BoxTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const FitSummary& s = m_rows[index.row()];
  if (role == Qt::ForegroundRole && index.column() == VerdictColumn && s.valid)
    return QBrush(s.fits ? QColor(0x2e, 0x9d, 0x4f) : QColor(0xd0, 0x3b, 0x3b));
  if (role == Qt::ToolTipRole) return s.valid ? s.reason : s.error;
  if (role == Qt::TextAlignmentRole && index.column() != VerdictColumn)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case BoxesColumn:
      return s.boxes;
    case VerdictColumn:
      return s.valid ? s.verdict : tr("unknown");
    case PerBoxColumn: {
      if (!s.valid || s.perBox.isEmpty()) return {};
      // The fullest box decides.
      double used = 0, usable = 0;
      for (const BoxUsage& b : s.perBox) {
        const double u = b.weightsBytes + b.kvBytes + b.runtimeBytes + b.reserveBytes;
        if (u >= used) {
          used = u;
          usable = b.usableBytes;
        }
      }
      return tr("%1 of %2").arg(formatBytes(qint64(used)), formatBytes(qint64(usable)));
    }
    case ContextColumn:
      return s.valid && s.maxContext > 0 ? QLocale().toString(s.maxContext) : QString();
    case CeilingColumn:
      return s.valid && s.decodeCeilingTokensPerSec > 0
                 ? tr("%1 tok/s").arg(decimal(s.decodeCeilingTokensPerSec, 1))
                 : QString();
  }
  return {};
}

QVariant BoxTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case BoxesColumn:
      return tr("Boxes");
    case VerdictColumn:
      return tr("Verdict");
    case PerBoxColumn:
      return tr("Used per box");
    case ContextColumn:
      return tr("Largest context");
    case CeilingColumn:
      return tr("Decode ceiling");
  }
  return {};
}

}  // namespace arc::app
