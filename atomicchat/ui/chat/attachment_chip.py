"""One attached file, as a small rounded label: its name and size in lines, and a ✕ to take it off
(in the composer) or nothing (under a sent message). The tooltip shows the file's first lines."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QToolButton, QWidget

from atomicchat.attachments import Attachment
from atomicchat.ui.common.elided_label import ElidedLabel
from atomicchat.ui.common.flow_layout import FlowLayout

PREVIEW_LINES = 12
MAX_WIDTH = 320  # a long file name is shortened with "…" (the tooltip has it whole), never the window widened


class AttachmentChip(QFrame):
    remove_requested = Signal()

    def __init__(self, file: Attachment, removable: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.file = file
        self.setObjectName("attachmentChip")
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 2, 4 if removable else 8, 2)
        row.setSpacing(4)
        self.setMaximumWidth(MAX_WIDTH)
        self.label = ElidedLabel(file.label())
        row.addWidget(self.label, 1)
        head = file.text.split("\n")[:PREVIEW_LINES]
        more = "\n…" if file.lines > PREVIEW_LINES else ""
        self.setToolTip(f"{file.name} ({file.tokens_estimate:,} tokens, roughly)\n\n" + "\n".join(head) + more)
        self.remove: QToolButton | None = None
        if removable:
            self.remove = QToolButton()
            self.remove.setObjectName("chipRemove")
            self.remove.setText("✕")
            self.remove.setToolTip(f"Do not attach {file.name}")
            self.remove.setAutoRaise(True)
            self.remove.clicked.connect(self.remove_requested)
            row.addWidget(self.remove)


def show_chips(row: FlowLayout, files: list[Attachment], on_remove: Callable[[Attachment], None] | None = None) -> None:
    """Fill `row` (a FlowLayout on its own widget) with one chip a file, removable when `on_remove` is
    given (the composer) and not under a sent message; the widget shows only when there are files."""
    row.clear()
    for file in files:
        chip = AttachmentChip(file, removable=on_remove is not None)
        if on_remove is not None:
            chip.remove_requested.connect(lambda f=file: on_remove(f))
        row.addWidget(chip)
    row.parentWidget().setVisible(bool(files))
