"""The message box: Enter sends, Shift+Enter adds a line, Esc stops a reply being written.

The Send button turns into Stop while a reply streams. The box grows with its text up to a few
lines and then scrolls.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QSizePolicy, QWidget

MAX_LINES = 8
PLACEHOLDER = "Message Atomic Chat…  (Enter to send, Shift+Enter for a new line)"


class Composer(QWidget):
    send_requested = Signal(str)
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 8, 12, 12)
        row.setSpacing(8)
        self.edit = QPlainTextEdit()
        self.edit.setObjectName("composerEdit")
        self.edit.setPlaceholderText(PLACEHOLDER)
        self.edit.setTabChangesFocus(True)
        self.edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.edit.installEventFilter(self)
        self.edit.document().documentLayout().documentSizeChanged.connect(self._fit)
        row.addWidget(self.edit, 1)
        self.button = QPushButton("Send")
        self.button.setObjectName("sendButton")
        self.button.setMinimumWidth(84)
        self.button.clicked.connect(self._on_button)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        self.edit.textChanged.connect(self._update_button)
        self._busy = False
        self._ready = True
        self._fit()
        self._update_button()

    # state -------------------------------------------------------------------------------
    def set_busy(self, busy: bool) -> None:
        """While busy the button is Stop and Enter does not send."""
        self._busy = busy
        self.button.setText("Stop" if busy else "Send")
        self.button.setToolTip("Stop writing the reply (Esc)" if busy else "Send (Enter)")
        self._update_button()

    def set_ready(self, ready: bool, placeholder: str = "") -> None:
        """Sending needs a loaded model; `placeholder` tells why it is not possible yet."""
        self._ready = ready
        self.edit.setPlaceholderText(placeholder or PLACEHOLDER)
        # QPlainTextEdit repaints only when the placeholder's visibility changes, not its text:
        # without this the old "Loading the model…" stays on screen after the model is ready.
        self.edit.viewport().update()
        self._update_button()

    def text(self) -> str:
        return self.edit.toPlainText()

    def set_text(self, text: str) -> None:
        self.edit.setPlainText(text)

    def focus(self) -> None:
        self.edit.setFocus()

    def _update_button(self) -> None:
        if self._busy:
            self.button.setEnabled(True)
        else:
            self.button.setEnabled(self._ready and bool(self.text().strip()))

    # actions -----------------------------------------------------------------------------
    def _on_button(self) -> None:
        if self._busy:
            self.stop_requested.emit()
        else:
            self._send()

    def _send(self) -> None:
        text = self.text().strip()
        if not text or self._busy or not self._ready:
            return
        self.edit.clear()
        self.send_requested.emit(text)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if obj is self.edit and event.type() == QEvent.Type.KeyPress:
            key_event: QKeyEvent = event  # type: ignore[assignment]
            key = key_event.key()
            mods = key_event.modifiers()
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if mods & Qt.KeyboardModifier.ShiftModifier:
                    return False  # newline
                if not mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
                    self._send()
                    return True
            if key == Qt.Key.Key_Escape and self._busy:
                self.stop_requested.emit()
                return True
        return super().eventFilter(obj, event)

    def _fit(self, *_: object) -> None:
        doc = self.edit.document()
        line = self.edit.fontMetrics().lineSpacing()
        lines = min(max(int(doc.size().height()), 1), MAX_LINES)
        margins = self.edit.contentsMargins()
        height = math.ceil(lines * line + 2 * doc.documentMargin() + margins.top() + margins.bottom() + 4)
        self.edit.setFixedHeight(max(height, line * 2 + 12))
