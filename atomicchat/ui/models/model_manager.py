"""The model manager window: catalog pairs to download, installed models to use or remove, import.

Blocking work (hardware probe, downloads, imports, pairing checks) runs in a small thread pool through
`async_tasks.run_op`, so the window stays responsive; download progress hops back to the UI thread
with `call_soon_threadsafe`. Everything goes through `atomicchat.models.service.ModelService`, which
raises only `ModelsError`: every failure is shown as the sentence the models package wrote for it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from atomicchat.models.errors import DownloadCancelled, ModelsError
from atomicchat.models.service import ModelService
from atomicchat.store.settings import AppSettings
from atomicchat.ui.common import async_tasks
from atomicchat.ui.models.hub_search_panel import HubSearchPanel
from atomicchat.ui.models.installed_row import InstalledRow, describe
from atomicchat.ui.models.model_card import ModelCard, human_bytes
from atomicchat.ui.common.notice_bar import NoticeBar

if TYPE_CHECKING:
    from atomicchat.models.catalog import ModelPair
    from atomicchat.models.downloads import JobResult, Progress
    from atomicchat.models.hardware import Hardware
    from atomicchat.models.registry import ImportResult

log = logging.getLogger(__name__)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _scroll(inner: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setWidget(inner)
    return area


class ModelManager(QDialog):
    model_chosen = Signal(object, object)  # target Path, draft Path | None

    def __init__(
        self, service: ModelService, settings: Callable[[], AppSettings], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Model manager")
        self.resize(760, 640)
        self.service = service
        self._settings = settings
        self._runner = async_tasks.BlockingRunner()
        self._cards: dict[str, ModelCard] = {}
        self._jobs: dict[str, threading.Event] = {}
        self._rows: list[InstalledRow] = []
        self._pair_problems: dict[tuple[str, str], str] = {}  # (target path, draft path) -> why not
        self._hardware: Hardware | None = None
        self._current: tuple[Path | None, Path | None] = (None, None)
        self._closed = False

        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 8)
        self.notice = NoticeBar()
        col.addWidget(self.notice)
        self.hardware_label = QLabel("Checking this computer…")
        self.hardware_label.setObjectName("hint")
        self.hardware_label.setWordWrap(True)
        self.hardware_label.setContentsMargins(12, 8, 12, 0)
        col.addWidget(self.hardware_label)
        self.tabs = QTabWidget()
        tabs_box = QVBoxLayout()
        tabs_box.setContentsMargins(12, 6, 12, 0)
        tabs_box.addWidget(self.tabs)
        col.addLayout(tabs_box, 1)

        self.catalog_box = QWidget()
        self.catalog_col = QVBoxLayout(self.catalog_box)
        self.catalog_col.setContentsMargins(12, 12, 12, 12)
        self.catalog_col.setSpacing(10)
        self.catalog_col.addStretch(1)
        self.tabs.addTab(_scroll(self.catalog_box), "Download")
        self.hub_panel = HubSearchPanel(service, self._runner, lambda: self._settings().n_ctx)
        self.hub_panel.downloaded.connect(self._on_hub_download)
        self.tabs.addTab(self.hub_panel, "Search the Hub")

        installed = QWidget()
        icol = QVBoxLayout(installed)
        icol.setContentsMargins(12, 12, 12, 12)
        top = QHBoxLayout()
        self.installed_hint = QLabel()
        self.installed_hint.setObjectName("hint")
        self.installed_hint.setWordWrap(True)
        top.addWidget(self.installed_hint, 1)
        self.import_button = QPushButton("Import GGUF…")
        self.import_button.setToolTip("Use a .gguf file you already have; it stays where it is")
        self.import_button.clicked.connect(self.choose_import)
        top.addWidget(self.import_button)
        icol.addLayout(top)
        self.installed_box = QWidget()
        self.installed_col = QVBoxLayout(self.installed_box)
        self.installed_col.setContentsMargins(0, 0, 0, 0)
        self.installed_col.setSpacing(8)
        self.installed_col.addStretch(1)
        icol.addWidget(_scroll(self.installed_box), 1)
        self.tabs.addTab(installed, "Installed")

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons.addWidget(close)
        buttons.setContentsMargins(12, 0, 12, 0)
        col.addLayout(buttons)
        self._populate()

    # building ----------------------------------------------------------------------------
    def _populate(self) -> None:
        reason = self.service.unavailable_reason()
        if reason:
            self.notice.show_notice(reason, "error")
            self.import_button.setEnabled(False)
            self.hardware_label.setText("")
            return
        try:
            catalog = self.service.catalog()
        except ModelsError as exc:
            self.notice.show_notice(f"The model catalog could not be read: {exc}", "error")
            catalog = None
        if catalog is not None:
            for pair in catalog.pairs:
                card = ModelCard(pair)
                card.download_requested.connect(self.download)
                card.cancel_requested.connect(self.cancel)
                card.use_requested.connect(self._use_catalog)
                card.quant_changed.connect(self._refresh_card)
                self.catalog_col.insertWidget(self.catalog_col.count() - 1, card)
                self._cards[pair.id] = card
        self.refresh_installed()
        for card in self._cards.values():
            self._refresh_card(card.pair)
        if not self._rows:
            self.notice.show_notice(
                "No model is installed yet. Download a pair below (one click fetches the model and its DFlash "
                "draft), or import a GGUF file you already have on the Installed tab.",
                "info",
            )
            self.tabs.setCurrentIndex(0)
        async_tasks.run_op(self._runner, self.service.hardware, success=self._on_hardware, failure=self._no_hardware)

    def _no_hardware(self, exc: ModelsError) -> None:
        self.hardware_label.setText(f"Could not check this computer's memory: {exc}")

    def _on_hardware(self, hw: Hardware) -> None:
        if self._closed:
            return
        self._hardware = hw
        self.hardware_label.setText(f"This computer: {hw.summary()}")
        for card in self._cards.values():
            self._refresh_card(card.pair)

    def _refresh_card(self, pair: ModelPair) -> None:
        card = self._cards.get(pair.id)
        if card is None:
            return
        q, dq = card.quant_name(), card.draft_quant_name()
        if self._hardware is not None:
            cfg = self._settings()
            try:
                card.set_fit(self.service.fit(pair, q, dq, cfg.n_ctx, cfg.use_draft, self._hardware))
            except ModelsError as exc:
                card.set_fit(None, f"Fit unknown: {exc}")
        if pair.id in self._jobs:
            return
        try:
            paths = self.service.installed_paths(pair, q, dq)
        except ModelsError:
            paths = None
        current = paths is not None and (paths[0], paths[1]) == self._current
        pending = 0
        if paths is None:
            try:
                job = self.service.new_download(pair, q, dq)
                total = sum((f.size or 0) for f in job.files)
                left = self.service.pending_bytes(job)
                pending = total - left if 0 < left < total else 0
            except ModelsError:
                pending = 0
        card.set_idle(installed=paths is not None, current=current, pending=pending)

    def refresh_installed(self) -> None:
        for row in self._rows:
            self.installed_col.removeWidget(row)
            row.deleteLater()
        self._rows = []
        try:
            files = self.service.installed()
            pairs = self.service.installed_pairs()
        except ModelsError as exc:
            self.notice.show_notice(f"The list of installed models could not be read: {exc}", "error")
            files, pairs = [], []
        drafts = [f for f in files if f.role == "draft"]
        by_key = {f.key: str(f.path) for f in files}
        listed_drafts: set[str] = set()
        for t in (f for f in files if f.role == "target"):
            paired = [
                (p.draft.name or Path(p.draft.path).name, Path(p.draft.path)) for p in pairs if p.target.key == t.key
            ]
            paired_paths = {str(p) for _, p in paired}
            others = [(d.name or Path(d.path).name, Path(d.path)) for d in drafts if d.path not in paired_paths]
            listed_drafts.update(str(p) for _, p in paired + others)
            known = {
                d: reason for (tp, d), reason in self._pair_problems.items() if tp == str(t.path) and d in by_key.values()
            }
            self._add_row(
                InstalledRow(
                    t.name or Path(t.path).name,
                    Path(t.path),
                    describe(t),
                    paired,
                    others,
                    t.key,
                    self.service.is_intact(t),
                    missing=not Path(t.path).exists(),
                    problems=known,
                )
            )
        smol = self.service.first_run_model()
        if smol is not None:
            smol_draft = self.service.first_run_draft()
            paired = [("DFlash draft", smol_draft)] if smol_draft else []
            listed_drafts.update(str(p) for _, p in paired)
            self._add_row(
                InstalledRow(
                    "SmolLM2-135M-Instruct", smol,
                    "Small real chat model that comes with the app (Q4_1, 98 MB)"
                    + (", with the DFlash draft trained for it" if smol_draft else ". No DFlash draft: target only"),
                    paired, [],
                )
            )
        demo = self.service.demo_pair()
        if demo is not None:
            paired = [("demo draft", demo[1])] if demo[1] else []
            listed_drafts.update(str(p) for _, p in paired)
            self._add_row(
                InstalledRow(
                    "DFlash demo (9M toy)", demo[0],
                    "Toy model + draft that shows DFlash drafting; its replies are not meaningful", paired, []
                )
            )
        self.installed_hint.setText(
            f"{_count(len(self._rows), 'model')}, {_count(len(listed_drafts), 'draft')} installed. "
            "Imported files stay where they are."
            if self._rows
            else "Nothing installed yet. Download a pair, or import a .gguf file you already have."
        )
        self.set_current(*self._current)

    def _add_row(self, row: InstalledRow) -> None:
        row.use_requested.connect(self._use_paths)
        row.remove_requested.connect(self.remove)
        row.check_requested.connect(self._check_pair)
        self.installed_col.insertWidget(self.installed_col.count() - 1, row)
        self._rows.append(row)

    def set_current(self, target: Path | None, draft: Path | None) -> None:
        self._current = (Path(target) if target else None, Path(draft) if draft else None)
        for row in self._rows:
            is_current = row.target == self._current[0]
            if is_current:
                row.select_draft(self._current[1])
            row.set_current(is_current and row.selected_draft() == self._current[1])
        for card in self._cards.values():
            if card.pair.id not in self._jobs:
                self._refresh_card(card.pair)

    # choosing ----------------------------------------------------------------------------
    def _use_paths(self, target: Path, draft: Path | None) -> None:
        self.model_chosen.emit(target, draft)
        self.notice.show_notice(f"Loading {target.name}{' with its draft' if draft else ''}…", "info", timeout_ms=4000)

    def _use_catalog(self, pair: ModelPair, quant: str, draft_quant: str) -> None:
        paths = self.service.installed_paths(pair, quant, draft_quant)
        if paths is not None:
            self._use_paths(paths[0], paths[1])

    def _check_pair(self, target: Path, draft: Path) -> None:
        async_tasks.run_op(self._runner, self.service.pair_problem, target, draft,
                           success=lambda problem: self._pair_checked(target, draft, problem),
                           failure=lambda exc: self._pair_checked(target, draft, str(exc)))

    def _pair_checked(self, target: Path, draft: Path, problem: str | None) -> None:
        if problem:
            self._pair_problems[(str(target), str(draft))] = problem
        for row in self._rows:
            if row.target == target:
                row.set_pair_verdict(draft, problem)

    def _on_hub_download(self, target: Path, draft: Path | None) -> None:
        self.refresh_installed()
        pair = f" with its DFlash draft {draft.name}" if draft else ""
        self.notice.show_notice(f"{target.name}{pair} is installed. Use it from the Installed tab.", "info")

    # downloads ---------------------------------------------------------------------------
    def download(self, pair: ModelPair, quant: str, draft_quant: str) -> None:
        if pair.id in self._jobs:
            return
        cancel = threading.Event()
        self._jobs[pair.id] = cancel
        self._cards[pair.id].set_downloading()
        self._run_download(pair, quant, draft_quant, cancel)

    def cancel(self, pair: ModelPair) -> None:
        event = self._jobs.get(pair.id)
        if event is not None:
            event.set()
            self._cards[pair.id].set_cancelling()

    def _run_download(self, pair: ModelPair, quant: str, draft_quant: str, cancel: threading.Event) -> None:
        loop = async_tasks.loop()

        def progress(p: Progress) -> None:  # on the download thread
            loop.call_soon_threadsafe(self._on_progress, pair.id, p)

        try:
            job = self.service.new_download(pair, quant, draft_quant)
        except ModelsError as exc:
            self._download_failed(pair, cancel, exc)
            return
        async_tasks.run_op(self._runner, self.service.run_download, job, progress, cancel,
                           success=lambda result: self._downloaded(pair, result),
                           failure=lambda exc: self._download_failed(pair, cancel, exc))

    def _download_failed(self, pair: ModelPair, cancel: threading.Event, exc: ModelsError) -> None:
        self._jobs.pop(pair.id, None)
        if self._closed:
            return
        card = self._cards[pair.id]
        if isinstance(exc, DownloadCancelled) or cancel.is_set():
            card.set_paused("Paused. The part already downloaded is kept; Resume continues from there.")
        else:
            log.warning("download failed", exc_info=exc)
            card.set_error(str(exc))
            self.notice.show_notice(f"Download of {pair.name} failed: {exc}", "error")

    def _downloaded(self, pair: ModelPair, result: JobResult) -> None:
        self._jobs.pop(pair.id, None)
        if self._closed:
            return
        card = self._cards[pair.id]
        self.refresh_installed()
        self._refresh_card(pair)
        if result.pair_problem:
            self.notice.show_notice(
                f"{pair.name} is downloaded, but its draft cannot pair with the target: {result.pair_problem}",
                "warning",
            )
        else:
            card.state.setText("Installed ✓ — verified")
            self.notice.show_notice(f"{pair.name} is installed. Click “Use this model” to chat with it.", "info")

    def _on_progress(self, pair_id: str, p: Progress) -> None:
        card = self._cards.get(pair_id)
        if card is not None and pair_id in self._jobs and not self._jobs[pair_id].is_set():
            card.set_progress(p)

    # import and remove -------------------------------------------------------------------
    def choose_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import a GGUF model", str(Path.home()), "GGUF models (*.gguf);;All files (*)"
        )
        if path:
            self.import_file(Path(path))

    def import_file(self, path: Path) -> None:
        self.import_button.setEnabled(False)
        self.notice.show_notice(f"Checking {path.name}…", "info")
        async_tasks.run_op(self._runner, self.service.import_gguf, path,
                           success=self._imported, failure=lambda exc: self._not_imported(path, exc))

    def _not_imported(self, path: Path, exc: ModelsError) -> None:
        self.import_button.setEnabled(True)
        self.notice.show_notice(f"{path.name} was not imported: {exc}", "error")

    def _imported(self, result: ImportResult) -> None:
        self.import_button.setEnabled(True)
        self._remember_rejections(result)
        self.refresh_installed()
        self.tabs.setCurrentIndex(1)
        f = result.file
        text = f"Imported {Path(f.path).name} as a {f.role} ({human_bytes(f.size)})."
        if result.paired_with:
            text += (
                f" It pairs with {len(result.paired_with)} installed {'draft' if f.role == 'target' else 'target'}(s)."
            )
        kind = "info"
        if result.not_paired:
            reasons = " ".join(reason for _key, reason in result.not_paired)
            text += f" Not paired: {reasons}"
            kind = "warning"
        elif f.role == "draft" and not result.paired_with:
            text += " No installed target matches it yet; import or download its target model."
            kind = "warning"
        self.notice.show_notice(text, kind)

    def _remember_rejections(self, result: ImportResult) -> None:
        """Keep why an import did not pair, so the draft picker says it instead of "not checked"."""
        if not result.not_paired:
            return
        try:
            paths = {f.key: str(f.path) for f in self.service.installed()}
        except ModelsError:  # the reasons are a nicety; the notice already said them
            return
        mine = str(result.file.path)
        for key, reason in result.not_paired:
            other = paths.get(key)
            if other is not None:
                pair = (other, mine) if result.file.role == "draft" else (mine, other)
                self._pair_problems[pair] = reason

    def remove(self, key: str) -> None:
        if not key:
            return
        answer = QMessageBox.question(
            self,
            "Remove model",
            "Remove this model from the computer? Downloaded files are deleted; imported files stay on disk.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            removed = self.service.remove(key)
        except ModelsError as exc:
            self.notice.show_notice(f"The model could not be removed: {exc}", "error")
            return
        freed = getattr(removed, "freed_bytes", None)
        self.notice.show_notice(
            f"Removed.{f' Freed {human_bytes(freed)}.' if isinstance(freed, int) and freed else ''}", "info"
        )
        self.refresh_installed()

    # lifetime ----------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Cancel downloads (their partial files are kept for Resume) and drop queued work."""
        self._closed = True
        for event in self._jobs.values():
            event.set()
        self._runner.close()

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Esc closes the non-modal window
        if event.key() == Qt.Key.Key_Escape:
            self.close()
        else:
            super().keyPressEvent(event)
