"""The message box: Enter sends, Shift+Enter adds a line, Esc stops a reply being written.

The Send button turns into Stop while a reply streams. The box grows with its text up to a few
lines and then scrolls. Text files can be attached (the Attach button, or dropped on the box): each
shows as a chip above the box until it is sent, inside the message (atomicchat.attachments).
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QDropEvent, QKeyEvent
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QPlainTextEdit, QPushButton, QSizePolicy
from PySide6.QtWidgets import QToolButton, QVBoxLayout, QWidget

from atomicchat import attachments
from atomicchat.attachments import Attachment, AttachmentError
from atomicchat.ui.chat.attachment_chip import AttachmentChip, show_chips
from atomicchat.ui.common.flow_layout import FlowLayout

MAX_LINES = 8
PLACEHOLDER = "Message Atomic Chat…  (Enter to send, Shift+Enter for a new line)"


class Composer(QWidget):
    send_requested = Signal(str)
    stop_requested = Signal()
    notice = Signal(str, str)  # kind, sentence: a file that could not be attached

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self.files: list[Attachment] = []
        self._n_ctx: int | None = None
        col = QVBoxLayout(self)
        col.setContentsMargins(12, 8, 12, 12)
        col.setSpacing(6)
        self.chips = QWidget()
        self.chips_layout = FlowLayout(self.chips, spacing=6, line_spacing=4)
        self.chips.setVisible(False)
        col.addWidget(self.chips)
        row = QHBoxLayout()
        row.setSpacing(8)
        col.addLayout(row)
        self.attach_button = QToolButton()
        self.attach_button.setObjectName("attachButton")
        self.attach_button.setText("Attach")
        self.attach_button.setToolTip("Attach text files: code, notes, Markdown, CSV, JSON… (Ctrl+O, or drop them on the box)")
        self.attach_button.clicked.connect(self.choose_files)
        row.addWidget(self.attach_button, 0, Qt.AlignmentFlag.AlignBottom)
        self.edit = QPlainTextEdit()
        self.edit.setObjectName("composerEdit")
        self.edit.setPlaceholderText(PLACEHOLDER)
        self.edit.setTabChangesFocus(True)
        self.edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.edit.installEventFilter(self)
        self.edit.viewport().installEventFilter(self)  # file drops land on the viewport
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

    def set_context(self, n_ctx: int | None) -> None:
        """The loaded model's context, against which a file too big to ever fit is refused."""
        self._n_ctx = n_ctx

    # attachments -------------------------------------------------------------------------
    def attach(self, paths: list[Path]) -> None:
        for path in paths:
            try:
                file = attachments.read(path, self._n_ctx)
            except AttachmentError as exc:
                self.notice.emit("warning", str(exc))
                continue
            if file not in self.files:
                self.files.append(file)
        self._show_files()

    def choose_files(self) -> None:
        names, _ = QFileDialog.getOpenFileNames(self, "Attach text files", str(Path.home()), "All files (*)")
        self.attach([Path(n) for n in names])
        self.focus()

    def _remove(self, file: Attachment) -> None:
        self.files = [f for f in self.files if f is not file]
        self._show_files()

    def _show_files(self) -> None:
        show_chips(self.chips_layout, self.files, on_remove=self._remove)
        self._update_button()

    def chip_widgets(self) -> list[AttachmentChip]:
        items = (self.chips_layout.itemAt(i) for i in range(self.chips_layout.count()))
        return [w for w in (it.widget() for it in items if it is not None) if isinstance(w, AttachmentChip)]

    def set_text(self, text: str) -> None:
        self.edit.setPlainText(text)

    def focus(self) -> None:
        self.edit.setFocus()

    def _update_button(self) -> None:
        if self._busy:
            self.button.setEnabled(True)
        else:
            self.button.setEnabled(self._ready and bool(self.text().strip() or self.files))

    # actions -----------------------------------------------------------------------------
    def _on_button(self) -> None:
        if self._busy:
            self.stop_requested.emit()
        else:
            self._send()

    def _send(self) -> None:
        text = self.text().strip()
        if not (text or self.files) or self._busy or not self._ready:
            return
        content = attachments.compose(text, self.files)
        self.edit.clear()
        self.files = []
        self._show_files()
        self.send_requested.emit(content)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if obj is self.edit.viewport() and event.type() in (QEvent.Type.DragEnter, QEvent.Type.DragMove,
                                                               QEvent.Type.Drop):
            drop: QDropEvent = event  # type: ignore[assignment]
            files = [Path(u.toLocalFile()) for u in drop.mimeData().urls() if u.isLocalFile()]
            if files and all(f.is_file() for f in files):  # files become attachments, not their paths as text
                drop.acceptProposedAction()
                if event.type() == QEvent.Type.Drop:
                    self.attach(files)
                return True
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
