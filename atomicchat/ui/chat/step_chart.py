"""A small bar chart of accepted draft tokens per decode step, drawn with QPainter.

One bar per step, newest on the right; as many steps as fit the width are shown. Cheap to repaint
on every frame: it draws at most a few hundred rectangles and owns no child widgets.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

BAR_W, GAP = 3, 1
BAR_COLOUR = QColor("#2f9e44")
ZERO_COLOUR = QColor("#d0d4d9")
AXIS_COLOUR = QColor("#e3e6ea")


class StepChart(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._values: list[int] = []
        self._scale = 1
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setFixedSize(self.sizeHint())
        self.setToolTip("Accepted draft tokens per step (newest on the right)")

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(180, 22)

    def set_values(self, values: list[int], scale: int | None = None) -> None:
        """`scale`: the draft length (bar height at 100%); defaults to the largest value seen."""
        self._values = values
        self._scale = max(scale or 0, max(values[-self._capacity() :], default=0), 1)
        self.update()

    def values(self) -> list[int]:
        return list(self._values)

    def _capacity(self) -> int:
        return max(self.width() // (BAR_W + GAP), 1)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        h = self.height()
        p.fillRect(0, h - 1, self.width(), 1, AXIS_COLOUR)
        shown = self._values[-self._capacity() :]
        x = self.width() - len(shown) * (BAR_W + GAP)
        p.setPen(Qt.PenStyle.NoPen)
        for v in shown:
            if v <= 0:
                p.fillRect(QRectF(x, h - 2, BAR_W, 2), ZERO_COLOUR)
            else:
                bar = max(2.0, (h - 2) * v / self._scale)
                p.fillRect(QRectF(x, h - 1 - bar, BAR_W, bar), BAR_COLOUR)
            x += BAR_W + GAP
        p.end()
