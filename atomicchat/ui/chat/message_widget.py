"""One message in the chat: who said it, the body, actions, and for replies the stats indicator.

While a reply streams, chunks only append to `text`; a single-shot timer renders at most once
per FRAME_MS, so hundreds of tokens per second cost ~30 layouts per second, not one per token.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from atomicchat.attachments import compose as compose_attachments
from atomicchat.attachments import split as split_attachments
from atomicchat.stats import TargetSpeed
from atomicchat.store.records import DONE, ERROR, INTERRUPTED, STOPPED, STREAMING, Message, ReplyStats
from atomicchat.ui.chat.attachment_chip import show_chips
from atomicchat.ui.chat.markdown_view import MarkdownView
from atomicchat.ui.chat.stats_bar import StatsBar
from atomicchat.ui.chat.version_pager import VersionPager
from atomicchat.ui.common.elided_label import ElidedLabel
from atomicchat.ui.common.flow_layout import FlowLayout
from atomicchat.ui.engine.worker_types import StreamChunk

FRAME_MS = 33
REPEATING_TEXT = "stopped: it kept repeating itself"
LENGTH_TEXT = "stopped at the reply length limit"
STATUS_TEXT = {
    STOPPED: "stopped",
    INTERRUPTED: "interrupted: the app closed while this reply was being written",
    STREAMING: "writing…",
}


class MessageWidget(QFrame):
    edit_submitted = Signal(int, str)  # position, new text
    regenerate_requested = Signal()
    continue_requested = Signal()
    measure_requested = Signal()
    version_requested = Signal(int, int)  # position, version index
    dflash_off_requested = Signal()
    copied = Signal(str)
    geometry_changed = Signal()  # the body grew or shrank: the chat must lay out now, not a frame later

    def __init__(
        self,
        message: Message,
        baseline_for: Callable[[str], TargetSpeed | None] = lambda key: None,
        colour_drafts: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.message = message
        self.text = message.content
        self.stats = message.stats or ReplyStats()
        self.draft_max: int | None = None
        self._baseline_for = baseline_for
        self._colour = colour_drafts
        self._streaming = False
        self._error = ""
        self._relayout_due = False
        is_user = message.role == "user"
        self.setObjectName("userMessage" if is_user else "assistantMessage")
        self.setFrameShape(QFrame.Shape.NoFrame)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(14, 8, 14, 8)
        outer.setSpacing(2)

        header = QHBoxLayout()
        header.setSpacing(6)
        self.role = QLabel("You" if is_user else self._assistant_name())
        self.role.setObjectName("roleLabel")
        # a long model name is cut, never the action buttons: the label may shrink below its text
        self.role.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.role.setMinimumWidth(40)
        self.role.setToolTip(self.role.text())
        header.addWidget(self.role, 1)
        self.pager = VersionPager()
        self.pager.page_requested.connect(lambda i: self.version_requested.emit(self.message.position, i))
        header.addWidget(self.pager)
        self.status = ElidedLabel()
        self.status.setObjectName("statusLabel")
        header.addWidget(self.status)
        self.copy_button = self._tool("Copy", "Copy this message as text", self._copy_all)
        header.addWidget(self.copy_button)
        self.edit_button = self._tool("Edit", "Edit this message and regenerate the reply from here", self.start_edit)
        self.edit_button.setVisible(is_user)
        header.addWidget(self.edit_button)
        self.regen_button = self._tool("Regenerate", "Write this reply again (Ctrl+R)", self.regenerate_requested.emit)
        self.regen_button.setVisible(False)
        header.addWidget(self.regen_button)
        self.continue_button = self._tool("Continue", "Write more of this reply, from where it ended",
                                          self.continue_requested.emit)
        self.continue_button.setVisible(False)
        header.addWidget(self.continue_button)
        outer.addLayout(header)

        self.body = MarkdownView()
        self.body.copied.connect(self.copied)
        self.body.height_changed.connect(self._relayout)
        outer.addWidget(self.body)
        self.files = QWidget()  # a user message's attached files, each a chip instead of its text
        self.files_layout = FlowLayout(self.files, spacing=6, line_spacing=4)
        self.files.setVisible(False)
        outer.addWidget(self.files)

        self.editor = QPlainTextEdit()
        self.editor.setObjectName("messageEditor")
        self.editor.setVisible(False)
        self.editor.setMaximumHeight(160)
        outer.addWidget(self.editor)
        edit_row = QHBoxLayout()
        edit_row.addStretch(1)
        self.edit_cancel = QPushButton("Cancel")
        self.edit_cancel.clicked.connect(self.cancel_edit)
        self.edit_save = QPushButton("Save && regenerate")
        self.edit_save.setDefault(True)
        self.edit_save.clicked.connect(self._submit_edit)
        edit_row.addWidget(self.edit_cancel)
        edit_row.addWidget(self.edit_save)
        self.edit_bar = QWidget()
        self.edit_bar.setLayout(edit_row)
        self.edit_bar.setVisible(False)
        outer.addWidget(self.edit_bar)
        for keys, slot in (("Ctrl+Return", self._submit_edit), ("Escape", self.cancel_edit)):
            shortcut = QShortcut(QKeySequence(keys), self.editor, slot)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)  # only while this editor has focus

        self.error = QLabel()
        self.error.setObjectName("messageError")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.setVisible(False)
        outer.addWidget(self.error)

        self.stats_bar: StatsBar | None = None
        if not is_user:
            self.stats_bar = StatsBar()
            self.stats_bar.measure_requested.connect(self.measure_requested)
            self.stats_bar.dflash_off_requested.connect(self.dflash_off_requested)
            outer.addWidget(self.stats_bar)

        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(FRAME_MS)
        self._render_timer.timeout.connect(self._render_frame)

        if message.status == ERROR and message.stats and message.stats.error:
            self._error = message.stats.error
        self._show_full()
        self._refresh_status(message.status)

    def _tool(self, text: str, tip: str, slot: Callable[[], object]) -> QToolButton:
        b = QToolButton()
        b.setText(text)
        b.setToolTip(tip)
        b.setAutoRaise(True)
        b.setObjectName("messageAction")
        b.clicked.connect(slot)
        return b

    def _relayout(self) -> None:
        """Place the stats bar below the new body height before anything paints (else it overlaps)."""
        layout = self.layout()
        if layout is not None:
            layout.activate()
        self.geometry_changed.emit()
        if not self._relayout_due:
            # Once more after the pass under way: a body resized by this widget's own layout (the
            # window narrowed) reflows inside that pass, which goes on placing the stats bar by the
            # height the body had a moment before. Narrowed to 600 px, a body reflowed to 211 px
            # and back to 147 left the bar 64 px down, below the reply and clipped, for good.
            self._relayout_due = True
            QTimer.singleShot(0, self._relayout_again)

    def _relayout_again(self) -> None:
        self._relayout_due = False
        layout = self.layout()
        if layout is not None:
            layout.invalidate()
            layout.activate()
        self.geometry_changed.emit()

    def _assistant_name(self) -> str:
        s = self.message.stats
        return f"Assistant · {s.target_name}" if s and s.target_name else "Assistant"

    # static content ----------------------------------------------------------------------
    def _show_full(self) -> None:
        if self.message.role == "user":
            typed, files = split_attachments(self.text)
            self.body.set_plain(typed)
            self.body.setVisible(bool(typed) or not files)
            show_chips(self.files_layout, files)
        else:
            self.body.set_markdown(self.text, self._spans())
            self.body.setVisible(bool(self.text))
        self._refresh_stats()

    def _spans(self) -> list[list[int]] | None:
        return self.stats.draft_spans if self._colour and self.stats.draft_spans else None

    def _refresh_stats(self) -> None:
        if self.stats_bar is None:
            return
        has = self.stats.n_generated > 0 or self._streaming
        self.stats_bar.setVisible(has)
        if has:
            self.stats_bar.set_stats(self.stats, self._baseline_for(self.stats.model_key), self.draft_max)

    def _refresh_status(self, status: str) -> None:
        self.message.status = status
        text = STATUS_TEXT.get(status, "")
        if status == DONE and self.stats.finish_reason == "repetition":
            text = REPEATING_TEXT
        if status == DONE and self.stats.finish_reason == "length":
            text = LENGTH_TEXT
        self.status.setToolTip("Stopped at the reply length limit: the reply reached Max reply tokens "
                               "(Settings > Chat). Continue writes more." if text == LENGTH_TEXT else "")
        self.status.setText(text)
        self.status.setVisible(bool(text))
        hint = " Regenerate to try again." if self._error and self.message.role == "assistant" else ""
        self.error.setText(self._error + hint)
        self.error.setVisible(bool(self._error))

    def set_colour_drafts(self, on: bool) -> None:
        if on != self._colour:
            self._colour = on
            if not self._streaming:
                self._show_full()

    def set_last_reply(self, last: bool) -> None:
        self.regen_button.setVisible(last and self.message.role == "assistant" and not self._streaming)
        self.continue_button.setVisible(last and not self._streaming and self.message.can_continue())

    def refresh_baseline(self) -> None:
        self._refresh_stats()

    # streaming ---------------------------------------------------------------------------
    def begin_stream(self, stats: ReplyStats, draft_max: int | None, keep_text: bool = False) -> None:
        """A reply starts streaming into this widget; with `keep_text` (Continue) after the text it has."""
        self._streaming = True
        if not keep_text:
            self.text = ""
        self.stats = stats
        self.draft_max = draft_max
        self._error = ""
        self.role.setText(self._assistant_name_from(stats))
        self.role.setToolTip(self.role.text())
        self.regen_button.setVisible(False)
        self.continue_button.setVisible(False)
        self.body.setVisible(bool(self.text))
        self._refresh_status(STREAMING)
        self._refresh_stats()

    def _assistant_name_from(self, stats: ReplyStats) -> str:
        return f"Assistant · {stats.target_name}" if stats.target_name else "Assistant"

    def append_chunk(self, chunk: StreamChunk, stats: ReplyStats) -> None:
        self.text += chunk.text
        self.stats = stats
        if not self._render_timer.isActive():
            self._render_timer.start()

    def _render_frame(self) -> None:
        if not self._streaming:
            return
        if self.text:
            self.body.setVisible(True)
            self.body.stream(self.text, self._spans())
        self._refresh_stats()

    def finish(self, status: str, stats: ReplyStats, error: str = "") -> None:
        """The reply ended (done, stopped, or failed): render it once in full and show final numbers."""
        self._render_timer.stop()
        was_streaming, self._streaming = self._streaming, False
        self.stats = stats
        self._error = error
        self.message.stats = stats
        self.message.content = self.text
        if was_streaming and self.message.role == "assistant":
            # The last frame: the incremental document is already what a full render would show,
            # and re-rendering a long reply from scratch would stall the UI for tens of ms.
            self.body.setVisible(bool(self.text))
            self.body.stream(self.text, self._spans())
            self._refresh_stats()
        else:
            self._show_full()
        self._refresh_status(status)

    # editing -----------------------------------------------------------------------------
    def start_edit(self) -> None:
        """Edit the typed text; attached files stay attached (their chips stay shown)."""
        self.editor.setPlainText(split_attachments(self.text)[0])
        self.body.setVisible(False)
        self.editor.setVisible(True)
        self.edit_bar.setVisible(True)
        self.editor.setFocus()
        self.editor.selectAll()

    def cancel_edit(self) -> None:
        self.editor.setVisible(False)
        self.edit_bar.setVisible(False)
        typed, files = split_attachments(self.text)
        self.body.setVisible(bool(typed) or not files)

    def _submit_edit(self) -> None:
        new_text = self.editor.toPlainText().strip()
        files = split_attachments(self.text)[1]
        if not new_text and not files:
            return
        self.cancel_edit()
        self.edit_submitted.emit(self.message.position, compose_attachments(new_text, files))

    def _copy_all(self) -> None:
        QGuiApplication.clipboard().setText(self.text)
        self.copied.emit(self.text)
