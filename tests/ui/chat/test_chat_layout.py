"""The chat view at narrow widths and across chat switches: nothing is clipped, nothing is left painted."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect

from tests.ui.conftest import WAIT_MS, last_widget, send
from tests.ui.fake_engine import Script

LONG_LINE = "result = compute_the_value(" + ", ".join(f"argument_{i}" for i in range(30)) + ")"
REPLY = f"Here is the code:\n\n```python\n{LONG_LINE}\nprint(result)\n```\n\nThat is all.\n"


def _model(tmp_path, stem="a-rather-long-target-model-name-Q4_K_M"):
    t, d = tmp_path / f"{stem}.gguf", tmp_path / "a-rather-long-dflash-draft-name.gguf"
    t.write_bytes(b"x")
    d.write_bytes(b"x")
    return t, d


def _rect_in(widget, ancestor) -> QRect:
    return QRect(widget.mapTo(ancestor, QPoint(0, 0)), widget.size())


@pytest.mark.parametrize("finish", ["eos", "length"])  # "length": the status label and Continue too
@pytest.mark.parametrize("width", [1280, 950, 800, 480])
def test_reply_fits_the_viewport(make_window, qtbot, qapp, tmp_path, width, finish):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=[REPLY], finish_reason=finish))
    send(qtbot, w, "Write code with a very long line please")
    w.resize(width, 700)
    qtbot.waitUntil(lambda: w.width() <= width, timeout=WAIT_MS)
    for _ in range(5):
        qapp.processEvents()
    viewport = w.view.scroll.viewport()
    vp = viewport.rect()
    reply = last_widget(w)
    assert reply.stats_bar.isVisible() and reply.stats.used_draft
    for m in w.view.widgets():
        r = _rect_in(m, viewport)
        assert r.left() >= 0 and r.right() <= vp.right(), (width, m.objectName(), r, vp)
        for button in (m.copy_button, m.edit_button, m.regen_button, m.continue_button, m.status, m.stats_bar):
            if button is not None and button.isVisible():
                b = _rect_in(button, viewport)
                assert b.right() <= vp.right() and b.left() >= 0, (width, button, b, vp)
    assert reply.continue_button.isVisible() == (finish == "length") == reply.status.isVisible()
    body = _rect_in(reply.body, viewport)
    assert body.right() <= vp.right()
    assert w.view.container.width() <= viewport.width()
    assert viewport.width() >= min(width * 0.75, width - 300)  # a narrow window hides the chat list
    # the whole text is there (not cut): the long code line is in the document
    assert LONG_LINE in reply.body.toPlainText().replace("\u2028", "\n")


def test_stats_bar_never_overlaps_the_text_while_streaming(make_window, qtbot, qapp, tmp_path):
    t, d = _model(tmp_path)
    text = "Intro line.\n\n```python\n" + "".join(f"x_{i} = {i} * 2\n" for i in range(60)) + "```\n"
    w = make_window(t, d, Script(texts=[text], step_delay=0.004))
    w.resize(800, 700)
    send(qtbot, w, "code", wait=False)
    checked = 0
    while w.session.busy:
        qapp.processEvents()
        reply = last_widget(w)
        if reply.body.isVisible() and reply.stats_bar.isVisible():
            body, bar = reply.body.geometry(), reply.stats_bar.geometry()
            assert not body.intersects(bar), (body, bar)
            checked += 1
        qtbot.wait(5)
    assert checked > 3


def test_switching_chats_leaves_nothing_of_the_previous_one(make_window, qtbot, qapp, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["First reply with some words.", "Second chat reply."]))
    send(qtbot, w, "first chat")
    first_widgets = w.view.widgets()
    w.new_chat()
    send(qtbot, w, "second chat")
    second_widgets = w.view.widgets()
    assert w.sidebar.list.count() == 2
    # switch to the first chat as the context menu does: from an event handler, then a nested loop
    item = next(w.sidebar.list.item(i) for i in range(2) if w.sidebar.list.item(i).text().startswith("first"))
    from PySide6.QtCore import QEventLoop, QTimer

    outer, seen = QEventLoop(), []

    def right_click() -> None:
        w.sidebar.list.setCurrentItem(item)
        menu_loop = QEventLoop()
        QTimer.singleShot(50, menu_loop.quit)
        menu_loop.exec()  # like QMenu.exec(): deferred deletes of the outer loop wait
        seen.extend(m for m in w.view.container.findChildren(type(first_widgets[0])) if m.isVisible())
        outer.quit()

    QTimer.singleShot(0, right_click)
    outer.exec()
    assert seen and all(m not in second_widgets for m in seen)
    assert [m.text for m in seen] == ["first chat", "First reply with some words."]


CODE_REPLY = (
    "```python\ndef count_lines(filename):\n    with open(filename, 'r') as f:\n"
    "        lines = [line.strip() for line in f]\n    return sum(line.strip() for line in lines if line)\n```\n\n"
    "This function reads a file line by line and counts the number of lines. The `with` statement ensures "
    "that the file is closed automatically when the function ends.\n"
)


@pytest.mark.parametrize("plain_only", [False, True])
def test_the_stats_bar_stays_inside_its_reply_when_the_window_narrows(make_window, qtbot, qapp, tmp_path, plain_only):
    """The screenshot script's narrow picture (1280 -> 600 px) had no stats bar: the reply's body
    reflowed to an intermediate width (211 px high) and back (147 px) inside the message's own layout
    pass, which went on placing the bar by the taller body, 64 px below the reply's bottom, clipped,
    and nothing laid it out again. Every width, both ways, with drafts and with none."""
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=[CODE_REPLY], plain_only=plain_only))
    w.resize(1280, 820)
    send(qtbot, w, "Write a function that reads a file and counts lines")
    for width in (600, 1280, 480, 950, 600):
        w.resize(width, 820)
        qtbot.wait(50)
        reply = last_widget(w)
        bar, body = reply.stats_bar.geometry(), reply.body.geometry()
        assert reply.stats_bar.isVisible() and reply.stats_bar.chart.isVisible() == (not plain_only)
        assert bar.top() >= body.bottom() and bar.bottom() <= reply.contentsRect().bottom(), (width, body, bar, reply.rect())


def test_the_status_bar_shortens_the_model_names_in_a_narrow_window(make_window, qtbot, qapp, tmp_path):
    """At 600 px the status bar cut "DFlash draft: SmolLM2-135M-Instr" mid-word, with nothing to say so
    (the screenshot script's narrow picture): now it ends in "…" before the device label, and the
    whole text is in its tooltip."""
    from PySide6.QtWidgets import QLabel

    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["ok"]))
    send(qtbot, w, "hi")
    full = w.model_label.text()
    assert "DFlash draft: " in full
    w.resize(480, 700)
    qtbot.waitUntil(lambda: w.width() <= 480, timeout=WAIT_MS)
    for _ in range(5):
        qapp.processEvents()
    shown = QLabel.text(w.model_label)
    assert shown.endswith("…") and shown[:-1] in full and w.model_label.toolTip() == full
    label, device = w.model_label.geometry(), w.device_label.geometry()
    assert label.right() < device.left() and device.right() <= w.statusBar().width()
    w.resize(1280, 700)
    qtbot.waitUntil(lambda: QLabel.text(w.model_label) == full, timeout=WAIT_MS)
    assert w.model_label.toolTip() == ""
