"""The chat window end to end with the scripted engine: streaming, stop, regenerate, edit, errors."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt

from atomicchat.store.records import DONE, ERROR, STOPPED
from tests.ui.conftest import WAIT_MS, last_widget, send
from tests.ui.fake_engine import Script

CODE_REPLY = (
    "Sure. Here is a function:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nAnd a list:\n\n- one\n- two\n"
)


def _model(tmp_path):
    t, d = tmp_path / "fake-target.gguf", tmp_path / "fake-draft.gguf"
    t.write_bytes(b"x")
    d.write_bytes(b"x")
    return t, d


def test_send_streams_markdown_and_keeps_stats(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=[CODE_REPLY], step_delay=0.001))
    send(qtbot, w, "Write add()")
    user, reply = w.view.widgets()
    assert user.text == "Write add()"
    assert reply.text == CODE_REPLY
    html = reply.body.toHtml()
    assert "def" in reply.body.toPlainText() and "Copy" in reply.body.toPlainText()
    assert "color:" in html  # pygments colours
    assert reply.body.code_blocks() == ["def add(a, b):\n    return a + b\n"]
    bar = reply.stats_bar
    s = reply.stats
    assert bar.isVisible() and bar.speed.text() == (f"{s.tokens_per_second:.1f} tok/s" if s.has_rate
                                                    else f"{s.n_generated} tokens")
    assert bar.acceptance.text().startswith("acceptance ") and "%" in bar.acceptance.text()
    assert bar.tau.text().startswith("τ ")
    assert "estimated" not in bar.speedup.text() and "≈" not in bar.speedup.text()
    assert bar.chart.values() and max(bar.chart.values()) == 5
    (m_user, m_reply) = w.store.chats.messages(w.session.conversation_id)
    assert m_reply.status == DONE and m_reply.content == CODE_REPLY
    assert m_reply.stats.used_draft and m_reply.stats.n_accepted > 0
    assert m_reply.stats.step_accepted == bar.chart.values()
    assert w.sidebar.list.count() == 1 and re.fullmatch(r"Write add\(\) · \d\d:\d\d", w.sidebar.list.item(0).text())


def test_copy_link_copies_the_code_block(make_window, qtbot, tmp_path, qapp):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=[CODE_REPLY]))
    send(qtbot, w, "code please")
    from PySide6.QtCore import QUrl

    last_widget(w).body.anchorClicked.emit(QUrl("copy:0"))
    assert qapp.clipboard().text() == "def add(a, b):\n    return a + b\n"


def test_stop_keeps_partial_reply(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["word " * 2000], step_delay=0.003))
    send(qtbot, w, "talk a lot", wait=False)
    assert w.composer.button.text() == "Stop"
    qtbot.waitUntil(lambda: len(last_widget(w).text) > 20, timeout=WAIT_MS)
    w.composer.button.click()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    reply = last_widget(w)
    assert reply.message.status == STOPPED and reply.status.text() == "stopped"
    stored = w.store.chats.messages(w.session.conversation_id)[-1]
    assert stored.status == STOPPED and 0 < len(stored.content) < len("word " * 2000)
    assert stored.content == reply.text
    assert w.composer.button.text() == "Send"


def test_escape_stops(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["x" * 5000], step_delay=0.003))
    send(qtbot, w, "go", wait=False)
    qtbot.waitUntil(lambda: len(last_widget(w).text) > 10, timeout=WAIT_MS)
    qtbot.keyClick(w.composer.edit, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    assert w.store.chats.messages(w.session.conversation_id)[-1].status == STOPPED


def test_reply_is_saved_while_streaming(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["y" * 6000], step_delay=0.002))
    send(qtbot, w, "stream", wait=False)

    def saved_partial() -> bool:
        msgs = w.store.chats.messages(w.session.conversation_id)
        return len(msgs) == 2 and msgs[1].status == "streaming" and len(msgs[1].content) > 0

    qtbot.waitUntil(saved_partial, timeout=WAIT_MS)  # a crash now would keep this text
    w.session.stop()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)


def test_regenerate_replaces_last_reply(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    script = Script(texts=["first answer", "second answer"])
    w = make_window(t, d, script)
    send(qtbot, w, "question")
    assert last_widget(w).regen_button.isVisible()
    last_widget(w).regen_button.click()
    qtbot.waitUntil(lambda: not w.session.busy and last_widget(w).text == "second answer", timeout=WAIT_MS)
    msgs = w.store.chats.messages(w.session.conversation_id)
    assert [m.content for m in msgs] == ["question", "second answer"]
    assert len(w.view.widgets()) == 2
    assert script.calls[-1]["messages"][-1] == {"role": "user", "content": "question"}


def test_edit_user_message_regenerates_from_there(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    script = Script(texts=["a1", "a2", "a3"])
    w = make_window(t, d, script)
    send(qtbot, w, "q1")
    send(qtbot, w, "q2")
    first_user = w.view.widgets()[0]
    first_user.edit_button.click()
    assert first_user.editor.isVisible()
    first_user.editor.setPlainText("q1 edited")
    first_user.edit_save.click()
    qtbot.waitUntil(lambda: not w.session.busy and len(w.view.widgets()) == 2, timeout=WAIT_MS)
    msgs = w.store.chats.messages(w.session.conversation_id)
    assert [m.content for m in msgs] == ["q1 edited", "a3"]
    assert [x["content"] for x in script.calls[-1]["messages"] if x["role"] != "system"] == ["q1 edited"]


def test_enter_sends_shift_enter_adds_line(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["ok"]))
    edit = w.composer.edit
    edit.setFocus()
    qtbot.keyClicks(edit, "line one")
    qtbot.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(edit, "line two")
    assert edit.toPlainText() == "line one\nline two"
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not w.session.busy and len(w.view.widgets()) == 2, timeout=WAIT_MS)
    assert w.view.widgets()[0].text == "line one\nline two"
    assert edit.toPlainText() == ""


def test_engine_error_is_shown_and_app_keeps_working(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    script = Script(texts=["this will break halfway " * 10], fail_after_steps=3)
    w = make_window(t, d, script)
    send(qtbot, w, "break")
    reply = last_widget(w)
    assert reply.message.status == ERROR
    assert "llama.cpp failed while evaluating" in reply.error.text() and reply.error.isVisible()
    assert w.notice.isVisible() and w.notice.kind == "error" and "llama.cpp failed" in w.notice.label.text()
    assert w.store.chats.messages(w.session.conversation_id)[-1].status == ERROR
    script.fail_after_steps = None
    send(qtbot, w, "again")
    assert last_widget(w).message.status == DONE and last_widget(w).text.startswith("this will break")


def test_target_only_reply_says_so(make_window, qtbot, tmp_path):
    t, _ = _model(tmp_path)
    w = make_window(t, None, Script(texts=["plain"]))
    send(qtbot, w, "hi")
    bar = last_widget(w).stats_bar
    assert bar.mode.text() == "target only"
    assert not bar.acceptance.isVisible() and not bar.chart.isVisible() and not bar.measure.isVisible()


def test_baseline_is_measured_automatically_once_then_speedup_is_measured(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["some reply text " * 5], step_delay=0.002))
    key = w.session.model_key
    assert key.endswith("|" + w.ready.info.draft_name)  # per model, device, offload and draft
    qtbot.waitUntil(lambda: w.store.baselines.get(key) is not None, timeout=WAIT_MS)  # nobody clicked
    measured = w.store.baselines.get(key).tokens_per_second
    speed = w.session.baseline_for(key)
    assert speed.far_depth > speed.depth  # measured after a short and after a long prompt
    send(qtbot, w, "hi")
    bar = last_widget(w).stats_bar
    qtbot.waitUntil(lambda: "target-only" in bar.speedup.text(), timeout=WAIT_MS)
    st = last_widget(w).stats
    assert f"({speed.for_reply(st.n_prompt, st.n_generated):.0f} tok/s, measured)" in bar.speedup.text()
    assert not bar.measure.isVisible()
    w.load_model(w.choice)  # same model again: the cached baseline is used, nothing is re-measured
    qtbot.waitUntil(lambda: w.ready is not None and w.session.model_key == key, timeout=WAIT_MS)
    qtbot.wait(2 * 1500)
    assert w.session._baseline_req is None and w.store.baselines.get(key).tokens_per_second == measured


def test_a_message_sent_while_the_automatic_baseline_runs_goes_first(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["some reply text " * 5], step_delay=0.05))  # ~1.4 s a run
    key = w.session.model_key
    notices = []
    w.session.notice.connect(lambda kind, text: notices.append((kind, text)))
    qtbot.waitUntil(lambda: w.session._baseline_req is not None, timeout=WAIT_MS)
    send(qtbot, w, "hi", wait=False)
    assert w.session._baseline_req is None and w.store.baselines.get(key) is None  # stopped for the reply
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    assert last_widget(w).stats.n_generated > 0
    qtbot.waitUntil(lambda: w.store.baselines.get(key) is not None, timeout=4 * WAIT_MS)  # measured after it
    assert not [n for n in notices if n[0] == "error"], notices


def test_old_single_length_baselines_are_measured_again(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["some reply text " * 5], step_delay=0.002))
    key = w.session.model_key
    qtbot.waitUntil(lambda: w.store.baselines.get(key) is not None, timeout=WAIT_MS)
    w.store.db.conn.execute("UPDATE baselines SET depth = NULL")  # as the schema migration leaves old rows
    assert w.session.baseline_for(key) is None  # no speedup from it: it would misjudge long replies
    w.load_model(w.choice)
    qtbot.waitUntil(lambda: w.store.baselines.get(key).depth is not None, timeout=4 * WAIT_MS)


def test_dflash_slower_than_target_offers_to_turn_it_off_for_this_model(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["some reply text " * 5], step_delay=0.002))
    key = w.session.model_key
    qtbot.waitUntil(lambda: w.store.baselines.get(key) is not None, timeout=WAIT_MS)
    w.store.baselines.put(key, 1e6, "CPU")  # the target alone measured far faster than any reply
    send(qtbot, w, "hi")
    bar = last_widget(w).stats_bar
    qtbot.waitUntil(lambda: bar.dflash_off.isVisible(), timeout=WAIT_MS)
    assert bar.speedup.text().startswith("slower than target-only: ")
    bar.dflash_off.click()
    qtbot.waitUntil(lambda: w.ready is not None and w.ready.info.draft_name is None, timeout=WAIT_MS)
    assert w.store.settings.load().draft_off(str(t)) and w.settings.use_draft  # this model only
    assert "DFlash is off for" in w.notice.label.text()


def test_colour_draft_tokens_shades_accepted_text(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["abcdefghijklmnopqrstuvwxyz" * 4], accept_pattern=(2, 0)))
    send(qtbot, w, "colours")
    w.colour_action.trigger()
    assert w.settings.colour_draft_tokens and w.store.settings.load().colour_draft_tokens
    body = last_widget(w).body
    spans = last_widget(w).stats.draft_spans
    assert spans and spans[0] == [0, 6]  # first step: 2 accepted + 1 own token, 3 chars each
    from PySide6.QtGui import QTextCursor

    cur = QTextCursor(body.document())
    cur.setPosition(2)
    assert cur.charFormat().background().color().name() == "#d9f2dd"
    cur.setPosition(8)  # second step: no accepted draft tokens
    assert cur.charFormat().background().color().name() != "#d9f2dd"


def test_view_follows_the_stream_unless_the_user_scrolled_up(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    w = make_window(t, d, Script(texts=["line of text\n\n" * 400], step_delay=0.002))
    send(qtbot, w, "many lines", wait=False)
    bar = w.view.scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 300, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=WAIT_MS)  # following
    bar.setValue(0)  # the user scrolls up to read
    grown = bar.maximum()
    qtbot.waitUntil(lambda: bar.maximum() > grown + 200, timeout=WAIT_MS)
    assert bar.value() == 0
    w.session.stop()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)


def test_a_reply_cut_for_repeating_itself_says_so_and_the_setting_turns_the_guard_off(make_window, qtbot, tmp_path):
    """The engine ended the reply because it had become a loop (reason "repetition"): the reply keeps
    its text, is marked "stopped: it kept repeating itself" (saved, so reopening the chat shows it too)
    and a notice says what happened and what to do. The app asks for the guard in every chat reply;
    Settings > Chat turns it off."""
    from dataclasses import replace

    from atomicchat.ui.chat.message_widget import REPEATING_TEXT

    t, d = _model(tmp_path)
    script = Script(texts=["A place where the soul can roam,\n" * 6], finish_reason="repetition")
    w = make_window(t, d, script)
    notices = []
    w.session.notice.connect(lambda kind, text: notices.append((kind, text)))
    send(qtbot, w, "Write a poem about the sea.")
    assert script.calls[-1]["params"].stop_loops
    reply = last_widget(w)
    assert reply.status.isVisible() and reply.status.text() == REPEATING_TEXT
    assert any("same text over and over" in text for _, text in notices), notices
    m_reply = w.store.chats.messages(w.session.conversation_id)[-1]
    assert m_reply.status == DONE and m_reply.stats.finish_reason == "repetition"
    assert m_reply.content == "A place where the soul can roam,\n" * 6
    w.session.open(w.session.conversation_id)  # the chat shown again from the store
    assert last_widget(w).status.text() == REPEATING_TEXT
    w.apply_settings(replace(w.settings, stop_loops=False))
    script.finish_reason = "eos"
    send(qtbot, w, "Another one.")
    assert not script.calls[-1]["params"].stop_loops
    assert not last_widget(w).status.isVisible()


def test_a_reply_that_starts_inside_a_think_block_shows_its_thinking_apart(make_window, qtbot, tmp_path):
    """Qwen3.5 with thinking on: the template opens <think> in the prompt, so the reply starts with the
    reasoning and only closes the block. The reply gets its opening tag, and the view its Thinking quote."""
    t, d = _model(tmp_path)
    reply_text = "The user adds two numbers.\nThat is 4.\n</think>\n\n2 + 2 = **4**."
    script = Script(texts=[reply_text], prompt_end="<|im_start|>assistant\n<think>\n")
    w = make_window(t, d, script)
    send(qtbot, w, "2 + 2?")
    _, thinking = w.view.widgets()
    assert thinking.text == "<think>\n" + reply_text
    shown = thinking.body.toPlainText()
    assert "Thinking" in shown and "The user adds two numbers." in shown and "2 + 2 = 4." in shown
    assert "think>" not in shown
    saved = w.store.chats.messages(w.session.conversation_id)[-1]
    assert saved.content == "<think>\n" + reply_text  # the next turn's template finds the reasoning whole
    script.prompt_end = "<|im_start|>assistant\n"  # the same reply to a prompt that did not open the block
    send(qtbot, w, "again")
    plain = last_widget(w)
    assert plain.text == reply_text
    # drafted spans point into the reply as shown: the opening tag moved them along by its length
    shift = len("<think>\n")
    assert thinking.stats.draft_spans == [[a + shift, b + shift] for a, b in plain.stats.draft_spans]
    assert plain.stats.draft_spans


def test_a_reply_cut_at_the_length_limit_says_so_and_continues_in_place(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    first, rest = "Here is the first half of a long answer, ", "and here is the rest of it."
    script = Script(texts=[first, rest], finish_reason="length", accept_pattern=(2, 0, 1))
    w = make_window(t, d, script)
    send(qtbot, w, "Write a long answer")
    reply = last_widget(w)
    assert reply.status.text() == "stopped at the reply length limit" and "Continue writes more" in reply.status.toolTip()
    assert reply.continue_button.isVisible() and w.continue_action.isEnabled()
    before = reply.stats
    script.finish_reason = "eos"
    reply.continue_button.click()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    assert script.tokenized[-1] == first  # the model went on from its own text...
    assert script.calls[-1]["messages"][-1] == {"role": "user", "content": "Write a long answer"}  # ...after the turn
    msgs = w.store.chats.messages(w.session.conversation_id)
    assert [m.role for m in msgs] == ["user", "assistant"] and msgs[1].content == first + rest
    assert msgs[1].status == DONE and msgs[1].stats.finish_reason == "eos"
    reply = last_widget(w)
    assert reply.text == first + rest and "the rest of it" in reply.body.toPlainText()
    assert not reply.status.text() and not reply.continue_button.isVisible() and not w.continue_action.isEnabled()
    s = reply.stats  # both parts counted: rates and the speedup cover the whole reply
    assert s.n_generated > before.n_generated and s.n_steps == before.n_steps + len(s.step_accepted) - len(before.step_accepted)
    assert s.n_prompt == before.n_prompt
    late = [sp for sp in s.draft_spans if sp[0] >= len(first)]  # the second part's drafted text, where it is
    assert late and all(0 < b - a and b <= len(first + rest) for a, b in late)


def test_a_stopped_reply_can_be_continued(make_window, qtbot, tmp_path):
    t, d = _model(tmp_path)
    script = Script(texts=["x" * 3000, "The end."], step_delay=0.002)
    w = make_window(t, d, script)
    send(qtbot, w, "go", wait=False)
    qtbot.waitUntil(lambda: len(last_widget(w).text) > 30, timeout=WAIT_MS)
    w.session.stop()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    stopped = last_widget(w).text
    assert last_widget(w).status.text() == "stopped" and last_widget(w).continue_button.isVisible()
    w.continue_action.trigger()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    assert last_widget(w).text == stopped + "The end." and script.tokenized[-1] == stopped
    assert len(w.store.chats.messages(w.session.conversation_id)) == 2
