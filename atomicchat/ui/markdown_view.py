"""A read-only rich-text view that is exactly as tall as its content, for one message body.

While a reply streams, `stream(text)` re-renders only the unfinished last markdown block into
the document (see markdown_render.IncrementalMarkdown); finished blocks are inserted once and
never laid out again. Links `copy:N` copy code block N to the clipboard.
"""

from __future__ import annotations

import html
import math

from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QFontDatabase,
    QGuiApplication,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QWheelEvent,
)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

from atomicchat.ui.markdown_render import IncrementalMarkdown, render_document

DRAFT_BG = "#d9f2dd"  # accepted-draft tokens when colouring is on


def _insert_html(cursor: QTextCursor, fragment_html: str) -> None:
    """Insert HTML as new blocks at the cursor, keeping the first block's own format.

    QTextCursor.insertHtml merges the fragment's first block into the current one (a paragraph
    would inherit a heading's format), so a fresh block with the fragment's format comes first,
    except before a list or a table (code box), where Qt opens the new block itself and a
    fresh one would show as an empty line.
    """
    tmp = QTextDocument()
    tmp.setHtml(fragment_html)
    first = tmp.begin()
    starts_with_table = QTextCursor(tmp).currentTable() is not None or (
        first.length() == 1 and first.next().isValid() and QTextCursor(first.next()).currentTable() is not None
    )
    opens_own_block = starts_with_table or (first.textList() is not None and cursor.block().textList() is None)
    if cursor.block().length() > 1 and not opens_own_block:
        cursor.insertBlock(first.blockFormat(), first.charFormat())
    elif cursor.block().length() <= 1:
        cursor.setBlockFormat(first.blockFormat())
    cursor.insertFragment(QTextDocumentFragment(tmp))


class MarkdownView(QTextBrowser):
    copied = Signal(str)  # what was copied, for a status message
    height_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
        )
        self.viewport().setAutoFillBackground(False)
        self.setStyleSheet("QTextBrowser { background: transparent; }")
        self.document().setDocumentMargin(2)
        self.document().documentLayout().documentSizeChanged.connect(self._fit_height)
        self.anchorClicked.connect(self._on_anchor)
        self._codes: list[str] = []
        self._inc: IncrementalMarkdown | None = None
        self._tail_start = 0
        self._plain_len = 0  # draft-colouring mode: characters already inserted
        self._fit_height()

    # content ---------------------------------------------------------------------------
    def set_markdown(self, text: str) -> None:
        """Render a whole message (history, or a reply that has finished)."""
        self._inc = None
        rendered = render_document(text)
        self._codes = rendered.codes
        self.setHtml(rendered.html)
        self._fit_height()

    def set_plain(self, text: str) -> None:
        """User messages: shown as typed, line breaks kept, nothing interpreted."""
        self._inc = None
        self._codes = []
        self.setHtml(f'<div style="white-space:pre-wrap;">{html.escape(text)}</div>')
        self._fit_height()

    def stream(self, text: str) -> None:
        """Show `text` (the whole reply so far) as markdown, re-rendering only its last block."""
        if self._inc is None:
            self._inc = IncrementalMarkdown()
            self._tail_start = 0
            self.clear()
        new_html, tail_html = self._inc.update(text)
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        cursor.setPosition(self._tail_start)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        if new_html:
            _insert_html(cursor, new_html)
            self._tail_start = cursor.position()
        if tail_html:
            _insert_html(cursor, tail_html)
        cursor.endEditBlock()
        self._codes = list(self._inc.codes)

    def set_coloured(self, text: str, spans: list[list[int]] | list[tuple[int, int]]) -> None:
        """Raw text with accepted-draft characters shaded. Markdown is not rendered in this mode:
        shading must follow the characters the model produced, which rendering rearranges."""
        self._inc = None
        self._codes = []
        self.clear()
        self._plain_len = 0
        self.append_coloured(text, spans)

    def append_coloured(self, text: str, spans: list[list[int]] | list[tuple[int, int]]) -> None:
        """Append the part of `text` not shown yet; `spans` are absolute [start, end) positions."""
        start = self._plain_len
        if len(text) <= start:
            return
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        plain, draft = QTextCharFormat(), QTextCharFormat()
        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        for fmt in (plain, draft):  # raw token text: monospace keeps code indentation readable
            fmt.setFontFamilies([fixed.family()])
        draft.setBackground(QColor(DRAFT_BG))
        pos = start
        for a, b in spans:
            if b <= pos:
                continue
            a = max(a, pos)
            if a > pos:
                cursor.insertText(text[pos:a], plain)
            cursor.insertText(text[a:b], draft)
            pos = b
        if pos < len(text):
            cursor.insertText(text[pos:], plain)
        self._plain_len = len(text)

    def code_blocks(self) -> list[str]:
        return list(self._codes)

    # sizing and events -------------------------------------------------------------------
    def _fit_height(self, *_: object) -> None:
        height = math.ceil(self.document().size().height()) + 2
        if self.height() != height:
            self.setFixedHeight(height)
            self.height_changed.emit()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self._fit_height()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(400, math.ceil(self.document().size().height()) + 2)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        event.ignore()  # never scrolls itself; let the chat scroll

    def _on_anchor(self, url: QUrl) -> None:
        if url.scheme() == "copy":
            try:
                code = self._codes[int(url.path())]
            except (ValueError, IndexError):
                return
            QGuiApplication.clipboard().setText(code)
            self.copied.emit(code)
        elif url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)
