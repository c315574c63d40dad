"""Model manager ▸ Search the Hub: any GGUF repo on Hugging Face, its quants with size and a fit
verdict read from the file's own header (a Range request, no download), the DFlash draft known for
it, and one click to download the quant (plus the draft).

Blocking calls run on the manager's thread pool (qasync); a newer search or pick replaces the result
of an older one, so a slow answer never overwrites a fresh one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from atomicchat.ui import async_tasks
from atomicchat.ui.model_card import FIT_STYLE, human_bytes, progress_text


def _hint(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setObjectName("hint")
    label.setWordWrap(True)
    return label


class HubSearchPanel(QWidget):
    downloaded = Signal(object, object)  # target Path, draft Path | None

    def __init__(self, runner: Any, n_ctx: Callable[[], int], message: Callable[[BaseException], str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._n_ctx = n_ctx
        self._message = message
        self._seq = 0  # newest request wins
        self._hit: Any = None
        self._offer: Any = None
        self._cancel: threading.Event | None = None
        col = QVBoxLayout(self)
        col.setContentsMargins(12, 12, 12, 12)
        row = QHBoxLayout()
        self.query = QLineEdit()
        self.query.setPlaceholderText("Search Hugging Face: a name (qwen3.5), owner/repo, or a link")
        self.query.returnPressed.connect(self.search)
        row.addWidget(self.query, 1)
        self.search_button = QPushButton("Search")
        self.search_button.clicked.connect(self.search)
        row.addWidget(self.search_button)
        col.addLayout(row)
        self.status = _hint("Results show GGUF repos sorted by downloads. Nothing is downloaded until you ask.")
        col.addWidget(self.status)
        self.results = QListWidget()
        self.results.setMinimumHeight(120)
        self.results.setWordWrap(True)
        self.results.currentItemChanged.connect(lambda cur, _prev: self._pick(cur))
        col.addWidget(self.results, 1)

        self.detail = QWidget()
        d = QVBoxLayout(self.detail)
        d.setContentsMargins(0, 6, 0, 0)
        self.repo_label = QLabel()
        self.repo_label.setObjectName("cardTitle")
        self.repo_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        d.addWidget(self.repo_label)
        qrow = QHBoxLayout()
        qrow.addWidget(QLabel("Quant"))
        self.quant = QComboBox()
        self.quant.currentIndexChanged.connect(lambda _i: self._quant_changed())
        qrow.addWidget(self.quant, 1)
        d.addLayout(qrow)
        self.fit = _hint()
        d.addWidget(self.fit)
        self.advice = _hint()
        d.addWidget(self.advice)
        self.with_draft = QCheckBox("with DFlash draft")
        self.with_draft.toggled.connect(lambda _on: self._quant_changed())
        d.addWidget(self.with_draft)
        self.draft_text = _hint()
        d.addWidget(self.draft_text)
        brow = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setVisible(False)
        brow.addWidget(self.progress, 1)
        self.progress_label = _hint()
        brow.addWidget(self.progress_label, 1)
        self.download_button = QPushButton("Download")
        self.download_button.clicked.connect(self.download)
        brow.addWidget(self.download_button)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel)
        brow.addWidget(self.cancel_button)
        d.addLayout(brow)
        self.detail.setVisible(False)
        col.addWidget(self.detail)

    # search ------------------------------------------------------------------------------
    def search(self) -> None:
        text = self.query.text().strip()
        if not text:
            self.status.setText("Type a model name (e.g. qwen3.5), an owner/name repo id, or a Hub link.")
            return
        self._seq += 1
        self.status.setText("Searching…")
        self.search_button.setEnabled(False)
        async_tasks.start(self._search(text, self._seq))

    async def _search(self, text: str, seq: int) -> None:
        from atomicchat.models import hub_search
        from atomicchat.models.drafts import draft_offer

        try:
            result = await self._runner.run(hub_search.search, text)
        except Exception as exc:  # noqa: BLE001 - shown as its sentence
            if seq == self._seq:
                self.status.setText(self._message(exc))
                self.search_button.setEnabled(True)
            return
        if seq != self._seq:
            return
        self.search_button.setEnabled(True)
        self.results.clear()
        self.detail.setVisible(False)
        for h in result.hits:
            bits = [f"{h.downloads:,} downloads", h.license or "licence unknown"]
            if h.gated:
                bits.append("gated: accept its terms on the Hub first")
            offer = draft_offer(h.repo_id)
            if offer.file is not None:
                bits.append("DFlash draft available")
            elif offer.draft is not None:
                bits.append("a DFlash draft exists, not as a GGUF this app loads")
            item = QListWidgetItem(f"{h.repo_id}\n    " + " · ".join(bits))
            item.setData(Qt.ItemDataRole.UserRole, h)
            self.results.addItem(item)
        n = len(result.hits)
        found = f"{n} GGUF repo{'s' if n != 1 else ''}" if n else f"No GGUF models on the Hub match '{text}'."
        self.status.setText(" ".join(x for x in (result.note, found if n else found) if x))
        if n == 1:
            self.results.setCurrentRow(0)

    # details -----------------------------------------------------------------------------
    def _pick(self, item: QListWidgetItem | None) -> None:
        if item is None:
            return
        hit = item.data(Qt.ItemDataRole.UserRole)
        self._seq += 1
        if hit.quants is None:
            self._show_pending(hit.repo_id, "Listing its files…")
            async_tasks.start(self._details(hit.repo_id, self._seq))
        else:
            self._show(hit)

    async def _details(self, repo_id: str, seq: int) -> None:
        from atomicchat.models import hub_search

        try:
            result = await self._runner.run(hub_search.repo_details, repo_id)
        except Exception as exc:  # noqa: BLE001
            if seq == self._seq:
                self._show_pending(repo_id, self._message(exc))
            return
        if seq == self._seq and result.hits:
            self._show(result.hits[0])
            if result.note:
                self.fit.setText(result.note + " " + self.fit.text())

    def _show_pending(self, repo_id: str, text: str) -> None:
        """The repo's title with one line (listing, or why its files cannot be listed)."""
        self._hit = None
        self.repo_label.setText(repo_id)
        self.quant.clear()
        for w in (self.with_draft, self.progress):
            w.setVisible(False)
        self.advice.setText("")
        self.draft_text.setText("")
        self.download_button.setEnabled(False)
        self.fit.setText(text)
        self.detail.setVisible(True)

    def _show(self, hit: Any) -> None:
        from atomicchat.models.drafts import draft_offer

        self._hit, self._offer = hit, draft_offer(hit.repo_id)
        self.repo_label.setText(hit.repo_id + (" · " + hit.license if hit.license else ""))
        self.quant.blockSignals(True)
        self.quant.clear()
        for q in hit.quants or ():
            size = human_bytes(q.size) if q.size else "size unknown"
            self.quant.addItem(f"{q.quant} · {size}" + (f" · {len(q.files)} parts" if q.split else ""), q)
        self.quant.blockSignals(False)
        has = bool(hit.quants)
        self.download_button.setEnabled(has)
        self.with_draft.setVisible(self._offer.file is not None)
        self.with_draft.setChecked(self._offer.file is not None)
        self.draft_text.setText(self._offer.text)
        extra = f" Vision projector files ({', '.join(hit.mmproj)}) are not chat models and are not offered." \
            if hit.mmproj else ""
        self.fit.setText(("" if has else "This repository has no GGUF chat model files.") + extra)
        self.detail.setVisible(True)
        if has:
            self._quant_changed()

    def _quant_changed(self) -> None:
        from atomicchat.models.drafts import quant_advice

        q = self.quant.currentData()
        if q is None or self._hit is None:
            return
        use_draft = not self.with_draft.isHidden() and self.with_draft.isChecked()
        self.advice.setText(quant_advice(q.quant, use_draft))
        self.fit.setText("Reading the file's header to estimate the fit…")
        self.fit.setProperty("fit", "")
        self._seq += 1
        draft = None
        if use_draft and self._offer.file is not None:
            f = self._offer.file
            draft = (f.repo, f.file, f.size)
        async_tasks.start(self._fit(self._hit.repo_id, q, draft, self._seq))

    async def _fit(self, repo_id: str, q: Any, draft: Any, seq: int) -> None:
        from atomicchat.models import hub_search

        try:
            est = await self._runner.run(hub_search.fit_for, repo_id, q, self._n_ctx(), draft)
        except Exception as exc:  # noqa: BLE001
            if seq == self._seq:
                size = f"{human_bytes(q.size)} to download. " if q.size else ""
                self.fit.setText(f"{size}Fit unknown: {self._message(exc)}")
            return
        if seq != self._seq:
            return
        self.fit.setText(f"{est.message} ({est.breakdown()})")
        self.fit.setObjectName(FIT_STYLE.get(est.verdict.value, "hint"))
        self.fit.style().unpolish(self.fit)
        self.fit.style().polish(self.fit)

    # download ----------------------------------------------------------------------------
    def download(self) -> None:
        q = self.quant.currentData()
        if q is None or self._hit is None or self._cancel is not None:
            return
        self._cancel = threading.Event()
        self.download_button.setVisible(False)
        self.cancel_button.setVisible(True)
        self.progress.setVisible(True)
        self.progress.setValue(0)
        self.progress_label.setText("Starting…")
        with_draft = not self.with_draft.isHidden() and self.with_draft.isChecked()
        async_tasks.start(self._download(self._hit.repo_id, q, with_draft, self._cancel))

    def cancel(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    async def _download(self, repo_id: str, q: Any, with_draft: bool, cancel: threading.Event) -> None:
        from atomicchat.models import hub_search
        from atomicchat.models.downloads import DownloadJob
        from atomicchat.models.errors import DownloadCancelled

        refs = hub_search.file_refs(repo_id, q)
        if with_draft and self._offer is not None and self._offer.file is not None:
            f = self._offer.file
            from atomicchat.models.catalog import FileRef

            refs.append(FileRef("draft", f"hub:{repo_id}", f.quant or "draft", f.repo, "main", f.file, f.size,
                                f.sha256, f.size is not None))
        loop = async_tasks.loop()

        def progress(p: Any) -> None:  # on the download thread
            loop.call_soon_threadsafe(self._on_progress, p)

        try:
            job = DownloadJob(files=refs)
            result = await self._runner.run(job.run, progress, cancel)
        except DownloadCancelled:
            self.progress_label.setText("Paused. The part already downloaded is kept; Download resumes it.")
            return
        except Exception as exc:  # noqa: BLE001
            self.progress_label.setText(self._message(exc))
            return
        finally:
            self._cancel = None
            self.download_button.setVisible(True)
            self.cancel_button.setVisible(False)
        self.progress.setValue(1000)
        note = f" The draft does not pair: {result.pair_problem}" if getattr(result, "pair_problem", None) else ""
        self.progress_label.setText("Downloaded and installed." + note)
        self.downloaded.emit(result.target_path, result.draft_path if not note else None)

    def _on_progress(self, p: Any) -> None:
        self.progress.setValue(int(1000 * p.done / p.total) if p.total else 0)
        self.progress_label.setText(progress_text(p))
