// Draws a conversation in the Chat page's list: its title, and below it in the muted colour when
// it last changed (ConversationListModel::DateTextRole).
#pragma once

#include <QStyledItemDelegate>

namespace arc::app {

class ConversationDelegate : public QStyledItemDelegate {
  Q_OBJECT
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* painter, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
};

}  // namespace arc::app
