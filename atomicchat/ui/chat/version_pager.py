"""‹ 2/3 ›: page through the versions of a message (regenerated replies, edited questions)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget


class VersionPager(QWidget):
    page_requested = Signal(int)  # the 0-based version to show

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        self.prev = QToolButton()
        self.prev.setText("‹")
        self.prev.setAutoRaise(True)
        self.prev.setToolTip("Previous version")
        self.label = QLabel()
        self.label.setObjectName("hint")
        self.next = QToolButton()
        self.next.setText("›")
        self.next.setAutoRaise(True)
        self.next.setToolTip("Next version")
        for w in (self.prev, self.label, self.next):
            row.addWidget(w)
        self.index, self.count = 0, 1
        self.prev.clicked.connect(lambda: self.page_requested.emit(self.index - 1))
        self.next.clicked.connect(lambda: self.page_requested.emit(self.index + 1))
        self.set_state(0, 1)

    def set_state(self, index: int, count: int) -> None:
        self.index, self.count = index, count
        self.label.setText(f"{index + 1}/{count}")
        self.prev.setEnabled(index > 0)
        self.next.setEnabled(index < count - 1)
        self.setVisible(count > 1)

    def set_enabled(self, on: bool) -> None:
        """No paging while a reply is being written."""
        self.prev.setEnabled(on and self.index > 0)
        self.next.setEnabled(on and self.index < self.count - 1)
