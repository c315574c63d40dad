"""Draws a chat list row: the title on the left (elided) and its relative time on the right, muted."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QRect, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

TIME_ROLE = Qt.ItemDataRole.UserRole + 1


class ChatListDelegate(QStyledItemDelegate):
    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        when = index.data(TIME_ROLE) or ""
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        gap = opt.fontMetrics.horizontalAdvance(when + "  ") + 8 if when else 0
        opt.text = ""
        style = opt.widget.style() if opt.widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        text_rect = option.rect.adjusted(10, 0, -gap - 6, 0)
        title = opt.fontMetrics.elidedText(str(index.data() or ""), Qt.TextElideMode.ElideRight, text_rect.width())
        painter.save()
        painter.setPen(option.palette.color(QPalette.ColorRole.Text))
        painter.drawText(text_rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), title)
        if when:
            painter.setPen(option.palette.color(QPalette.ColorRole.PlaceholderText))
            r = QRect(option.rect.right() - gap, option.rect.top(), gap - 6, option.rect.height())
            painter.drawText(r, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight), when)
        painter.restore()
