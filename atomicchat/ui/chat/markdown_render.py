"""Markdown to the HTML subset Qt's rich text engine understands, with pygments code highlighting.

markdown-it-py parses (CommonMark + tables + strikethrough, raw HTML off: model output is text,
not markup). Fenced code becomes a shaded box with a language label and a `copy:N` link that the
view turns into a clipboard copy. Highlighting is memoised per (language, code), so a finished code
block is coloured once however many times the message is re-rendered while streaming.

`IncrementalMarkdown` supports streaming: top-level blocks that are followed by another block
cannot change any more, so they are rendered once ("committed") and only the last block, the
tail, is re-rendered on each frame. The cost per frame stays proportional to the tail, not the reply.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from atomicchat.engine.chat import THINK_CLOSE, THINK_OPEN


@dataclass(frozen=True)
class RenderColours:
    """Colours baked into the HTML; the theme sets them (light or dark) before messages render."""

    code_bg: str = "#f4f5f7"
    code_label: str = "#6b7280"
    inline_code_bg: str = "#eef0f3"
    table_border: str = "#d1d5db"
    pygments_style: str = "default"


_colours = RenderColours()


def set_colours(colours: RenderColours) -> None:
    global _colours
    _colours = colours


def colours() -> RenderColours:
    return _colours


@lru_cache(maxsize=8)
def _formatter(style: str) -> HtmlFormatter:
    return HtmlFormatter(noclasses=True, nowrap=True, style=style)


def highlight_code(code: str, lang: str) -> str:
    """Coloured HTML spans for `code`; escaped plain text when the language is unknown or empty."""
    return _highlight(code, lang, _colours.pygments_style)


@lru_cache(maxsize=512)
def _highlight(code: str, lang: str, style: str) -> str:
    if lang:
        try:
            lexer = get_lexer_by_name(lang, stripnl=False, ensurenl=False)
        except ClassNotFound:
            lexer = None
        if lexer is not None:
            return highlight(code, lexer, _formatter(style))
    return html.escape(code)


def _code_box(code: str, lang: str, index: int) -> str:
    label = html.escape(lang) if lang else "code"
    body = highlight_code(code.rstrip("\n"), lang.lower())
    c = _colours
    # A one-cell-wide table is the only way to get a padded, shaded, full-width box in Qt rich text.
    return (
        f'<table width="100%" cellspacing="0" cellpadding="8" style="background-color:{c.code_bg};'
        ' margin-top:6px; margin-bottom:8px;">'
        f'<tr><td style="color:{c.code_label}; font-size:small; padding-bottom:0;">{label}'
        f'&nbsp;&nbsp;<a href="copy:{index}" style="color:{c.code_label};">Copy</a></td></tr>'
        f'<tr><td style="padding-top:2px;"><pre style="white-space:pre-wrap; margin-top:0; margin-bottom:0;">{body}</pre>'
        "</td></tr></table>\n"
    )


def _make_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(["table", "strikethrough"])

    def fence(_r: Any, tokens: list[Any], idx: int, options: Any, env: dict[str, Any]) -> str:
        tok = tokens[idx]
        lang = (tok.info or "").strip().split(maxsplit=1)[0] if tok.info else ""
        return _add_code(env, tok.content, lang)

    def code_block(_r: Any, tokens: list[Any], idx: int, options: Any, env: dict[str, Any]) -> str:
        return _add_code(env, tokens[idx].content, "")

    def code_inline(_r: Any, tokens: list[Any], idx: int, options: Any, env: dict[str, Any]) -> str:
        text = html.escape(tokens[idx].content)
        return f'<code style="background-color:{_colours.inline_code_bg};">&nbsp;{text}&nbsp;</code>'

    def table_open(_r: Any, tokens: list[Any], idx: int, options: Any, env: dict[str, Any]) -> str:
        return (
            f'<table border="1" cellspacing="0" cellpadding="5" style="border-color:{_colours.table_border}; border-style:solid;'
            ' border-collapse:collapse; margin-top:6px; margin-bottom:8px;">\n'
        )

    md.add_render_rule("table_open", table_open)
    md.add_render_rule("fence", fence)
    md.add_render_rule("code_block", code_block)
    md.add_render_rule("code_inline", code_inline)
    return md


def _add_code(env: dict[str, Any], code: str, lang: str) -> str:
    codes: list[str] = env.setdefault("codes", [])
    index = env.get("code_base", 0) + len(codes)
    codes.append(code)
    return _code_box(code, lang, index)


_md = _make_parser()


def warm_up(languages: tuple[str, ...] = ("python", "bash", "javascript", "json", "cpp", "rust")) -> None:
    """Import the common lexers once while the app is idle: the first lookup of a language loads
    its pygments module (tens of ms), which would otherwise land in the middle of a streaming reply."""
    for lang in languages:
        highlight_code("x = 1\n", lang)
    render_markdown("# t\n\n*a* `b`\n\n| a |\n|---|\n| 1 |\n")


def prepare_source(text: str) -> str:
    """Show a leading <think>…</think> section as a quoted "Thinking" block instead of raw tags.

    Line-by-line and prefix-stable: the prepared form of a longer text starts with the prepared
    form of any earlier prefix (up to its last line), which the incremental renderer relies on.
    """
    stripped = text.lstrip()
    if not stripped.startswith(THINK_OPEN):
        return text
    body = stripped[len(THINK_OPEN) :]
    thinking, sep, answer = body.partition(THINK_CLOSE)
    quoted = "\n".join("> " + line if line.strip() else ">" for line in thinking.strip("\n").split("\n"))
    out = "> *Thinking*\n>\n" + quoted
    if sep:
        out += "\n\n" + answer.lstrip("\n")
    return out


@dataclass
class Rendered:
    html: str
    codes: list[str]


def render_markdown(text: str, code_base: int = 0) -> Rendered:
    env: dict[str, Any] = {"code_base": code_base, "codes": []}
    return Rendered(_md.render(text, env), env["codes"])


def render_document(text: str) -> Rendered:
    """The whole message at once (finished replies, history)."""
    return render_markdown(prepare_source(text))


def stable_prefix_length(source: str) -> int:
    """Characters of `source` made of complete top-level blocks (all but the last block)."""
    tokens = _md.parse(source)
    starts = [t.map[0] for t in tokens if t.level == 0 and t.nesting >= 0 and t.map]
    if len(starts) < 2:
        return 0
    cut_line = starts[-1]
    pos = 0
    for _ in range(cut_line):
        nl = source.find("\n", pos)
        if nl < 0:
            return 0
        pos = nl + 1
    return pos


@dataclass
class IncrementalMarkdown:
    """Streaming renderer state for one message; feed it the whole text so far on each frame."""

    committed_chars: int = 0  # of the prepared source
    codes: list[str] = field(default_factory=list)  # committed code blocks, then the tail's
    _committed_codes: int = 0

    def update(self, text: str) -> tuple[str, str]:
        """Return (html to append to the committed part, html of the new tail)."""
        source = prepare_source(text)
        tail = source[self.committed_chars :]
        cut = stable_prefix_length(tail)
        new_html = ""
        del self.codes[self._committed_codes :]
        if cut:
            done = render_markdown(tail[:cut], self._committed_codes)
            new_html = done.html
            self.codes.extend(done.codes)
            self._committed_codes = len(self.codes)
            self.committed_chars += cut
            tail = tail[cut:]
        rest = render_markdown(tail, self._committed_codes)
        self.codes.extend(rest.codes)
        return new_html, rest.html
