#include "ConversationDelegate.h"

#include <QApplication>
#include <QPainter>

#include "ConversationListModel.h"

namespace arc::app {

namespace {
QFont smallerFont(const QFont& f) {
  QFont small = f;
  if (f.pointSizeF() > 0)
    small.setPointSizeF(f.pointSizeF() * 0.85);
  else if (f.pixelSize() > 0)
    small.setPixelSize(qMax(1, int(f.pixelSize() * 0.85)));
  return small;
}
}  // namespace

void ConversationDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                                 const QModelIndex& index) const {
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);
  const QString title = opt.text;
  opt.text.clear();
  const QWidget* w = opt.widget;
  QStyle* style = w ? w->style() : QApplication::style();
  style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, w);  // background and selection

  const QRect r = opt.rect.adjusted(6, 3, -6, -3);
  const QFontMetrics fm(opt.font);
  const bool selected = opt.state & QStyle::State_Selected;
  const QPalette::ColorRole text = selected ? QPalette::HighlightedText : QPalette::Text;
  painter->save();
  painter->setFont(opt.font);
  painter->setPen(opt.palette.color(text));
  painter->drawText(QRect(r.left(), r.top(), r.width(), fm.height()),
                    Qt::AlignLeft | Qt::AlignVCenter,
                    fm.elidedText(title, Qt::ElideRight, r.width()));
  const QFont small = smallerFont(opt.font);
  painter->setFont(small);
  QColor muted = opt.palette.color(text);
  muted.setAlphaF(0.6f);
  painter->setPen(muted);
  painter->drawText(QRect(r.left(), r.top() + fm.height(), r.width(), QFontMetrics(small).height()),
                    Qt::AlignLeft | Qt::AlignVCenter,
                    index.data(ConversationListModel::DateTextRole).toString());
  painter->restore();
}

QSize ConversationDelegate::sizeHint(const QStyleOptionViewItem& option,
                                     const QModelIndex& index) const {
  QSize s = QStyledItemDelegate::sizeHint(option, index);
  const QFont small = smallerFont(option.font);
  s.setHeight(QFontMetrics(option.font).height() + QFontMetrics(small).height() + 8);
  return s;
}

}  // namespace arc::app
