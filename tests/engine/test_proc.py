"""The engine in its supervised child process: same tokens as in-process; a child killed, aborted by
a real GGML_ASSERT, hung or deaf to Stop becomes an EngineCrashed sentence; close ends the child."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from atomicchat import demo
from atomicchat.engine import Engine, EngineConfig, Finished, GenParams, Step
from atomicchat.engine import errors
from atomicchat.engine.errors import ModelFileError, PromptRefused
from atomicchat.engine.proc import EngineCrashed, EngineProcess, EngineStopped
from atomicchat.engine.proc import client as proc_client
from atomicchat.engine.tiny_models import TargetSpec, write_target


def _final(events) -> Finished:  # noqa: ANN001
    out = [e for e in events if isinstance(e, Finished)]
    assert len(out) == 1
    return out[0]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie still answers kill(0); it holds no memory
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


@pytest.mark.parametrize("which", ["llama", "demo"])
def test_child_gives_the_same_tokens_and_counts_as_in_process(which, llama_pair):
    if which == "demo":
        if not demo.demo_available():
            pytest.skip("no demo pair")
        cfg = EngineConfig(demo.demo_target_path(), demo.demo_draft_path(), n_ctx=1024, n_threads=1, draft_max=5)
    else:
        cfg = EngineConfig(llama_pair.target, llama_pair.draft, n_ctx=512, n_threads=1, draft_max=5)
    # A pinned draft length: the adaptive policy chooses from measured timings, which two processes
    # never share, so only a fixed length gives both the same drafted/accepted counts.
    messages = [{"role": "user", "content": "Write a class for a stack"}]
    with EngineProcess(cfg) as child, Engine(cfg) as ref:
        assert child.info == ref.info and child.n_ctx == ref.n_ctx
        assert child.chat_prompt(messages) == ref.chat_prompt(messages)
        assert child.tokenize("hello world") == ref.tokenize("hello world")
        prompt = ref.chat_prompt(messages)
        for params in (GenParams(max_tokens=60), GenParams(max_tokens=40, temperature=0.8, seed=7)):
            a, b = _final(child.generate(prompt, params)), _final(ref.generate(prompt, params))
            assert a.tokens == b.tokens and a.reason == b.reason
            assert (a.stats.n_drafted, a.stats.n_accepted) == (b.stats.n_drafted, b.stats.n_accepted)


def test_cancel_is_honoured_between_steps(llama_pair):
    cfg = EngineConfig(llama_pair.target, llama_pair.draft, n_ctx=2048, n_threads=1)
    with EngineProcess(cfg) as child:
        seen = []
        stop = lambda: len(seen) >= 3  # noqa: E731
        for ev in child.generate([1, 2, 3], GenParams(max_tokens=1500), should_stop=stop):
            seen.append(ev)
        assert isinstance(seen[-1], Finished) and seen[-1].reason == "cancelled"
        assert seen[-1].stats.n_generated < 1500 and child.alive()
        assert _final(child.generate([1, 2], GenParams(max_tokens=5))).stats.n_generated == 5  # still serving


def test_sigkill_mid_reply_is_a_sentence_and_a_new_child_works(llama_pair):
    cfg = EngineConfig(llama_pair.target, llama_pair.draft, n_ctx=4096, n_threads=1)
    child = EngineProcess(cfg)
    pid = child.pid
    with pytest.raises(EngineCrashed, match="crashed while writing the reply: it was killed") as e:
        for ev in child.generate([1, 2, 3], GenParams(max_tokens=3000)):
            if isinstance(ev, Step) and ev.stats.n_generated > 5:
                os.kill(pid, signal.SIGKILL)
    assert "reload the model" in str(e.value) and _gone(pid)
    child.close()
    with EngineProcess(cfg) as again:
        assert _final(again.generate([1, 2], GenParams(max_tokens=4))).stats.n_generated == 4


def test_real_ggml_assert_while_loading_names_llama_cpps_reason(tmp_path):
    bad = write_target(tmp_path / "zero-layers.gguf", TargetSpec(n_layer=0))
    t0 = time.monotonic()
    with pytest.raises((EngineCrashed, ModelFileError)) as e:
        EngineProcess(EngineConfig(bad, None, n_ctx=256, n_threads=1))
    if isinstance(e.value, EngineCrashed):  # no preflight refused it: llama.cpp aborted the child
        assert "crashed while loading: llama.cpp reported GGML_ASSERT(" in str(e.value)
        assert "n_layer" in str(e.value)
    assert time.monotonic() - t0 < 30


def test_sigabrt_and_a_hang_and_a_deaf_child(llama_pair, monkeypatch):
    cfg = EngineConfig(llama_pair.target, llama_pair.draft, n_ctx=4096, n_threads=1)
    with EngineProcess(cfg) as child:
        os.kill(child.pid, signal.SIGABRT)
        with pytest.raises(EngineCrashed, match="it ended with SIGABRT"):
            child.chat_prompt([{"role": "user", "content": "hi"}])
    monkeypatch.setattr(proc_client, "CALL_TIMEOUT_S", 1.0)
    with EngineProcess(cfg) as child:
        pid = child.pid
        child.test_sleep(30)  # stands in for llama.cpp spinning inside a decode
        t0 = time.monotonic()
        with pytest.raises(EngineCrashed, match="stopped answering"):
            child.tokenize("hi")
        assert time.monotonic() - t0 < 5 and _gone(pid)
    with EngineProcess(cfg) as child:
        pid = child.pid
        seen: list[object] = []
        frozen: list[bool] = []

        def stop() -> bool:
            if len(seen) >= 2 and not frozen:
                os.kill(pid, signal.SIGSTOP)  # frozen: it can neither decode nor hear the Stop
                frozen.append(True)
            return bool(frozen)

        t0 = time.monotonic()
        with pytest.raises(EngineCrashed, match="did not stop within 2 s"):
            for ev in child.generate([1, 2, 3], GenParams(max_tokens=3000), should_stop=stop):
                seen.append(ev)
        assert 1.5 < time.monotonic() - t0 < 8 and _gone(pid)


def test_close_ends_the_child_so_its_memory_is_returned(llama_pair):
    child = EngineProcess(EngineConfig(llama_pair.target, None, n_ctx=512, n_threads=1))
    pid = child.pid
    assert not _gone(pid)
    child.close()
    assert _gone(pid) and not child.alive()


def test_the_reason_names_llama_cpps_own_line():
    real = ("/tmp/pip-install-x/llama-cpp-python/vendor/llama.cpp/src/llama-model.cpp:1328: "
            "GGML_ASSERT(hparams.n_layer_all > 0 && hparams.n_layer_all <= LLAMA_MAX_LAYERS) failed\n")
    assert proc_client._reason(real, -6) == (
        "llama.cpp reported GGML_ASSERT(hparams.n_layer_all > 0 && hparams.n_layer_all <= LLAMA_MAX_LAYERS) failed")
    assert proc_client._reason("", -9).startswith("it was killed (SIGKILL")
    assert proc_client._reason("", -6) == "it ended with SIGABRT" and proc_client._reason("", 3) == "it exited with code 3"


def test_a_load_the_app_ends_on_exit_is_stopped_not_a_crash(llama_pair):
    """Quitting while a model loads ends its process after 3 s (EngineHost.close -> kill_all). That
    kill is the app's own: the load gives EngineStopped with a plain sentence, not a "crash" with
    SIGKILL blamed on memory (seen on a loaded CI box: a traceback on quitting the app)."""
    cfg = EngineConfig(llama_pair.target, llama_pair.draft, n_ctx=512, n_threads=1)
    pids: list[int] = []

    def progress(stage: str, value: float) -> None:  # the load is under way: the app quits now
        if not pids:
            pids.extend(c.pid for c in list(proc_client._LIVE) if c.alive())
            assert proc_client.kill_all() == 1

    with pytest.raises(EngineStopped, match="stopped while loading: the app is closing") as info:
        EngineProcess(cfg, progress=progress)
    assert "crashed" not in str(info.value) and "SIGKILL" not in str(info.value)
    assert len(pids) == 1 and _gone(pids[0])
    with EngineProcess(cfg) as child:  # a kill of its own is still a crash
        os.kill(child.pid, signal.SIGKILL)
        with pytest.raises(EngineCrashed, match="crashed") as crash:
            child.tokenize("hi")
        assert not isinstance(crash.value, EngineStopped)


def test_a_refused_prompt_crosses_the_process_as_the_same_sentence(llama_pair):
    """A PromptRefused (the request's fault, an HTTP 400 in the API) stays one in the parent, and
    chat.TemplateRefusal, defined outside engine.errors, arrives as its PromptRefused base."""
    from atomicchat.engine import chat

    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    msgs = [{"role": "user", "content": "hi"}]
    cfg = EngineConfig(llama_pair.target, None, n_ctx=256, n_threads=1)
    with EngineProcess(cfg) as child, Engine(cfg) as ref:
        with pytest.raises(PromptRefused) as in_process:
            ref.chat_prompt(msgs, tools=[tool])
        with pytest.raises(PromptRefused) as across:
            child.chat_prompt(msgs, tools=[tool])
        assert str(across.value) == str(in_process.value) and "no place for tools" in str(across.value)
        assert child.chat_prompt(msgs) == ref.chat_prompt(msgs) and child.alive()
    assert errors.wire_name(chat.TemplateRefusal("x")) == "PromptRefused"
    assert errors.wire_name(MemoryError()) == "MemoryError" and errors.wire_name(ModelFileError("x")) == "ModelFileError"
