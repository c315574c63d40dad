"""A read-only rich-text view that is exactly as tall as its content, for one message body.

While a reply streams, `stream(text)` re-renders only the unfinished last markdown block into
the document (see markdown_render.IncrementalMarkdown); finished blocks are inserted once and
never laid out again. Links `copy:N` copy code block N to the clipboard. With "colour accepted
draft tokens" on, the drafted characters are shaded in the rendered text (markdown stays on).
"""

from __future__ import annotations

import difflib
import html
import math

from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QGuiApplication,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QWheelEvent,
)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

from atomicchat.ui.chat.markdown_render import IncrementalMarkdown, prepare_source, render_document
from atomicchat.ui.common.theme import current as theme_colours

Spans = list[list[int]] | list[tuple[int, int]]
_PLAIN = str.maketrans({"\u2029": "\n", "\u2028": "\n", "\xa0": " "})  # table frame marks never match:
# a selection that touches one covers whole cells


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


def _in_table(block) -> bool:  # noqa: ANN001 - QTextBlock
    return QTextCursor(block).currentTable() is not None


def _drop_blank_after_tables(doc: QTextDocument, start: int = 0, end: int | None = None) -> int:
    """Remove the empty block that Qt's HTML import leaves between a table (a code box) and the
    paragraph after it; returns how many characters went. Rendered in one piece, a reply got a blank
    line under each code box that the same reply streamed in pieces did not: 12 px more after a
    theme switch or a restart than while it was written."""
    removed = 0
    block = doc.findBlock(start)
    while block.isValid() and (end is None or block.position() < end - removed):
        after = block.next()
        if (block.length() == 1 and not _in_table(block) and block.previous().isValid()
                and _in_table(block.previous()) and after.isValid() and after.length() > 1
                and not _in_table(after)):
            fmt = after.blockFormat()
            cursor = QTextCursor(after)
            cursor.deletePreviousChar()  # the paragraph joins the blank block...
            cursor.setBlockFormat(fmt)  # ...and keeps its own spacing
            removed += 1
            block = cursor.block()
        block = block.next()
    return removed


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
        self._fit_height()

    # content ---------------------------------------------------------------------------
    def set_markdown(self, text: str, spans: Spans | None = None) -> None:
        """Render a whole message (history, or a reply that has finished); `spans`: drafted text to shade."""
        self._inc = None
        rendered = render_document(text)
        self._codes = rendered.codes
        self.setHtml(rendered.html)
        _drop_blank_after_tables(self.document())
        if spans:
            self.colour_drafts(text, spans)
        self._fit_height()

    def set_plain(self, text: str) -> None:
        """User messages: shown as typed, line breaks kept, nothing interpreted."""
        self._inc = None
        self._codes = []
        self.setHtml(f'<div style="white-space:pre-wrap;">{html.escape(text)}</div>')
        self._fit_height()

    def stream(self, text: str, spans: Spans | None = None) -> None:
        """Show `text` (the whole reply so far) as markdown, re-rendering only its last block."""
        if self._inc is None:
            self._inc = IncrementalMarkdown()
            self._tail_start = 0
            self.clear()
        doc_from, src_from = self._tail_start, self._inc.committed_chars
        new_html, tail_html = self._inc.update(text)
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        cursor.setPosition(self._tail_start)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        cursor.setCharFormat(QTextCharFormat())  # new blocks must not inherit the shading before them
        if new_html:
            _insert_html(cursor, new_html)
            self._tail_start = cursor.position()
        if tail_html:
            _insert_html(cursor, tail_html)
        cursor.endEditBlock()
        if new_html:  # tables are known to cursors only once the edit block is closed
            self._tail_start -= _drop_blank_after_tables(self.document(), doc_from, self._tail_start)
        self._codes = list(self._inc.codes)
        if spans:
            if prepare_source(text) != text:  # a <think> section moves offsets: align it all
                doc_from = src_from = 0
            self.colour_drafts(text, spans, doc_from, src_from)

    def colour_drafts(self, source: str, spans: Spans, doc_from: int = 0, src_from: int = 0) -> None:
        """Shade the rendered characters that came from accepted draft tokens.

        `spans` are [start, end) offsets into the markdown `source`; the rendered document drops
        the markup (fences, `**`, list markers) and adds labels, so source and document text are
        aligned (difflib) and only characters present in both are shaded: code stays a code box.
        Only the document from `doc_from` (rendered from `source[src_from:]`) is aligned.
        """
        doc = self.document()
        raw = doc.toRawText()[doc_from:]
        shown = raw.translate(_PLAIN)
        part = source[src_from:]
        wanted = [(max(a - src_from, 0), b - src_from) for a, b in spans if b > src_from]
        if not wanted or not shown:
            return
        ranges: list[tuple[int, int]] = []
        matcher = difflib.SequenceMatcher(None, part, shown, autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            for s0, e0 in wanted:
                lo, hi = max(a, s0), min(a + size, e0)
                if lo < hi:
                    ranges.append((doc_from + b + lo - a, doc_from + b + hi - a))
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(theme_colours().draft_bg))
        cursor = QTextCursor(doc)
        cursor.beginEditBlock()
        for lo, hi in ranges:
            cursor.setPosition(lo)
            cursor.setPosition(hi, QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(fmt)
        cursor.endEditBlock()

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
