"""Model manager ▸ Search the Hub: any GGUF repo on Hugging Face, its quants with size and a fit
verdict read from the file's own header (a Range request, no download), the DFlash draft known for
it, and one click to download the quant (plus the draft).

Blocking calls go through the manager's ModelService on its thread pool (`async_tasks.run_op`); a newer
search or pick replaces the result of an older one, so a slow answer never overwrites a fresh one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from atomicchat.models.errors import DownloadCancelled, ModelsError
from atomicchat.models.service import ModelService
from atomicchat.ui.common import async_tasks
from atomicchat.ui.common.placeholder_list import PlaceholderList
from atomicchat.ui.models.model_card import FIT_STYLE, human_bytes, progress_text

if TYPE_CHECKING:
    from atomicchat.models.downloads import JobResult, Progress
    from atomicchat.models.drafts import DraftOffer
    from atomicchat.models.fit import FitEstimate
    from atomicchat.models.hub_search import QuantFile, RepoHit, SearchResult


# What the empty results list says (the line above it says why, and what to try)
BEFORE_SEARCH = "Search results appear here: GGUF repos, the most downloaded first."
NOTHING_FOUND = "No results to show."


def _hint(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setObjectName("hint")
    label.setWordWrap(True)
    return label


class HubSearchPanel(QWidget):
    downloaded = Signal(object, object)  # target Path, draft Path | None

    def __init__(self, service: ModelService, runner: async_tasks.BlockingRunner, n_ctx: Callable[[], int],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._service = service
        self._runner = runner
        self._n_ctx = n_ctx
        self._seq = 0  # newest request wins
        self._hit: RepoHit | None = None
        self._offer: DraftOffer | None = None
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
        self.results = PlaceholderList(BEFORE_SEARCH)
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
        seq = self._seq
        async_tasks.run_op(self._runner, self._service.search_hub, text,
                           success=lambda result: self._searched(text, seq, result),
                           failure=lambda exc: self._search_failed(seq, exc))

    def _search_failed(self, seq: int, exc: ModelsError) -> None:
        if seq == self._seq:
            self.status.setText(str(exc))
            self.results.setPlaceholderText(NOTHING_FOUND)  # shown only where no earlier results are
            self.search_button.setEnabled(True)

    def _searched(self, text: str, seq: int, result: SearchResult) -> None:
        from atomicchat.models.drafts import draft_offer

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
        self.results.setPlaceholderText(NOTHING_FOUND)
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
            seq, repo_id = self._seq, hit.repo_id
            async_tasks.run_op(self._runner, self._service.repo_details, repo_id,
                               success=lambda result: self._detailed(seq, result),
                               failure=lambda exc: self._details_failed(seq, repo_id, exc))
        else:
            self._show(hit)

    def _details_failed(self, seq: int, repo_id: str, exc: ModelsError) -> None:
        if seq == self._seq:
            self._show_pending(repo_id, str(exc))

    def _detailed(self, seq: int, result: SearchResult) -> None:
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

    def _show(self, hit: RepoHit) -> None:
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
        seq = self._seq
        async_tasks.run_op(self._runner, self._service.hub_fit, self._hit.repo_id, q, self._n_ctx(), draft,
                           success=lambda est: self._fitted(seq, est),
                           failure=lambda exc: self._fit_failed(seq, q, exc))

    def _fit_failed(self, seq: int, q: QuantFile, exc: ModelsError) -> None:
        if seq == self._seq:
            size = f"{human_bytes(q.size)} to download. " if q.size else ""
            self.fit.setText(f"{size}Fit unknown: {exc}")

    def _fitted(self, seq: int, est: FitEstimate) -> None:
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
        self._download(self._hit.repo_id, q, with_draft, self._cancel)

    def cancel(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def _download(self, repo_id: str, q: QuantFile, with_draft: bool, cancel: threading.Event) -> None:
        draft = self._offer.file if with_draft and self._offer is not None else None
        loop = async_tasks.loop()

        def progress(p: Progress) -> None:  # on the download thread
            loop.call_soon_threadsafe(self._on_progress, p)

        try:
            job = self._service.hub_download(repo_id, q, draft)
        except ModelsError as exc:
            self._download_failed(exc)
            return
        async_tasks.run_op(self._runner, self._service.run_hub_download, job, progress, cancel,
                           success=self._downloaded, failure=self._download_failed)

    def _download_ended(self) -> None:
        self._cancel = None
        self.download_button.setVisible(True)
        self.cancel_button.setVisible(False)

    def _download_failed(self, exc: ModelsError) -> None:
        self._download_ended()
        if isinstance(exc, DownloadCancelled):
            self.progress_label.setText("Paused. The part already downloaded is kept; Download resumes it.")
        else:
            self.progress_label.setText(str(exc))

    def _downloaded(self, result: JobResult) -> None:
        self._download_ended()
        self.progress.setValue(1000)
        note = f" The draft does not pair: {result.pair_problem}" if getattr(result, "pair_problem", None) else ""
        self.progress_label.setText("Downloaded and installed." + note)
        self.downloaded.emit(result.target_path, result.draft_path if not note else None)

    def _on_progress(self, p: Progress) -> None:
        self.progress.setValue(int(1000 * p.done / p.total) if p.total else 0)
        self.progress_label.setText(progress_text(p))
