"""A one-line label that gives up width before its row does: its text is shortened with "…".

A reply's header holds the model's name, a status ("stopped at the reply length limit") and up to three
buttons; in a narrow window a label that insists on its whole text pushes the reply wider than the
chat, and the buttons and the text run off the right edge. The whole text stays in the tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    MIN_CHARS = "stopp…"  # about what the label keeps at its narrowest

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def text(self) -> str:  # type: ignore[override]
        return self._full

    def setText(self, text: str) -> None:  # type: ignore[override]
        self._full = text
        super().setText(text)
        self._fit()
        self.updateGeometry()

    def full_width(self) -> int:
        return self._padding() + self.fontMetrics().horizontalAdvance(self._full)

    def _padding(self) -> int:
        """What the style adds around the text (stylesheet padding, margins): hint minus the text shown."""
        return max(0, super().sizeHint().width() - self.fontMetrics().horizontalAdvance(super().text()))

    def sizeHint(self) -> QSize:
        return QSize(self.full_width(), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        width = self._padding() + self.fontMetrics().horizontalAdvance(self.MIN_CHARS)
        return QSize(min(width, self.full_width()), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        room = self.width() - self._padding()
        shown = self._full if room >= self.fontMetrics().horizontalAdvance(self._full) else \
            self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, max(room, 0))
        if shown != super().text():
            QLabel.setText(self, shown)
        cut, tip = shown != self._full, self.toolTip()
        if cut and not tip:  # a tooltip someone set is kept; this one only says what was cut
            self.setToolTip(self._full)
        elif not cut and tip == self._full:
            self.setToolTip("")
