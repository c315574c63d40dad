"""Regenerate and edit keep versions: ‹ i/n › pages through them, with the later turns of each."""

from __future__ import annotations

from tests.ui.conftest import WAIT_MS, send
from tests.ui.fake_engine import Script


def _texts(w):  # noqa: ANN001, ANN202
    return [x.text for x in w.view.widgets()]


def test_pager_pages_regenerated_replies_and_edited_questions(make_window, qtbot, tmp_path):
    t = tmp_path / "t.gguf"
    t.write_bytes(b"x")
    w = make_window(t, None, Script(texts=["first", "second", "third", "fourth"]))
    send(qtbot, w, "question")
    reply = w.view.widgets()[-1]
    assert not reply.pager.isVisible()  # one version: no pager
    for _ in range(2):
        w.view.widgets()[-1].regen_button.click()
        qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    reply = w.view.widgets()[-1]
    assert _texts(w) == ["question", "third"] and reply.pager.label.text() == "3/3" and reply.pager.isVisible()
    reply.pager.prev.click()
    qtbot.waitUntil(lambda: _texts(w)[-1] == "second", timeout=WAIT_MS)
    assert w.view.widgets()[-1].pager.label.text() == "2/3"
    w.view.widgets()[-1].pager.prev.click()
    qtbot.waitUntil(lambda: _texts(w)[-1] == "first", timeout=WAIT_MS)
    assert not w.view.widgets()[-1].pager.prev.isEnabled() and w.view.widgets()[-1].pager.next.isEnabled()

    user = w.view.widgets()[0]
    user.start_edit()
    user.editor.setPlainText("question, edited")
    user.edit_save.click()
    qtbot.waitUntil(lambda: not w.session.busy and len(w.view.widgets()) == 2, timeout=WAIT_MS)
    assert _texts(w) == ["question, edited", "fourth"]
    assert w.view.widgets()[0].pager.label.text() == "2/2" and not w.view.widgets()[1].pager.isVisible()
    w.view.widgets()[0].pager.prev.click()  # the old question comes back with its three replies
    qtbot.waitUntil(lambda: _texts(w)[0] == "question", timeout=WAIT_MS)
    assert _texts(w) == ["question", "first"] and w.view.widgets()[1].pager.label.text() == "1/3"
    cid = w.session.conversation_id
    w.shutdown()
    w.store.close()
    from atomicchat.store import open_store

    again = open_store()  # all of it is in SQLite
    assert [m.content for m in again.chats.messages(cid)] == ["question", "first"]
    assert again.chats.version_counts(cid) == {0: (0, 2), 1: (0, 3)}
    again.close()


def test_regenerate_samples_a_new_seed_and_uses_model_defaults(make_window, qtbot, tmp_path):
    from dataclasses import replace

    from atomicchat.models.sampling_defaults import Sampling

    t = tmp_path / "t.gguf"
    t.write_bytes(b"x")
    script = Script(texts=["a", "b", "c"])
    w = make_window(t, None, script)
    assert w.settings.temperature == 0.0 and w.settings.sampling_from_model
    send(qtbot, w, "q")
    assert script.calls[-1]["params"].temperature == 0.0  # no recommendation: the user's greedy choice
    for _ in range(2):
        w.view.widgets()[-1].regen_button.click()
        qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    seeds = [c["params"].seed for c in script.calls[-2:]]
    assert all(isinstance(s, int) for s in seeds) and seeds[0] != seeds[1]
    assert all(c["params"].temperature == 0.7 for c in script.calls[-2:])
    assert "Regenerate samples" in w.notice.label.text()
    w.session.recommended = Sampling(0.6, 0.95, 20, 0.0, "test")
    send(qtbot, w, "again")
    assert (script.calls[-1]["params"].temperature, script.calls[-1]["params"].top_k) == (0.6, 20)
    w.settings = replace(w.settings, sampling_from_model=False)
    send(qtbot, w, "mine")
    assert script.calls[-1]["params"].temperature == 0.0
