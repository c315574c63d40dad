"""'Colour accepted draft tokens' shades the rendered markdown: code stays a code box, drafted text is coloured."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor

from atomicchat.ui.common import theme
from atomicchat.ui.chat.markdown_view import MarkdownView
from tests.ui.conftest import last_widget, send
from tests.ui.fake_engine import Script

REPLY = "Some **bold** words first.\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nThe end of it.\n"


def _bg(view: MarkdownView, pos: int) -> str:
    cur = QTextCursor(view.document())
    cur.setPosition(pos + 1)  # the format of the character before the cursor
    return cur.charFormat().background().color().name()


def _shaded(view: MarkdownView) -> str:
    raw = view.document().toRawText()
    draft = theme.current().draft_bg
    frame_marks = "\ufdd0\ufdd1"  # table start/end: no text of their own
    return "".join(ch for i, ch in enumerate(raw) if ch not in frame_marks and _bg(view, i) == draft)


def test_whole_render_keeps_markdown_and_shades_drafted_text(qapp):
    theme.apply_theme(qapp, "light")
    view = MarkdownView()
    start = REPLY.index("return")
    view.set_markdown(REPLY, [[0, 4], [start, start + len("return a")]])
    text = view.toPlainText()
    assert "```" not in text and "**" not in text  # still rendered markdown
    assert view.code_blocks() == ["def add(a, b):\n    return a + b\n"]
    assert "Copy" in text  # the code box with its label and link
    shaded = _shaded(view)
    assert shaded == "Some" + "return a"
    # the shaded code characters are inside the code box's table
    cur = QTextCursor(view.document())
    cur.setPosition(view.document().toRawText().index("return") + 1)
    assert cur.currentTable() is not None


def test_colouring_while_streaming_in_the_window(make_window, qtbot, tmp_path):
    t, d = tmp_path / "fake-target.gguf", tmp_path / "fake-draft.gguf"
    t.write_bytes(b"x")
    d.write_bytes(b"x")
    w = make_window(t, d, Script(texts=[REPLY], accept_pattern=(2, 0), step_delay=0.002))
    w.colour_action.trigger()
    send(qtbot, w, "add please")
    reply = last_widget(w)
    spans = reply.stats.draft_spans
    assert spans
    assert reply.body.code_blocks() == ["def add(a, b):\n    return a + b\n"]
    assert "```" not in reply.body.toPlainText()
    shaded = _shaded(reply.body)
    drafted = "".join(REPLY[a:b] for a, b in spans).replace("*", "").replace("`", "").replace("\n", "")
    assert shaded and "Copy" not in shaded and "python" not in shaded
    assert set(shaded) <= set(drafted + " \u2029")
    # turning colouring off re-renders without shading, still markdown
    w.colour_action.trigger()
    assert _shaded(last_widget(w).body) == ""
    assert last_widget(w).body.code_blocks() == ["def add(a, b):\n    return a + b\n"]
