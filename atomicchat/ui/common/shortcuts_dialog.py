"""Help > Keyboard shortcuts: every shortcut of the window's actions, read from the actions themselves
(so the list cannot drift from what the keys do), plus the composer's and the editor's keys."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHeaderView, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

FIXED = (
    ("Send the message", "Enter"),
    ("New line in the message", "Shift+Enter"),
    ("Save an edited message and regenerate", "Ctrl+Enter"),
    ("Cancel editing", "Esc"),
    ("Rename the selected chat (chat list)", "F2"),
    ("Delete the selected chat (chat list)", "Del"),
)


def shortcut_rows(actions: list[QAction]) -> list[tuple[str, str]]:
    rows = []
    for a in actions:
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in a.shortcuts() if not k.isEmpty()]
        if keys:
            rows.append((a.text().replace("&", "").rstrip("…"), " / ".join(keys)))
    return rows + list(FIXED)


class ShortcutsDialog(QDialog):
    def __init__(self, actions: list[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(actions)
        col = QVBoxLayout(self)
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(["Action", "Keys"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for r, (what, keys) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(what))
            self.table.setItem(r, 1, QTableWidgetItem(keys))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        col.addWidget(self.table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        col.addWidget(buttons)
        self.resize(480, 440)
