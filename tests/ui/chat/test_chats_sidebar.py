"""Chat list: new chat, switching, rename, delete with undo, search, and restart persistence."""

from __future__ import annotations

from PySide6.QtCore import Qt

from atomicchat.store import open_store
from tests.ui.conftest import send
from tests.ui.fake_engine import Script


def _model(tmp_path):
    t = tmp_path / "t.gguf"
    t.write_bytes(b"x")
    return t


def _activated(w) -> bool:
    """Ask for `w` to be the active window until it is. Offscreen, activation races with other
    test windows closing: one request, then waiting, timed out after 5 s once in CI (2026-12-06)."""
    if not w.isActiveWindow():
        w.raise_()
        w.activateWindow()
        w.windowHandle().requestActivate()
    return w.isActiveWindow()


def test_ctrl_n_starts_a_new_chat_and_switching_shows_each(make_window, qtbot, tmp_path):
    w = make_window(_model(tmp_path), None, Script(texts=["reply A", "reply B"]))
    send(qtbot, w, "chat A")
    first = w.session.conversation_id
    qtbot.waitUntil(lambda: _activated(w))  # Ctrl+N is a window shortcut: the window must be active
    qtbot.keyClick(w.composer.edit, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert w.session.conversation_id is None and w.view.currentWidget() is w.view.empty
    send(qtbot, w, "chat B")
    assert w.sidebar.list.count() == 2
    assert [w.sidebar.list.item(i).text().split(" · ")[0] for i in range(2)] == ["chat B", "chat A"]
    w.sidebar.list.setCurrentRow(1)
    assert w.session.conversation_id == first
    assert [x.text for x in w.view.widgets()] == ["chat A", "reply A"]
    w.sidebar.list.setCurrentRow(0)
    assert [x.text for x in w.view.widgets()] == ["chat B", "reply B"]


def test_rename_in_place(make_window, qtbot, tmp_path):
    w = make_window(_model(tmp_path), None, Script(texts=["r"]))
    send(qtbot, w, "original title")
    item = w.sidebar.list.item(0)
    item.setText("Renamed chat")  # what the in-place editor commits
    assert w.store.chats.get(w.session.conversation_id).title == "Renamed chat"


def test_delete_then_undo(make_window, qtbot, tmp_path):
    w = make_window(_model(tmp_path), None, Script(texts=["r"]))
    send(qtbot, w, "keep me")
    cid = w.session.conversation_id
    w.delete_chat(cid)
    assert w.sidebar.list.count() == 0 and w.session.conversation_id is None
    assert w.undo_bar.isVisible() and "Deleted" in w.undo_bar.label.text()
    w.undo_bar.action.click()
    assert w.sidebar.list.count() == 1 and w.session.conversation_id == cid
    assert [x.text for x in w.view.widgets()] == ["keep me", "r"]


def test_search_filters_by_message_text(make_window, qtbot, tmp_path):
    w = make_window(_model(tmp_path), None, Script(texts=["bananas are yellow", "the sky is blue"]))
    send(qtbot, w, "fruit")
    w.new_chat()
    send(qtbot, w, "weather")
    qtbot.keyClicks(w.sidebar.search, "banana")
    assert [w.sidebar.list.item(i).text().split(" · ")[0] for i in range(w.sidebar.list.count())] == ["fruit"]
    w.sidebar.search.clear()
    assert w.sidebar.list.count() == 2
    qtbot.keyClicks(w.sidebar.search, "zzz-nothing")
    assert w.sidebar.list.count() == 0 and w.sidebar.no_match.isVisible()


def test_restart_finds_the_chat_with_its_stats(make_window, qtbot, tmp_path):
    t = _model(tmp_path)
    d = tmp_path / "d.gguf"
    d.write_bytes(b"x")
    w = make_window(t, d, Script(texts=["remember **this**"]))
    send(qtbot, w, "persist me")
    w.shutdown()
    w.store.close()
    w2 = make_window(t, d, Script(texts=["unused"]))
    assert w2.sidebar.list.count() == 1 and w2.sidebar.list.item(0).text().startswith("persist me · ")
    w2.sidebar.list.setCurrentRow(0)
    user, reply = w2.view.widgets()
    assert reply.text == "remember **this**" and "remember this" in reply.body.toPlainText()
    assert reply.stats_bar.isVisible() and reply.stats_bar.speed.text().endswith(("tok/s", "tokens"))
    assert reply.stats.n_accepted > 0
    store = open_store()
    assert store.db.journal_mode.lower() == "wal"
    store.close()


def test_switching_chats_while_a_reply_streams_stops_and_keeps_it(make_window, qtbot, tmp_path):
    from tests.ui.conftest import WAIT_MS, last_widget

    script = Script(texts=["short one", "long " * 3000], step_delay=0.002)
    w = make_window(_model(tmp_path), None, script)
    send(qtbot, w, "first chat")
    first = w.session.conversation_id
    w.new_chat()
    send(qtbot, w, "second chat", wait=False)
    second = w.session.conversation_id
    qtbot.waitUntil(lambda: len(last_widget(w).text) > 20, timeout=WAIT_MS)
    w.sidebar.select(None)
    w.sidebar.list.setCurrentRow(1)  # "first chat" (older)
    assert w.session.conversation_id == first
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    assert [x.text for x in w.view.widgets()] == ["first chat", "short one"]
    kept = w.store.chats.messages(second)[-1]
    assert kept.status == "stopped" and kept.content.startswith("long long")
