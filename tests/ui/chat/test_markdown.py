"""Markdown rendering: highlighting, copy targets, and that streaming renders the same as all at once."""

from __future__ import annotations

from atomicchat.ui.chat.markdown_render import (
    IncrementalMarkdown,
    prepare_source,
    render_document,
    stable_prefix_length,
)
from atomicchat.ui.chat.markdown_view import MarkdownView

DOC = """# Plan

Some **bold** and `inline` text.

```python
def f(x):
    return x * 2  # double
```

- one
- two

| a | b |
|---|---|
| 1 | 2 |

```
plain block
```

Done.
"""


def test_fenced_code_is_highlighted_and_numbered():
    r = render_document(DOC)
    assert r.codes == ["def f(x):\n    return x * 2  # double\n", "plain block\n"]
    assert 'href="copy:0"' in r.html and 'href="copy:1"' in r.html
    assert "<span style=" in r.html  # pygments inline colours
    assert "<h1>" in r.html and "<table" in r.html and "<strong>bold</strong>" in r.html


def test_raw_html_in_model_output_is_escaped():
    r = render_document("<script>alert(1)</script> and <b>x</b>")
    assert "<script>" not in r.html and "&lt;script&gt;" in r.html


def test_unknown_language_falls_back_to_plain_text():
    r = render_document("```nosuchlang\na < b\n```\n")
    assert "a &lt; b" in r.html and r.codes == ["a < b\n"]


def test_stable_prefix_never_includes_the_last_block():
    assert stable_prefix_length("one paragraph") == 0
    src = "first\n\nsecond"
    assert src[stable_prefix_length(src) :] == "second"
    open_fence = "intro\n\n```py\nx = 1\n\nstill code"
    assert open_fence[stable_prefix_length(open_fence) :].startswith("```py")


def test_incremental_rendering_commits_blocks_once_and_keeps_codes_in_order():
    inc = IncrementalMarkdown()
    committed, tail_html = [], ""
    for i in range(1, len(DOC) + 1):
        new, tail_html = inc.update(DOC[:i])
        if new:
            committed.append(new)
    assert len(committed) >= 5  # heading, paragraph, code, list, table ... each once
    assert inc.codes == render_document(DOC).codes
    joined = "".join(committed) + tail_html
    for needle in ("<h1>", "<strong>bold</strong>", 'href="copy:0"', 'href="copy:1"', "<table", "Done."):
        assert needle in joined


def test_streamed_view_text_matches_full_render(qtbot):
    full, streamed = MarkdownView(), MarkdownView()
    qtbot.addWidget(full)
    qtbot.addWidget(streamed)
    full.set_markdown(DOC)
    for i in range(0, len(DOC) + 1, 7):
        streamed.stream(DOC[:i])
    streamed.stream(DOC)
    norm = lambda v: [ln.strip() for ln in v.toPlainText().splitlines() if ln.strip()]  # noqa: E731
    assert norm(streamed) == norm(full)
    assert streamed.code_blocks() == full.code_blocks()


def test_thinking_section_becomes_a_quote():
    assert prepare_source("<think>\nhmm\n</think>\nAnswer").startswith("> *Thinking*")
    assert prepare_source("<think>\nhmm\n</think>\nAnswer").endswith("\n\nAnswer")
    assert prepare_source("no thinking here") == "no thinking here"
    r = render_document("<think>\nstep one\n</think>\n\nThe answer.")
    assert "<blockquote>" in r.html and "The answer." in r.html and "&lt;think" not in r.html


def test_view_height_follows_content(qtbot):
    v = MarkdownView()
    qtbot.addWidget(v)
    v.resize(400, 10)
    v.show()
    v.set_markdown("one line")
    short = v.height()
    v.set_markdown("\n\n".join(f"paragraph {i}" for i in range(20)))
    assert v.height() > short * 5


def _blocks(view: MarkdownView) -> list[str]:
    out, b = [], view.document().begin()
    while b.isValid():
        out.append(b.text().strip())
        b = b.next()
    return out


def test_streaming_adds_no_blank_lines_between_blocks(qtbot):
    """Every kind of block after every other: the streamed document has the same blocks as a full
    render, empty ones included, and so the same height (a full render used to keep an empty block
    after each table: 12 px more under a code box after a theme switch or a restart)."""
    kinds = {
        "para": "Para one.\n\n",
        "head": "# Head\n\n",
        "list": "- a\n- b\n\n",
        "code": "```py\nx=1\n```\n\n",
        "quote": "> q\n\n",
        "table": "| a |\n|---|\n| 1 |\n\n",
    }
    for a, first in kinds.items():
        for b, second in kinds.items():
            src = first + second + "end"
            full, streamed = MarkdownView(), MarkdownView()
            qtbot.addWidget(full)
            qtbot.addWidget(streamed)
            full.resize(500, 100)
            streamed.resize(500, 100)
            full.set_markdown(src)
            for i in range(1, len(src) + 1):
                streamed.stream(src[:i])
            f, s = _blocks(full), _blocks(streamed)
            assert s == f, (a, b)
            assert streamed.document().size().height() == full.document().size().height(), (a, b)


def test_a_single_line_break_is_kept_as_in_other_chat_apps():
    """Models write poems, addresses and steps one a line without Markdown's two trailing spaces; as
    CommonMark soft breaks they ran together into one paragraph (a SmolLM2 poem read as one line)."""
    from atomicchat.ui.chat.markdown_render import render_document

    html = render_document("In the depths of the ocean,\nwhere shadows play,\nA sea of dreams.\n\nThe end.").html
    assert html.count("<br />") == 2 and html.count("<p>") == 2
    assert "<br />" not in render_document("```python\na = 1\nb = 2\n```\n").html  # code keeps its own lines
