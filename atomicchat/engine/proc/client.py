"""The app's side of the engine child: the Engine's interface over two pipes, with supervision.

A child that dies (abort, segfault, out-of-memory kill) or stops answering becomes an
`EngineCrashed` with a plain sentence, built from what llama.cpp printed last; the app stays up.
A cancel the child does not honour within CANCEL_GRACE_S ends it. close() ends it for sure, so a
model switch returns the old model's memory to the system.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from multiprocessing.connection import Connection
import re
import tempfile
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from atomicchat.engine import errors as engine_errors
from atomicchat.engine.errors import EngineError
from atomicchat.engine.proc import protocol as p
from atomicchat.engine.types import Finished, GenParams, Step

CANCEL_GRACE_S = 2.0  # a Stop the child does not honour in this time ends the child
CALL_TIMEOUT_S = 60.0  # tokenize / chat template: seconds, even on a huge prompt
STEP_TIMEOUT_S = 180.0  # no token for this long (prefill of a long prompt on a slow CPU included): hung
LOAD_TIMEOUT_S = 900.0  # loading many GB from a slow disk


class EngineCrashed(EngineError):
    """The engine process died or stopped answering; the model must be loaded again."""


class EngineStopped(EngineCrashed):
    """The app ended the engine process itself (`kill_all`, on exit while a load or a stuck call
    ran): nothing went wrong, so nothing is reported as a crash."""


_ASSERT_RE = re.compile(r"(GGML_ASSERT\(.*\) failed|GGML_ABORT.*|error: .*|terminate called .*|.*Killed.*)")


def _reason(stderr_tail: str, exitcode: int | None) -> str:
    """What to tell the user about a child that ended: llama.cpp's own line when it printed one."""
    hits = [m.group(0).strip() for m in _ASSERT_RE.finditer(stderr_tail)]
    if hits:
        return f"llama.cpp reported {hits[-1]}"
    if exitcode is not None and exitcode < 0:
        import signal

        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        if name == "SIGKILL":
            return "it was killed (SIGKILL; often the system running out of memory)"
        return f"it ended with {name}"
    return f"it exited with code {exitcode}"


_LIVE: weakref.WeakSet[EngineProcess] = weakref.WeakSet()


def kill_all() -> int:
    """End every engine child of this process now (app exit while a load or a hang is under way).
    What was waiting on one gets an EngineStopped, not a crash: the kill was ours."""
    n = 0
    for child in list(_LIVE):
        if child.alive():
            child._stopped = True
            child._kill()
            n += 1
    return n


class EngineProcess:
    """Drop-in for Engine(config, progress) that runs the engine in a child process."""

    def __init__(self, config: Any, progress: Callable[[str, float], None] | None = None) -> None:
        # A fresh interpreter (no Qt, no inherited threads) started as `atomicchat --engine-child`, so it
        # works the same from a checkout and from the installed bundle (sys.executable is then the app).
        req_r, req_w = os.pipe()
        ev_r, ev_w = os.pipe()
        fd, self._stderr_path = tempfile.mkstemp(prefix="atomicchat-engine-", suffix=".log")
        os.close(fd)
        cmd = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "atomicchat"]
        cmd += ["--engine-child", str(req_r), str(ev_w), self._stderr_path]
        # GGML_NO_BACKTRACE: on an assert, ggml would otherwise attach gdb for a backtrace (seconds of noise)
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "GGML_NO_BACKTRACE": "1"}
        self._proc = subprocess.Popen(cmd, pass_fds=(req_r, ev_w), env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=open(self._stderr_path, "ab"))  # noqa: SIM115
        os.close(req_r)
        os.close(ev_w)
        self._req = Connection(req_w, readable=False)
        self._ev = Connection(ev_r, writable=False)
        self._ids = itertools.count(1)
        self._closed = False
        self._stopped = False  # ended by kill_all
        _LIVE.add(self)
        self.config = config
        try:
            self._send(p.Load(config))
            while True:
                msg = self._recv(LOAD_TIMEOUT_S, "loading")
                if isinstance(msg, p.Progress):
                    if progress is not None:
                        progress(msg.stage, msg.value)
                elif isinstance(msg, p.Loaded):
                    self.info, self.n_ctx = msg.info, msg.n_ctx
                    break
                elif isinstance(msg, p.Failed):
                    raise self._error(msg)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ plumbing
    @property
    def pid(self) -> int | None:
        return self._proc.pid

    def alive(self) -> bool:
        return self._proc.poll() is None

    @property
    def exitcode(self) -> int | None:
        return self._proc.poll()

    def _send(self, msg: Any) -> None:
        try:
            self._req.send(msg)
        except (BrokenPipeError, EOFError, OSError) as exc:
            raise self._crashed("while it was sent a request") from exc

    def _poll(self, timeout: float, doing: str) -> Any | None:
        """The next event within `timeout` seconds, or None; EngineCrashed when the child has died."""
        try:
            if self._ev.poll(timeout):
                return self._ev.recv()
        except (EOFError, OSError) as exc:
            raise self._crashed(doing) from exc
        if not self.alive():
            try:
                if self._ev.poll(0):  # its last words arrived just before the end
                    return self._ev.recv()
            except (EOFError, OSError):
                pass
            raise self._crashed(doing)
        return None

    def _hung(self, doing: str, seconds: float) -> EngineCrashed:
        self._kill()
        return EngineCrashed(f"The model stopped answering while {doing} (nothing for {seconds:.0f} s), so its "
                             "process was ended. The chat is kept; reload the model to go on.")

    def _recv(self, timeout: float, doing: str) -> Any:
        """The next event; EngineCrashed when the child dies or says nothing for `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._hung(doing, timeout)
            msg = self._poll(min(left, 0.5), doing)
            if msg is not None:
                return msg

    def _stderr_tail(self, n: int = 8192) -> str:
        try:
            data = Path(self._stderr_path).read_bytes()[-n:]
        except OSError:
            return ""
        return data.decode("utf-8", errors="replace")

    def _crashed(self, doing: str) -> EngineCrashed:
        try:
            self._proc.wait(2.0)
        except subprocess.TimeoutExpired:
            self._kill()
        self._closed = True
        if self._stopped:
            return EngineStopped(f"The model was stopped while {doing}: the app is closing.")
        reason = _reason(self._stderr_tail(), self._proc.poll())
        return EngineCrashed(f"The model crashed while {doing}: {reason}. The chat is kept; reload the model to go on.")

    def _error(self, msg: p.Failed) -> Exception:
        cls = getattr(engine_errors, msg.error_type, None)
        if isinstance(cls, type) and issubclass(cls, EngineError):
            return cls(msg.message)
        if msg.error_type == "MemoryError":
            return MemoryError(msg.message)
        return EngineError(f"The engine failed ({msg.error_type}: {msg.message}).")

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        rid = next(self._ids)
        self._send(p.Call(rid, method, args, kwargs))
        while True:
            msg = self._recv(CALL_TIMEOUT_S, "preparing the prompt")
            if isinstance(msg, p.Reply) and msg.req_id == rid:
                return msg.value
            if isinstance(msg, p.Failed) and msg.req_id == rid:
                raise self._error(msg)

    # ------------------------------------------------------------------ the Engine's interface
    def chat_prompt(self, messages: list[dict[str, Any]], enable_thinking: bool | None = None,
                    tools: list[dict] | None = None) -> list[int]:
        return self._call("chat_prompt", messages, enable_thinking=enable_thinking, tools=tools)

    def render_chat(self, messages: list[dict[str, Any]], enable_thinking: bool | None = None,
                    tools: list[dict] | None = None) -> str:
        return self._call("render_chat", messages, enable_thinking=enable_thinking, tools=tools)

    def tokenize(self, text: str, add_special: bool = True) -> list[int]:
        return self._call("tokenize", text, add_special=add_special)

    def detokenize(self, tokens: list[int]) -> str:
        return self._call("detokenize", tokens)

    def reset(self) -> None:
        self._call("reset")

    def generate(
        self, prompt: list[int], params: GenParams = GenParams(), should_stop: Callable[[], bool] | None = None
    ) -> Iterator[Step | Finished]:
        """Steps as the child decodes them, then Finished. A stop request is passed on; if the
        child does not stop within CANCEL_GRACE_S it is ended (EngineCrashed)."""
        rid = next(self._ids)
        self._send(p.Generate(rid, list(prompt), params))
        stop = should_stop or (lambda: False)
        cancel_at: float | None = None
        last_event = time.monotonic()
        while True:
            now = time.monotonic()
            if cancel_at is None and stop():
                cancel_at = now
                self._send(p.Cancel(rid))
            if cancel_at is not None and now - cancel_at > CANCEL_GRACE_S:
                self._kill()
                raise EngineCrashed(f"The model did not stop within {CANCEL_GRACE_S:.0f} s, so its process was "
                                    "ended. The reply so far is kept; reload the model to go on.")
            if now - last_event > STEP_TIMEOUT_S:
                raise self._hung("writing the reply", STEP_TIMEOUT_S)
            msg = self._poll(0.05, "writing the reply")
            if msg is None:
                continue
            last_event = time.monotonic()
            if isinstance(msg, p.Steps) and msg.req_id == rid:
                yield from msg.steps
            elif isinstance(msg, p.Done) and msg.req_id == rid:
                yield msg.finished
                return
            elif isinstance(msg, p.Failed) and msg.req_id == rid:
                raise self._error(msg)

    # ------------------------------------------------------------------ lifetime
    def _kill(self) -> None:
        if self.alive():
            self._proc.kill()
        try:
            self._proc.wait(5.0)
        except subprocess.TimeoutExpired:
            pass
        self._closed = True

    def close(self, timeout: float = 2.0) -> None:
        """End the child (its memory goes back to the system); kill it if it does not stop in time."""
        if self.alive() and not self._closed:
            try:
                self._req.send(p.Shutdown())
            except (BrokenPipeError, EOFError, OSError):
                pass
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        self._kill()
        for conn in (self._req, self._ev):
            try:
                conn.close()
            except OSError:
                pass
        try:
            os.unlink(self._stderr_path)
        except OSError:
            pass

    def test_sleep(self, seconds: float) -> None:
        """Tests only: make the child stop answering for `seconds`."""
        self._send(p.Sleep(seconds))

    def __enter__(self) -> EngineProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
