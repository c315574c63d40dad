"""A dismissable strip above the chat for errors, warnings and Undo offers.

Errors stay until dismissed; info notices may time out. It never blocks the window (no modal box).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

KINDS = ("info", "warning", "error")


class NoticeBar(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notice")
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 6, 6, 6)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.label, 1)
        self.action = QPushButton()
        self.action.setVisible(False)
        row.addWidget(self.action)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.dismiss)
        row.addWidget(self.close_button)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.dismiss)
        self._on_action: Callable[[], None] | None = None
        self.action.clicked.connect(self._run_action)
        self.kind = "info"
        self.setVisible(False)

    def show_notice(
        self,
        text: str,
        kind: str = "info",
        action: str = "",
        on_action: Callable[[], None] | None = None,
        timeout_ms: int = 0,
    ) -> None:
        self.kind = kind if kind in KINDS else "info"
        self.setProperty("kind", self.kind)
        self.style().unpolish(self)
        self.style().polish(self)
        self.label.setText(text)
        self.action.setText(action)
        self.action.setVisible(bool(action))
        self._on_action = on_action
        self._timer.stop()
        if timeout_ms:
            self._timer.start(timeout_ms)
        self.setVisible(True)

    def text(self) -> str:
        return self.label.text() if self.isVisible() else ""

    def dismiss(self) -> None:
        self._timer.stop()
        self._on_action = None
        self.setVisible(False)

    def _run_action(self) -> None:
        callback = self._on_action
        self.dismiss()
        if callback is not None:
            callback()
