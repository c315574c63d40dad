"""One installed target in the model manager: its files, a draft picker, Use and Remove.

The draft picker lists the drafts checked to pair with this target, "no draft", and then every
other installed draft (marked "does not pair" when an import already found why); picking one
runs the pairing check, or shows the known reason, and the verdict is in words,
so a draft that cannot pair says why instead of failing at load time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from atomicchat.ui.models.model_card import human_bytes

NO_DRAFT = ""


class InstalledRow(QFrame):
    use_requested = Signal(object, object)  # target Path, draft Path | None
    remove_requested = Signal(str)  # registry key ("" for the demo)
    check_requested = Signal(object, object)  # target Path, draft Path: ask the manager to run the pair check

    def __init__(
        self,
        name: str,
        target: Path,
        detail: str,
        paired: list[tuple[str, Path]],
        others: list[tuple[str, Path]],
        key: str = "",
        intact: bool = True,
        missing: bool = False,
        parent: QWidget | None = None,
        problems: dict[str, str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.target = target
        self.key = key
        col = QVBoxLayout(self)
        col.setContentsMargins(12, 10, 12, 10)
        col.setSpacing(4)
        head = QHBoxLayout()
        title = QLabel(name)
        title.setObjectName("cardTitle")
        head.addWidget(title)
        head.addStretch(1)
        self.use = QPushButton("Use")
        self.use.clicked.connect(self._use)
        head.addWidget(self.use)
        self.remove = QPushButton("Remove")
        self.remove.setVisible(bool(key))
        self.remove.clicked.connect(lambda: self.remove_requested.emit(self.key))
        head.addWidget(self.remove)
        self.open_folder = QPushButton("Open folder")
        self.open_folder.setToolTip(str(target.parent))
        self.open_folder.clicked.connect(self._open_folder)
        self.open_folder.setEnabled(target.parent.is_dir())
        head.addWidget(self.open_folder)
        col.addLayout(head)
        if missing:  # deleted or moved outside the app: say so plainly, it is not an error of the app
            text = f"Missing: {target.name} is no longer at {target.parent}. Remove forgets it; import it again if you moved it."
        elif not intact:
            text = f"{detail} · the file changed since it was checked; import it again"
        else:
            text = detail
        info = QLabel(text)
        info.setObjectName("hint" if intact or missing else "fitBad")
        self.info = info
        info.setWordWrap(True)
        col.addWidget(info)
        row = QHBoxLayout()
        row.addWidget(QLabel("Draft:"))
        self.draft = QComboBox()
        for label, path in paired:
            self.draft.addItem(f"{label}  (pairs ✓)", str(path))
        self.draft.addItem("No draft (target only, no speedup)", NO_DRAFT)
        self._problems = dict(problems or {})  # draft path -> why it cannot pair (an import said so)
        for label, path in others:
            known = str(path) in self._problems
            self.draft.addItem(f"{label}  ({'does not pair' if known else 'not checked with this target'})", str(path))
        self.draft.currentIndexChanged.connect(self._on_draft)
        row.addWidget(self.draft, 1)
        col.addLayout(row)
        self.reason = QLabel()
        self.reason.setWordWrap(True)
        self.reason.setVisible(False)
        col.addWidget(self.reason)
        self._usable = intact and not missing
        self.use.setEnabled(self._usable)
        self._paired = {str(p) for _, p in paired}

    def selected_draft(self) -> Path | None:
        data = self.draft.currentData()
        return Path(data) if data else None

    def select_draft(self, path: Path | None) -> None:
        i = self.draft.findData(str(path) if path else NO_DRAFT)
        if i >= 0:
            self.draft.setCurrentIndex(i)

    def set_current(self, current: bool) -> None:
        self.use.setText("In use" if current else "Use")
        self.use.setEnabled(not current and self._usable)

    def _on_draft(self, _i: int) -> None:
        draft = self.selected_draft()
        if draft is None or str(draft) in self._paired:
            self.reason.setVisible(False)
            self.use.setEnabled(self._usable)
            return
        if str(draft) in self._problems:  # already known: say why at once, no second check
            self.reason.setVisible(True)
            self.set_pair_verdict(draft, self._problems[str(draft)])
            return
        self.reason.setText("Checking whether this draft pairs with the target…")
        self.reason.setObjectName("hint")
        self.reason.setVisible(True)
        self.use.setEnabled(False)
        self.check_requested.emit(self.target, draft)

    def set_pair_verdict(self, draft: Path, problem: str | None) -> None:
        """The manager's answer to check_requested."""
        if self.selected_draft() != draft:
            return
        if problem:
            self.reason.setText(f"This draft cannot pair with the target: {problem}")
            self.reason.setObjectName("fitBad")
            self.use.setEnabled(False)
        else:
            self.reason.setText("This draft pairs with the target ✓")
            self.reason.setObjectName("fitGood")
            self._paired.add(str(draft))
            self.use.setEnabled(self._usable)
        self.reason.style().unpolish(self.reason)
        self.reason.style().polish(self.reason)

    def _open_folder(self) -> None:
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.target.parent)))

    def _use(self) -> None:
        self.use_requested.emit(self.target, self.selected_draft())


def describe(f: Any) -> str:
    """Size on disk, origin, verification and last use of a registry file, in a few words."""
    from atomicchat.chat_titles import relative_time

    origin = f"{f.repo} · {f.quant}" if f.source == "hub" and f.repo else f"imported from {Path(f.path).parent}"
    check = "verified" if f.verified else "not verified"
    used = f"last used {relative_time(f.last_used)}" if getattr(f, "last_used", 0) else "never used"
    return f"{human_bytes(f.size)} on disk · {origin} · {check} · {used}"
