"""The engine child killed (SIGKILL) or aborted (SIGABRT) mid-reply: the window stays, the partial
reply is saved as interrupted with the reason, and one click reloads the model."""

from __future__ import annotations

import os
import signal
from dataclasses import replace

import pytest

from atomicchat.store.records import DONE, INTERRUPTED
from tests.ui.conftest import WAIT_MS, last_widget, send


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGABRT])
def test_engine_child_dies_mid_reply_window_and_chat_survive(make_window, qtbot, llama_pair, sig):
    w = make_window(llama_pair.target, llama_pair.draft)
    w.settings = replace(w.settings, max_tokens=3000)
    child = w.host.worker._engine
    pid = child.pid
    assert pid != os.getpid()  # the engine runs in its own process
    send(qtbot, w, "long", wait=False)
    qtbot.waitUntil(lambda: len(last_widget(w).text) > 20, timeout=WAIT_MS)
    os.kill(pid, sig)
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    assert w.isVisible() and w.host.thread.isRunning()
    saved = w.store.chats.messages(w.session.conversation_id)[-1]
    assert saved.status == INTERRUPTED and saved.content  # what was written before the crash is kept
    reason = "killed (SIGKILL" if sig == signal.SIGKILL else "SIGABRT"
    assert reason in saved.stats.error and "crashed while writing the reply" in saved.stats.error
    assert w.notice.kind == "error" and reason in w.notice.label.text()
    assert w.notice.action.isVisible() and w.notice.action.text() == "Reload model"
    assert not w.composer.button.isEnabled()
    w.notice.action.click()
    qtbot.waitUntil(lambda: w.ready is not None, timeout=WAIT_MS)
    assert w.host.worker._engine.pid != pid
    w.settings = replace(w.settings, max_tokens=16)
    send(qtbot, w, "again")
    assert w.store.chats.messages(w.session.conversation_id)[-1].status == DONE


def test_closing_while_the_engine_hangs_takes_seconds_not_a_minute(make_window, qtbot, llama_pair):
    import time

    w = make_window(llama_pair.target, llama_pair.draft)
    child = w.host.worker._engine
    child.test_sleep(60)  # the child stops answering (a stand-in for llama.cpp spinning in a decode)
    send(qtbot, w, "hello", wait=False)
    qtbot.wait(300)
    t0 = time.monotonic()
    w.shutdown()
    assert time.monotonic() - t0 < 8 and not child.alive() and not w.host.thread.isRunning()
