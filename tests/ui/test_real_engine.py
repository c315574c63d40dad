"""The window on the real engine: tiny random-weight GGUFs from tests/gguf_factory.py, and the real
SmolLM2-135M-Instruct with its DFlash draft (the first-run pair). Random weights decode to arbitrary text, so
those check the plumbing: streaming, stats, stop, regenerate, restart, and readable load errors;
SmolLM2's greedy reply is checked for content."""

from __future__ import annotations

from dataclasses import replace

import pytest

from atomicchat.store.records import DONE, STOPPED
from tests.gguf_factory import DraftSpec, TargetSpec, write_draft, write_not_gguf
from tests.ui.conftest import WAIT_MS, NoModels, last_widget, send


def _short(w, n: int = 48):
    w.settings = replace(w.settings, max_tokens=n)


def test_tiny_pair_streams_with_dflash_stats_and_regenerates(make_window, qtbot, llama_pair):
    w = make_window(llama_pair.target, llama_pair.draft)
    assert w.ready.info.draft_name is not None
    assert "DFlash draft" in w.model_label.text() and w.device_label.text().startswith("Device: ")
    _short(w)
    # pinned and uncut: on a CPU the adaptive policy may rightly never draft with this random pair, and
    # the confidence cut would drop every one of its doubtful tokens
    w.settings = replace(w.settings, draft_max=4, draft_p_min=0.0)
    send(qtbot, w, "hello")
    reply = last_widget(w)
    assert reply.message.status == DONE and reply.text
    s = reply.stats
    assert s.used_draft and s.n_generated == 48 and s.n_drafted > 0 and s.n_steps == len(s.step_accepted)
    assert reply.stats_bar.acceptance.text().startswith("acceptance ")
    assert "tok/s" in reply.stats_bar.speed.text() or reply.stats_bar.speed.text() == "48 tokens"
    reply.stats_bar.measure.click()  # a real target-only run on this machine, cached per model
    qtbot.waitUntil(lambda: w.store.baselines.get(w.session.model_key) is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "measured" in reply.stats_bar.speedup.text(), timeout=WAIT_MS)
    assert "target-only" in reply.stats_bar.speedup.text()  # "N× vs" or "slower than": measured either way
    assert w.store.baselines.get(w.session.model_key).tokens_per_second > 0
    first = reply.text
    reply.regen_button.click()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    msgs = w.store.chats.messages(w.session.conversation_id)
    assert len(msgs) == 2 and msgs[1].status == DONE and msgs[1].content != first  # sampled with a new seed
    assert w.store.chats.versions(w.session.conversation_id, 1) == (1, 2)  # the first reply is kept


def test_tiny_pair_stop_and_restart(make_window, qtbot, llama_pair):
    w = make_window(llama_pair.target, llama_pair.draft)
    w.settings = replace(w.settings, max_tokens=3000)
    send(qtbot, w, "long", wait=False)
    qtbot.waitUntil(lambda: len(last_widget(w).text) > 0, timeout=WAIT_MS)
    w.composer.button.click()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=WAIT_MS)
    stopped = w.store.chats.messages(w.session.conversation_id)[-1]
    assert stopped.status == STOPPED and stopped.content
    w.shutdown()
    w.store.close()
    w2 = make_window(llama_pair.target, llama_pair.draft)
    w2.sidebar.list.setCurrentRow(0)
    assert [m.text for m in w2.view.widgets()] == ["long", stopped.content]
    assert w2.view.widgets()[1].status.text() == "stopped"


def test_not_a_gguf_is_a_readable_error(make_window, qtbot, tmp_path):
    bad = write_not_gguf(tmp_path / "broken.gguf")
    w = make_window(bad, None, wait_ready=False)
    qtbot.waitUntil(lambda: w.notice.isVisible() and w.notice.kind == "error", timeout=WAIT_MS)
    assert "could not be loaded" in w.notice.label.text() and "broken.gguf" in w.notice.label.text()
    assert not w.composer.button.isEnabled()
    assert w.host.thread.isRunning()  # the worker survived


def test_mismatched_draft_falls_back_to_target_with_the_reason(make_window, qtbot, llama_pair, tmp_path):
    bad_draft = write_draft(tmp_path / "narrow-draft.gguf", TargetSpec(), DraftSpec(n_embd=32))
    w = make_window(llama_pair.target, bad_draft)
    assert w.ready.request.draft_path is None and w.ready.info.draft_name is None
    assert w.notice.kind == "warning" and "draft was not loaded" in w.notice.label.text()
    assert "width" in w.notice.label.text()
    _short(w, 16)
    send(qtbot, w, "hi")
    assert last_widget(w).stats_bar.mode.text() == "target only"


@pytest.mark.slow
def test_smollm2_first_run_reply_is_a_function_with_dflash(make_window, qtbot, smollm2_path):
    """The first-run pair as the app opens it: SmolLM2 + the draft trained for it, DFlash on."""
    from atomicchat import first_run

    draft = first_run.draft_path()
    assert draft is not None, "resources/smollm2/ lacks the SmolLM2 DFlash draft"

    class FirstRun(NoModels):
        def first_run_model(self):  # noqa: D102
            return smollm2_path

    w = make_window(smollm2_path, draft, timeout_ms=120_000, models=FirstRun())
    # its general.name is "Smollm2 135M 8k Lc100K Mix1 Ep2": the window says what it is
    assert w.model_label.text().startswith("Model: SmolLM2-135M-Instruct  ·  DFlash draft: ")
    # pinned length: what the draft accepts is then fixed by the greedy reply, not by how this
    # machine's timings steer the adaptive policy (the engine tests cover that policy)
    w.settings = replace(w.settings, max_tokens=120, temperature=0.0, use_draft=True, draft_max=3)
    send(qtbot, w, "Write a function that reads a file and counts lines", timeout_ms=300_000)
    reply = last_widget(w)
    assert reply.message.status == DONE
    assert reply.role.text() == "Assistant · SmolLM2-135M-Instruct"
    assert "def " in reply.text and "open(" in reply.text, reply.text  # greedy: a real Python function
    s = reply.stats
    assert s.used_draft and s.n_generated > 0 and s.n_drafted > 0 and s.n_accepted > 0
    assert reply.stats_bar.acceptance.text().startswith("acceptance ")
    stored = w.store.chats.messages(w.session.conversation_id)
    assert stored[-1].content == reply.text


def test_long_chat_leaves_out_oldest_turns_with_a_notice(make_window, qtbot, llama_pair):
    """A chat longer than the context keeps working: the oldest turns are left out, and the
    window says so (they stay saved)."""
    w = make_window(llama_pair.target, llama_pair.draft)
    _short(w, 8)
    n_ctx = w.ready.info.n_ctx
    chunk = "lorem ipsum " * (n_ctx // 6)
    for i in range(3):
        send(qtbot, w, f"{i} {chunk}")
        assert last_widget(w).message.status == DONE, w.notice.label.text()
    assert w.notice.isVisible() and w.notice.kind == "info"
    assert "did not fit the context window" in w.notice.label.text()
    assert len(w.store.chats.messages(w.session.conversation_id)) == 6


def test_smollm2_continued_reply_is_the_reply_it_would_have_written(make_window, qtbot, smollm2_path):
    """Continue goes on from the model's own text: greedy, 24 tokens and then 24 more read as the same
    48-token reply written at once (SmolLM2 re-tokenizes its own text to the tokens it wrote)."""
    from atomicchat.ui.chat.message_widget import LENGTH_TEXT

    w = make_window(smollm2_path, None, timeout_ms=120_000)
    prompt = "Explain what a hash map is."
    w.settings = replace(w.settings, max_tokens=24, temperature=0.0, sampling_from_model=False)
    send(qtbot, w, prompt, timeout_ms=300_000)
    cut = last_widget(w)
    assert cut.message.stats.finish_reason == "length" and cut.status.text() == LENGTH_TEXT
    part = cut.text
    cut.continue_button.click()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=300_000)
    continued = last_widget(w)
    assert continued.text.startswith(part) and len(continued.text) > len(part)
    assert continued.stats.n_generated == 48
    w.new_chat()
    w.settings = replace(w.settings, max_tokens=48)
    send(qtbot, w, prompt, timeout_ms=300_000)
    assert last_widget(w).text == continued.text
