"""One catalog pair in the model manager: quant pickers, sizes, fit estimate with numbers, and
Download with progress, speed, time left, Cancel and Resume (partial files are kept)."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

GIB = 1024**3
FIT_STYLE = {"fits_vram": "fitGood", "fits_ram": "fitWarn", "wont_fit": "fitBad"}


def human_bytes(n: float) -> str:
    if n >= GIB:
        return f"{n / GIB:.1f} GiB"
    if n >= 1024**2:
        return f"{n / 1024**2:.0f} MiB"
    return f"{n / 1024:.0f} KiB"


def human_eta(seconds: float | None) -> str:
    if seconds is None or seconds <= 0:
        return ""
    if seconds < 60:
        return f"about {int(seconds) + 1} s left"
    if seconds < 3600:
        return f"about {round(seconds / 60)} min left"
    return f"about {seconds / 3600:.1f} h left"


def progress_text(p: Any) -> str:
    if p.phase == "checking":
        return "Checking files…"
    if p.phase == "verifying":
        return f"Verifying {p.filename}… {human_bytes(p.file_done)} of {human_bytes(p.file_total)}"
    if p.phase == "done":
        return "Done"
    parts = [f"{human_bytes(p.done)} of {human_bytes(p.total)}"]
    if p.speed > 0:
        parts.append(f"{p.speed / 1024**2:.1f} MB/s")
    eta = human_eta(p.eta)
    if eta:
        parts.append(eta)
    if p.file_count > 1:
        parts.append(f"file {p.file_index + 1} of {p.file_count}")
    return " · ".join(parts)


def fit_tooltip(est: Any) -> str:
    rows = [
        ("Target weights", est.weights_target),
        ("Draft weights", est.weights_draft),
        (f"Target KV cache ({est.n_ctx} tokens)", est.kv_target),
        ("Draft KV cache", est.kv_draft),
        ("Recurrent state", est.recurrent_state),
        ("Compute buffers (estimate)", est.overhead),
    ]
    lines = [f"{name}: {human_bytes(v)}" for name, v in rows if v]
    lines.append(f"Total: {human_bytes(est.total)}" + (" (file sizes estimated)" if est.size_is_estimate else ""))
    lines.append(f"Usable here: {human_bytes(est.vram_budget)} VRAM, {human_bytes(est.ram_budget)} RAM")
    return "\n".join(lines)


class ModelCard(QFrame):
    download_requested = Signal(object, str, str)  # pair, quant, draft quant
    cancel_requested = Signal(object)  # pair
    use_requested = Signal(object, str, str)
    quant_changed = Signal(object)  # pair

    def __init__(self, pair: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pair = pair
        self.setObjectName("card")
        col = QVBoxLayout(self)
        col.setContentsMargins(14, 12, 14, 12)
        col.setSpacing(6)
        head = QHBoxLayout()
        title = QLabel(pair.name)
        title.setObjectName("cardTitle")
        head.addWidget(title)
        head.addStretch(1)
        lic = QLabel(pair.license)
        lic.setObjectName("hint")
        head.addWidget(lic)
        col.addLayout(head)
        summary = QLabel(pair.summary)
        summary.setWordWrap(True)
        summary.setObjectName("hint")
        col.addWidget(summary)

        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        self.quant = QComboBox()
        self.draft_quant = QComboBox()
        for combo, spec in ((self.quant, pair.target), (self.draft_quant, pair.draft)):
            for q in spec.quants:
                size = f"{'~' if not q.size_exact else ''}{human_bytes(q.size)}" if q.size else "size unknown"
                combo.addItem(f"{q.name}  ({size})", q.name)
                if q.notes:
                    combo.setItemData(combo.count() - 1, q.notes, Qt.ItemDataRole.ToolTipRole)
            combo.setCurrentIndex(max(combo.findData(spec.default_quant), 0))
            combo.currentIndexChanged.connect(lambda _i: self.quant_changed.emit(self.pair))
        grid.addWidget(QLabel(f"Target: {pair.target.name}"), 0, 0)
        grid.addWidget(self.quant, 0, 1)
        grid.addWidget(QLabel(f"Draft: {pair.draft.name}"), 1, 0)
        grid.addWidget(self.draft_quant, 1, 1)
        grid.setColumnStretch(2, 1)
        col.addLayout(grid)
        self.size = QLabel()
        col.addWidget(self.size)
        self.fit = QLabel("Checking this computer…")
        self.fit.setWordWrap(True)
        col.addWidget(self.fit)

        row = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setVisible(False)
        row.addWidget(self.progress, 1)
        self.state = QLabel()
        self.state.setWordWrap(True)
        row.addWidget(self.state, 2)
        self.download = QPushButton("Download")
        self.download.clicked.connect(self._download)
        row.addWidget(self.download)
        self.cancel = QPushButton("Cancel")
        self.cancel.clicked.connect(lambda: self.cancel_requested.emit(self.pair))
        self.cancel.setVisible(False)
        row.addWidget(self.cancel)
        self.use = QPushButton("Use this model")
        self.use.clicked.connect(lambda: self.use_requested.emit(self.pair, self.quant_name(), self.draft_quant_name()))
        self.use.setVisible(False)
        row.addWidget(self.use)
        col.addLayout(row)
        self._update_size()
        self.quant_changed.connect(lambda _p: self._update_size())

    def quant_name(self) -> str:
        return str(self.quant.currentData())

    def draft_quant_name(self) -> str:
        return str(self.draft_quant.currentData())

    def _update_size(self) -> None:
        t = self.pair.target.quant(self.quant_name())
        d = self.pair.draft.quant(self.draft_quant_name())
        if t.size and d.size:
            approx = "about " if not (t.size_exact and d.size_exact) else ""
            self.size.setText(
                f"Download: {approx}{human_bytes(t.size + d.size)} (target {human_bytes(t.size)} + draft {human_bytes(d.size)})"
            )
        else:
            self.size.setText("Download size: unknown until the catalog is refreshed")

    def _download(self) -> None:
        self.download_requested.emit(self.pair, self.quant_name(), self.draft_quant_name())

    # state from the manager ---------------------------------------------------------------
    def set_fit(self, est: Any | None, problem: str = "") -> None:
        if est is None:
            self.fit.setText(problem or "Fit unknown.")
            self.fit.setObjectName("hint")
            self.fit.setToolTip("")
        else:
            self.fit.setText(est.message)
            self.fit.setObjectName(FIT_STYLE.get(getattr(est.verdict, "value", str(est.verdict)), "hint"))
            self.fit.setToolTip(fit_tooltip(est))
        self.fit.style().unpolish(self.fit)
        self.fit.style().polish(self.fit)

    def set_idle(self, installed: bool, current: bool = False, pending: int = 0, note: str = "") -> None:
        self.progress.setVisible(False)
        self.cancel.setVisible(False)
        self.quant.setEnabled(True)
        self.draft_quant.setEnabled(True)
        self.download.setVisible(not installed)
        self.download.setEnabled(True)
        self.use.setVisible(installed)
        self.use.setEnabled(not current)
        self.use.setText("In use" if current else "Use this model")
        if note:
            self.state.setText(note)
        elif installed:
            self.state.setText("Installed ✓")
        else:
            self.state.setText("")
        self.download.setText("Resume" if pending else "Download")

    def set_downloading(self) -> None:
        self.quant.setEnabled(False)
        self.draft_quant.setEnabled(False)
        self.download.setVisible(False)
        self.use.setVisible(False)
        self.cancel.setVisible(True)
        self.cancel.setEnabled(True)
        self.progress.setVisible(True)
        self.progress.setValue(0)
        self.state.setText("Starting…")

    def set_progress(self, p: Any) -> None:
        self.progress.setValue(int(1000 * max(0.0, min(p.fraction, 1.0))))
        self.state.setText(progress_text(p))

    def set_cancelling(self) -> None:
        self.cancel.setEnabled(False)
        self.state.setText("Cancelling…")

    def set_paused(self, message: str) -> None:
        self.set_idle(installed=False, pending=1, note=message)

    def set_error(self, message: str) -> None:
        self.set_idle(installed=False, note="")
        self.state.setText(f'<span style="color:#b42318;">{html.escape(message)}</span>')
