"""Attaching text files in the window: chips in the composer, the file inside the message the model
gets, a chip (not the file's text) under the sent message, refusals as notices, drops, edits."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent

from tests.ui.conftest import WAIT_MS, last_widget
from tests.ui.fake_engine import Script

CODE = "def count_lines(path):\n    with open(path) as f:\n        return sum(1 for _ in f)\n"


def _model(tmp_path):
    t, d = tmp_path / "fake-target.gguf", tmp_path / "fake-draft.gguf"
    t.write_bytes(b"x")
    d.write_bytes(b"x")
    return t, d


def _files(tmp_path):
    code, notes = tmp_path / "count.py", tmp_path / "notes.txt"
    code.write_text(CODE)
    notes.write_text("remember the milk\n")
    return code, notes


def test_attached_files_reach_the_model_and_show_as_chips(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    script = Script(texts=["It counts lines."])
    w = make_window(t, d, script)
    code, notes = _files(tmp_path)
    w.composer.attach([code, notes])
    chips = w.composer.chip_widgets()
    assert [c.label.text() for c in chips] == ["count.py · 3 lines", "notes.txt · 1 line"]
    assert "def count_lines" in chips[0].toolTip()
    chips[1].remove.click()  # taken off again before sending
    qtbot.waitUntil(lambda: len(w.composer.chip_widgets()) == 1, timeout=WAIT_MS)
    w.composer.set_text("What does this do?")
    w.composer.button.click()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    sent = script.calls[-1]["messages"][-1]["content"]
    assert sent == 'What does this do?\n\n<file name="count.py">\n' + CODE.rstrip("\n") + "\n</file>"
    user = w.view.widgets()[0]
    assert user.body.toPlainText() == "What does this do?"  # the file is a chip, not a wall of code
    assert [c.label.text() for c in user.files.findChildren(type(chips[0]))] == ["count.py · 3 lines"]
    assert not w.composer.chip_widgets() and not w.composer.chips.isVisible()
    assert w.store.chats.messages(w.session.conversation_id)[0].content == sent  # saved whole


def test_a_file_alone_can_be_sent_and_names_the_chat(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["ok"]))
    code, _ = _files(tmp_path)
    assert not w.composer.button.isEnabled()
    w.composer.attach([code])
    assert w.composer.button.isEnabled()  # nothing typed, a file attached: it can go
    w.composer.button.click()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    assert w.store.chats.get(w.session.conversation_id).title.startswith("count.py")
    assert not w.view.widgets()[0].body.isVisible()


def test_what_cannot_be_attached_is_said_and_left_out(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["ok"]))
    png = tmp_path / "photo.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    w.composer.attach([png])
    assert "photo.png is not a text file" in w.notice.text() and not w.composer.chip_widgets()
    huge = tmp_path / "book.txt"
    huge.write_text("word " * 20_000)
    w.composer.set_context(4096)
    w.composer.attach([huge])
    assert "context holds 4,096" in w.notice.text() and not w.composer.chip_widgets()


def test_dropped_files_are_attached_not_pasted_as_paths(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["ok"]))
    code, notes = _files(tmp_path)
    viewport = w.composer.edit.viewport()

    def event(kind, mime: QMimeData):  # noqa: ANN001, ANN202
        if kind == "enter":
            return QDragEnterEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                   Qt.KeyboardModifier.NoModifier)
        return QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                          Qt.KeyboardModifier.NoModifier)

    # Qt hands a drag only to widgets under a real drag, so the events go to the composer's filter
    # on the box's viewport as Qt would deliver them there
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(code)), QUrl.fromLocalFile(str(notes))])
    enter = event("enter", files)
    assert w.composer.eventFilter(viewport, enter) and enter.isAccepted()
    assert w.composer.eventFilter(viewport, event("drop", files))
    assert [c.file.name for c in w.composer.chip_widgets()] == ["count.py", "notes.txt"]
    assert w.composer.text() == ""  # no file:// paths typed into the box
    text = QMimeData()
    text.setText("dragged words")
    assert not w.composer.eventFilter(viewport, event("drop", text))  # text drops are the box's own
    folder = QMimeData()
    folder.setUrls([QUrl.fromLocalFile(str(tmp_path))])
    assert not w.composer.eventFilter(viewport, event("drop", folder))


def test_editing_a_message_edits_its_text_and_keeps_its_files(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    script = Script(texts=["first", "second"])
    w = make_window(t, d, script)
    code, _ = _files(tmp_path)
    w.composer.attach([code])
    w.composer.set_text("Explain")
    w.composer.button.click()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    user = w.view.widgets()[0]
    user.start_edit()
    assert user.editor.toPlainText() == "Explain"
    user.editor.setPlainText("Explain briefly")
    user.edit_save.click()
    qtbot.waitUntil(lambda: not w.session.busy and last_widget(w).text == "second", timeout=WAIT_MS)
    assert script.calls[-1]["messages"][-1]["content"].startswith('Explain briefly\n\n<file name="count.py">')


def test_a_long_file_name_is_shortened_not_the_window_widened(make_window, qtbot, qapp, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["ok"]))
    long = tmp_path / ("quarterly-planning-meeting-notes-with-every-decision-and-owner-" * 2 + ".md")
    long.write_text("- ship\n")
    w.composer.attach([long])
    w.resize(480, 700)
    qtbot.waitUntil(lambda: w.width() <= 480, timeout=WAIT_MS)
    for _ in range(5):
        qapp.processEvents()
    (chip,) = w.composer.chip_widgets()
    right = chip.mapTo(w.composer, chip.rect().topRight()).x()
    assert right <= w.composer.width() and chip.width() <= 320
    assert chip.label.text() == f"{long.name} · 1 line" and chip.label.toolTip() == chip.label.text()


def test_ctrl_o_and_the_button_open_the_file_chooser(make_window, qtbot, tmp_path, monkeypatch):
    from atomicchat.ui.chat import composer as composer_module

    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["ok"]))
    code, notes = _files(tmp_path)
    picked = iter([[str(code)], [str(notes)], []])
    monkeypatch.setattr(composer_module.QFileDialog, "getOpenFileNames", lambda *a, **k: (next(picked), ""))
    assert w.attach_action.shortcut().toString() == "Ctrl+O"
    w.attach_action.trigger()
    w.composer.attach_button.click()
    w.composer.attach_button.click()  # cancelled: nothing picked, nothing said
    assert [c.file.name for c in w.composer.chip_widgets()] == ["count.py", "notes.txt"] and not w.notice.text()
    assert "attach text files (Ctrl+O)" in w.view.empty.text()  # the empty chat says it can be done
