#include "BenchCompareModel.h"

#include <QLocale>

#include <cmath>

#include "NumberFormat.h"

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
  m_titleA = runLabel(a);
  m_titleB = runLabel(b);
  m_fullA = a.title();
  m_fullB = b.title();
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
  auto fmt = [](double v, int d) { return std::isnan(v) ? QStringLiteral("–") : decimal(v, d); };
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
                                      .arg(decimal(change, 1));
    case TtftAColumn:
      return fmt(row.a && row.a->ttftMs.valid ? row.a->ttftMs.median : std::nan(""), 0);
    case TtftBColumn:
      return fmt(row.b && row.b->ttftMs.valid ? row.b->ttftMs.median : std::nan(""), 0);
  }
  return {};
}

QString BenchCompareModel::runLabel(const BenchRun& run) {
  // The model's short name (no folder, no .gguf) and when it ran: enough to tell two runs apart.
  QString model = run.model.section(QLatin1Char('/'), -1);
  if (model.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) model.chop(5);
  const QString when = QLocale().toString(run.date.toLocalTime(), QLocale::ShortFormat);
  return model.isEmpty() ? when : QStringLiteral("%1, %2").arg(model, when);
}

QVariant BenchCompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return {};
  const bool a = section == RateAColumn || section == TtftAColumn;
  const bool b = section == RateBColumn || section == TtftBColumn;
  if (role == Qt::ToolTipRole) return a ? m_fullA : b ? m_fullB : QVariant();
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case ScenarioColumn:
      return tr("Scenario");
    case RateAColumn:
      return tr("Tokens/s\n%1").arg(m_titleA);
    case RateBColumn:
      return tr("Tokens/s\n%1").arg(m_titleB);
    case RateChangeColumn:
      return tr("Change");
    case TtftAColumn:
      return tr("TTFT ms\n%1").arg(m_titleA);
    case TtftBColumn:
      return tr("TTFT ms\n%1").arg(m_titleB);
  }
  return {};
}

}  // namespace arc::app
