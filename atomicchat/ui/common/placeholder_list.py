"""A list that says what belongs in it while it is empty.

The Hub search results are a tall list under the search field; before a search, or after one that
found nothing (offline, no match), a blank white box reads as something broken. Like QLineEdit's
placeholder, the text is drawn in the palette's placeholder colour and goes away with the first item.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QListWidget, QWidget


class PlaceholderList(QListWidget):
    def __init__(self, placeholder: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._placeholder = placeholder

    def placeholderText(self) -> str:
        return self._placeholder

    def setPlaceholderText(self, text: str) -> None:
        self._placeholder = text
        self.viewport().update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.count() or not self._placeholder:
            return
        painter = QPainter(self.viewport())
        painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
        area = self.viewport().rect().adjusted(16, 16, -16, -16)
        painter.drawText(area, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self._placeholder)
        painter.end()
