"""The scrolling list of messages of the open chat, or an empty-state page when it has none.

It follows the bottom while a reply streams, unless the user has scrolled up to read.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, Qt, Signal
from PySide6.QtWidgets import QLabel, QScrollArea, QStackedWidget, QVBoxLayout, QWidget

from atomicchat.stats import TargetSpeed
from atomicchat.store.records import Message
from atomicchat.ui.chat.message_widget import MessageWidget

STICK_PX = 24  # within this many pixels of the bottom counts as "at the bottom"

EMPTY_HINT = "Type a message below, or attach text files (Ctrl+O). Enter sends, Shift+Enter adds a line."


class ChatView(QStackedWidget):
    edit_submitted = Signal(int, str)
    regenerate_requested = Signal()
    continue_requested = Signal()
    measure_requested = Signal()
    version_requested = Signal(int, int)  # position, version index
    dflash_off_requested = Signal()
    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.empty = QLabel()
        self.empty.setObjectName("emptyState")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setTextFormat(Qt.TextFormat.RichText)
        self.addWidget(self.empty)

        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.container = QWidget()
        self.container.setObjectName("messages")
        self.column = QVBoxLayout(self.container)
        self.column.setContentsMargins(12, 12, 12, 12)
        self.column.setSpacing(6)
        self.column.addStretch(1)
        self.scroll.setWidget(self.container)
        self.addWidget(self.scroll)

        self._widgets: list[MessageWidget] = []
        self._stick = True
        self._baseline_for: Callable[[str], TargetSpeed | None] = lambda key: None
        self._colour = False
        bar = self.scroll.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range)
        self.set_empty_text("Start a conversation", EMPTY_HINT)
        self.setCurrentWidget(self.empty)

    def set_empty_text(self, title: str, detail: str) -> None:
        self.empty.setText(
            f'<p style="font-size:18pt; color:#374151;">{title}</p><p style="color:#6b7280;">{detail}</p>'
        )

    def configure(self, baseline_for: Callable[[str], TargetSpeed | None], colour_drafts: bool) -> None:
        self._baseline_for = baseline_for
        self._colour = colour_drafts

    # content -----------------------------------------------------------------------------
    def show_messages(self, messages: list[Message]) -> None:
        self.clear_messages()
        for m in messages:
            self._add(m)
        self._update_last()
        self.setCurrentWidget(self.scroll if self._widgets else self.empty)
        self._stick = True
        self.scroll_to_bottom()

    def clear_messages(self) -> None:
        self._drop(self._widgets)
        self._widgets = []
        self.setCurrentWidget(self.empty)

    def append(self, message: Message) -> MessageWidget:
        w = self._add(message)
        self._update_last()
        self.setCurrentWidget(self.scroll)
        self._stick = True
        self.scroll_to_bottom()
        return w

    def remove_from(self, position: int) -> None:
        """Drop the widgets of messages at `position` and later (regenerate / edit)."""
        keep = [w for w in self._widgets if w.message.position < position]
        self._drop(self._widgets[len(keep) :])
        self._widgets = keep
        self._update_last()

    def _drop(self, widgets: list[MessageWidget]) -> None:
        """Hide and detach at once: deleteLater waits for the event loop that called it, and inside a
        nested one (the sidebar's context menu) the old chat's widgets would stay painted under the new."""
        for w in widgets:
            self.column.removeWidget(w)
            w.hide()
            w.setParent(None)
            w.deleteLater()

    def _sync_geometry(self) -> None:
        """Resize the message column now (QScrollArea does it on its LayoutRequest) so a growing
        reply pushes its stats bar down in the same frame instead of being painted over by it."""
        self.column.activate()
        QCoreApplication.sendEvent(self.scroll, QEvent(QEvent.Type.LayoutRequest))

    def _add(self, message: Message) -> MessageWidget:
        w = MessageWidget(message, self._baseline_for, self._colour)
        w.edit_submitted.connect(self.edit_submitted)
        w.regenerate_requested.connect(self.regenerate_requested)
        w.continue_requested.connect(self.continue_requested)
        w.measure_requested.connect(self.measure_requested)
        w.version_requested.connect(self.version_requested)
        w.dflash_off_requested.connect(self.dflash_off_requested)
        w.copied.connect(self.copied)
        w.geometry_changed.connect(self._sync_geometry)
        self.column.insertWidget(self.column.count() - 1, w)
        self._widgets.append(w)
        return w

    def _update_last(self) -> None:
        last_assistant = next((w for w in reversed(self._widgets) if w.message.role == "assistant"), None)
        is_tail = bool(self._widgets) and self._widgets[-1] is last_assistant
        for w in self._widgets:
            w.set_last_reply(is_tail and w is last_assistant)

    def widgets(self) -> list[MessageWidget]:
        return list(self._widgets)

    def refresh_last(self) -> None:
        self._update_last()

    def set_colour_drafts(self, on: bool) -> None:
        self._colour = on
        for w in self._widgets:
            w.set_colour_drafts(on)

    def set_versions(self, counts: dict[int, tuple[int, int]], enabled: bool = True) -> None:
        """‹ i/n › on each message that has other versions; `enabled` False while a reply streams."""
        for w in self._widgets:
            index, count = counts.get(w.message.position, (0, 1))
            w.pager.set_state(index, count)
            w.pager.set_enabled(enabled)

    def set_zoom(self, steps: int) -> None:
        """Chat text size: the app's font plus `steps` points (Ctrl+= / Ctrl+- / Ctrl+0)."""
        from PySide6.QtWidgets import QApplication

        font = QApplication.font()
        font.setPointSizeF(max(6.0, font.pointSizeF() + steps))
        self.setFont(font)

    def refresh_baselines(self) -> None:
        for w in self._widgets:
            w.refresh_baseline()

    # scrolling ---------------------------------------------------------------------------
    def scroll_to_bottom(self) -> None:
        bar = self.scroll.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _on_scrolled(self, value: int) -> None:
        bar = self.scroll.verticalScrollBar()
        self._stick = value >= bar.maximum() - STICK_PX

    def _on_range(self, _min: int, maximum: int) -> None:
        if self._stick:
            self.scroll.verticalScrollBar().setValue(maximum)
